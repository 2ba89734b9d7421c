/**
 * The shell halves of the git helpers. They run in the sandbox (whatever it has: bash, git,
 * coreutils) in one round trip each, and print `@@OH <key> <base64>` lines that `git.ts` parses:
 * base64 so file contents and odd path bytes survive the terminal unchanged.
 */

/**
 * OpenHands' `get_valid_ref`: the first ref that resolves among `origin/<current branch>`, the
 * merge base with the remote's default branch, that branch, and git's empty tree.
 */
const VALID_REF = `
export GIT_TERMINAL_PROMPT=0
oh_emit() { printf '@@OH %s %s\\n' "$1" "$(printf '%s' "$2" | base64 -w0)"; }
oh_ref() {
  local branch head r
  local -a refs=()
  if branch=$(git --no-pager rev-parse --abbrev-ref HEAD 2>/dev/null); then refs+=("origin/$branch"); fi
  if head=$(git --no-pager remote show origin 2>/dev/null | grep "HEAD branch"); then
    head=\${head##* }
    refs+=("$(git --no-pager merge-base HEAD "$(git --no-pager rev-parse --abbrev-ref "origin/$head" 2>/dev/null)" 2>/dev/null)")
    refs+=("origin/$head")
  fi
  refs+=(4b825dc642cb6eb9a060e54bf8d69288fbee4904)
  for r in "\${refs[@]}"; do
    if [ -n "$r" ] && git --no-pager rev-parse --verify "$r" 2>/dev/null; then return 0; fi
  done
  return 1
}
# Runs "$@"; on failure emits OpenHands' error_running_cmd:<code>:<stderr, else stdout> and fails.
oh_run() {
  local key=$1 out err code errfile
  shift
  errfile=$(mktemp)
  out=$("$@" 2>"$errfile")
  code=$?
  err=$(cat "$errfile")
  rm -f "$errfile"
  if [ "$code" -ne 0 ]; then oh_emit error "error_running_cmd:$code:\${err:-$out}"; return 1; fi
  oh_emit "$key" "$out"
}
`

/** Changes of the repository in the current directory and of each direct child repository. */
export const GIT_CHANGES_SCRIPT = `${VALID_REF}
oh_repo() {
  local ref
  ref=$(cd "$1" && oh_ref) || return 0
  oh_emit repo "$1"
  (cd "$1" && oh_run diff git --no-pager diff --name-status "$ref" && oh_run untracked git --no-pager ls-files --others --exclude-standard)
}
oh_repo . || exit 0
for git in ./*/.git; do
  [ -e "$git" ] || continue
  dir=\${git%/.git}
  dir=\${dir#./}
  oh_emit child "$dir"
  oh_repo "$dir" || exit 0
done
`

/** The file `$OH_FILE` (relative to the current directory) now and at the valid ref of its repository. */
export const GIT_DIFF_SCRIPT = `${VALID_REF}
file=$(realpath -m -- "$OH_FILE")
if [ -e "$file" ] && [ "$(stat -c %s -- "$file")" -gt 1048576 ]; then oh_emit error file_to_large; exit 0; fi
dir=$(dirname -- "$file")
repo=
while :; do
  if [ -d "$dir/.git" ]; then repo=$dir; break; fi
  [ "$dir" = / ] && break
  dir=$(dirname -- "$dir")
done
if [ -z "$repo" ]; then oh_emit error no_repository; exit 0; fi
cd "$repo" || exit 1
ref=$(oh_ref) || ref=None
rel=\${file#"\${repo%/}"/}
if original=$(git show "$ref:$rel" 2>/dev/null); then oh_emit original "$original"; else oh_emit original ""; fi
if [ -f "$file" ]; then printf '@@OH modified %s\\n' "$(base64 -w0 < "$file")"; else oh_emit modified ""; fi
`
