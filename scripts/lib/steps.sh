# shellcheck shell=bash
# Sourced by the install scripts (bootstrap, node-setup, package-vsix, vscode/install,
# agents/install, demo): long steps that never fail silently, always say how far they are, and
# leave no process behind.
#
#   run_step [--what TEXT] [--log FILE] [--hint TEXT] [--folder DIR] [--expect-mb N] -- CMD...
#       Runs CMD in the background in a process group of its own (setsid), its output appended
#       to FILE; every MEMLENS_PROGRESS_SECONDS (default 10) a line says the time, the MB in DIR
#       and the last line CMD itself wrote (never an earlier step's). On failure: the log's
#       tail, what failed with its exit code, the log's path and HINT (what to do); then exit 1.
#   run_part CMD...
#       Runs CMD (another script) in the foreground as far as the user sees, but so that a
#       signal to this script reaches it; returns its exit code.
#   fail TEXT [HINT]
#       Prints "PREFIX: TEXT" and the hint to stderr and exits 1.
#
# On exit, Ctrl-C or SIGTERM, the running step's whole process group (npm and what it started)
# and the running part are ended: TERM, then KILL after 5 s. Set STEPS_PREFIX before sourcing
# (the name the messages start with) and STEPS_SAY (a function name) to route progress lines
# elsewhere than stdout.

STEPS_PREFIX="${STEPS_PREFIX:-memlens}"
_steps_group=""   # the process group of the running step
_steps_part=""    # the pid of the running part

_steps_say() {
  if [ -n "${STEPS_SAY:-}" ]; then "$STEPS_SAY" "$*"; else echo "$*"; fi
}

_steps_end() {  # end the running step's group and the running part
  local target
  for target in ${_steps_group:+"-$_steps_group"} ${_steps_part:+"$_steps_part"}; do
    kill -TERM -- "$target" 2>/dev/null || continue
    local i
    for i in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 -- "$target" 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL -- "$target" 2>/dev/null || true
  done
  _steps_group=""
  _steps_part=""
}

_steps_on_signal() {
  local code="$1"
  trap - INT TERM
  echo "$STEPS_PREFIX: stopped (signal); ending what it had started" >&2
  _steps_end
  exit "$code"
}

trap '_steps_end' EXIT
trap '_steps_on_signal 130' INT
trap '_steps_on_signal 143' TERM

fail() {
  echo "$STEPS_PREFIX: $1" >&2
  if [ -n "${2:-}" ]; then echo "$STEPS_PREFIX: what to do: $2" >&2; fi
  exit 1
}

_steps_last_line() {  # the last printable line FILE got after byte OFFSET (or nothing)
  local file="$1" offset="$2"
  { tail -c +"$((offset + 1))" "$file" 2>/dev/null || true; } \
    | { grep -v -e nodedir -e '^=== ' -e '^[[:space:]]*$' || true; } \
    | { tail -n 1 || true; } | tr -cd '[:print:]' | cut -c1-110
}

run_step() {
  local what="" log="" hint="" folder="" expect_mb=""
  while [ "$#" -gt 0 ]; do
    case "$1" in
      --what) what="$2"; shift 2 ;;
      --log) log="$2"; shift 2 ;;
      --hint) hint="$2"; shift 2 ;;
      --folder) folder="$2"; shift 2 ;;
      --expect-mb) expect_mb="$2"; shift 2 ;;
      --) shift; break ;;
      *) fail "run_step: unknown option $1" ;;
    esac
  done
  [ -n "$what" ] || what="$1"
  if [ -z "$log" ]; then log=$(mktemp -t memlens-step-XXXXXX.log); fi
  mkdir -p "$(dirname "$log")"
  touch "$log"
  local every="${MEMLENS_PROGRESS_SECONDS:-10}" offset started=$SECONDS rc=0
  offset=$(stat -c %s "$log" 2>/dev/null || wc -c <"$log")
  echo "=== $what: $*" >>"$log"
  _steps_say "$STEPS_PREFIX: $what ..."
  if command -v setsid >/dev/null 2>&1; then
    setsid "$@" >>"$log" 2>&1 </dev/null &
  else
    "$@" >>"$log" 2>&1 </dev/null &
  fi
  local pid=$!
  _steps_group=$pid
  while kill -0 "$pid" 2>/dev/null; do
    local waited=0
    while [ "$waited" -lt "$every" ] && kill -0 "$pid" 2>/dev/null; do
      sleep 1
      waited=$((waited + 1))
    done
    kill -0 "$pid" 2>/dev/null || break
    local mb="" last
    if [ -n "$folder" ] && [ -d "$folder" ]; then
      # (files come and go while npm works: du may complain, which is no failure)
      mb=$({ du -sm "$folder" 2>/dev/null || true; } | { cut -f1 || true; } | tail -n 1)
    fi
    last=$(_steps_last_line "$log" "$offset")
    _steps_say "$STEPS_PREFIX:   ... $what: $((SECONDS - started)) s${mb:+, $mb MB}${expect_mb:+ of ~$expect_mb MB}${last:+ (last: $last)}"
  done
  wait "$pid" || rc=$?
  _steps_group=""
  if [ "$rc" != 0 ]; then
    # any process the step left in its group goes too
    kill -KILL -- "-$pid" 2>/dev/null || true
    echo "----- the last lines of $log:" >&2
    { tail -c +"$((offset + 1))" "$log" || true; } | { grep -v nodedir || true; } | tail -n 40 >&2
    echo "-----" >&2
    echo "$STEPS_PREFIX: FAILED: $what (exit code $rc, after $((SECONDS - started)) s); full log: $log" >&2
    if [ -n "$hint" ]; then echo "$STEPS_PREFIX: what to do: $hint" >&2; fi
    exit 1
  fi
  _steps_say "$STEPS_PREFIX: $what done in $((SECONDS - started)) s"
}

run_part() {
  local rc=0
  "$@" </dev/null &
  _steps_part=$!
  wait "$_steps_part" || rc=$?
  _steps_part=""
  return "$rc"
}
