/**
 * The Linux capabilities a sandbox keeps, on Docker (containerSpec.ts) and on Kubernetes (the runtime
 * API's pods with a given `command`, runtimeApi/kubernetesPods.ts). Every sandbox starts from none:
 * what is listed here is added back, and only for a command that runs as root.
 *
 * Why so few: a container keeps the engine's default set (NET_RAW among them), and with NET_RAW a
 * process in one sandbox opens packet sockets and forges ARP on the bridge it shares with its
 * neighbours: it can take a neighbour's address in the host's ARP cache and receive the owner's
 * requests to it, session key included (measured: docs/design-notes.md, "Neighbours on one
 * bridge"). NET_ADMIN would let it change its own addresses and routes. Neither is needed to run
 * commands, serve ports or reach the internet.
 */

/**
 * What a command running as root needs to do a root's ordinary work in its own image and nothing
 * of the network's: OpenHands' action server creates its user (`useradd`), gives it the workspace
 * (`chown -R`), opens the agent's shell as that user (`su`: SETUID, SETGID, AUDIT_WRITE for PAM's
 * record), signals the user's processes (KILL), installs packages (apt drops to `_apt`: SETUID,
 * SETGID; dpkg sets owners and modes: CHOWN, FOWNER, FSETID, DAC_OVERRIDE) and may serve on a low
 * port (NET_BIND_SERVICE). Left out of Docker's default set: NET_RAW (packet sockets, ARP), MKNOD
 * (device nodes), SYS_CHROOT, SETPCAP and SETFCAP (file capabilities, which `no-new-privileges`
 * would not honour anyway).
 */
export const ROOT_CAPABILITIES: ReadonlyArray<string> = [
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "NET_BIND_SERVICE",
  "SETGID",
  "SETUID"
]

/**
 * Whether a container's user (Docker's `User`, `name|uid[:group]`) may be root: unset (the image's
 * user, root in OpenHands' image) or named so. Our own server runs as the sandbox user and needs no
 * capability at all: the agent's shell, IPython, Chromium (`--no-sandbox`) and the init process run
 * as that user too.
 */
export const mayBeRoot = (user: string | undefined): boolean => {
  const name = user?.split(":")[0]
  return name === undefined || name === "" || name === "0" || name === "root"
}
