/**
 * The Promise API (`effect-sandbox/promise`), for code not written in Effect:
 * `npm run example:promise`. A sandbox on LocalRuntime, a command with its output streamed, a file
 * written exactly and read back, a failure caught by its tag, and the sandbox closed at the end of
 * the block.
 */
import { Sandbox, SandboxError } from "../src/promise.ts"

{
  await using sandbox = await Sandbox.create("local")
  console.log(`a ${sandbox.info.kind} sandbox`)

  const result = await sandbox.commands.run("echo hello from $(uname -s); echo warning >&2; exit 3", {
    onStdout: (text) => process.stdout.write(`stdout: ${text}`),
    onStderr: (text) => process.stdout.write(`stderr: ${text}`)
  })
  console.log(`exit code ${result.exitCode}, timed out: ${result.timedOut}`)

  await sandbox.files.write("notes.txt", "no trailing newline")
  console.log(`read back: ${JSON.stringify(await sandbox.files.read("notes.txt"))}`)
  console.log(`workspace: ${(await sandbox.files.list()).join(" ")}`)

  try {
    await sandbox.files.read("missing.txt")
  } catch (error) {
    if (!(error instanceof SandboxError)) throw error
    console.log(`${error._tag}: ${error.message.replaceAll(sandbox.info.workspace, "<workspace>")}`)
  }
}
console.log("closed")
