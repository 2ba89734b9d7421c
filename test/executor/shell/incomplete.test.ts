/** The quick lexer that spares `bash -n` for commands that surely close, checked against bash itself. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mayStayOpen, waitsForMoreInput } from "../../../src/executor/shell/incomplete.ts"

const CLOSED = [
  "echo hi",
  "echo 'hello world' \"and $HOME\" $'tab\\there'",
  "echo \"$(date +'%Y') `whoami`\" ${HOME:-/} $((1 + 2))",
  "for i in 1 2; do echo $i; done",
  "if [[ -f x ]]; then echo y; fi",
  "f() { echo a; }; f",
  "cat > f.py << 'EOF'\nprint(\"it's\")\nEOF\npython3 f.py",
  "cat <<-EOF\n\tbody\n\tEOF",
  "cat << A; cat << B\na\nA\nb\nB",
  "find . -name '*.ts' -exec grep -l x {} \\;",
  "echo a # it's a comment",
  "echo a | \\\n  wc -l",
  "diff <(ls a) <(ls b)"
]

const OPEN = [
  "cat << EOF",
  "cat << 'EOF'\nline",
  "echo \"abc",
  "echo 'abc",
  "echo $(date",
  "if true; then",
  "for i in 1; do",
  "echo a |",
  "true &&",
  "echo a \\",
  "{ echo a"
]

describe("incomplete commands", () => {
  it("the lexer rules out closed commands and keeps every open one for bash -n", () => {
    for (const command of CLOSED) assert.isFalse(mayStayOpen(command), command)
    for (const command of OPEN) assert.isTrue(mayStayOpen(command), command)
  })

  it.effect("the open ones wait for more lines, the closed ones and syntax errors do not", () =>
    Effect.gen(function*() {
      for (const command of OPEN) assert.isTrue(yield* waitsForMoreInput(command, "/bin/bash"), command)
      for (const command of CLOSED) assert.isFalse(yield* waitsForMoreInput(command, "/bin/bash"), command)
      assert.isFalse(yield* waitsForMoreInput("echo a\\\\", "/bin/bash"))
      assert.isFalse(yield* waitsForMoreInput("case x in x) echo y;; esac", "/bin/bash"))
      assert.isFalse(yield* waitsForMoreInput("echo a )", "/bin/bash"))
    }))
})
