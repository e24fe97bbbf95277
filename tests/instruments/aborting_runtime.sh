#!/usr/bin/env bash
# aborting_runtime.sh: a TEST DOUBLE around the real llama-server that aborts only under a given
# instrument, the way the real one aborted on the H200 (issue 25): the runtime's own assertion text on
# stderr, then SIGABRT (exit 134 in a shell). It never replaces the real runtime: everything it serves
# and logs is the real llama-server's (Debian sid's, through its own loader), and without the trigger
# variable it execs the real one unchanged.
#
# Environment:
#   FP_ABORT_UNDER   the variable whose presence makes it abort (an instrument's: GGML_VK_PERF_LOGGER,
#                    GGML_SCHED_DEBUG, FLASHPROOF_KERNEL_TALLY...); "always": abort in every launch (a
#                    runtime that crashes on its own); unset or empty: never abort
#   FP_ABORT_UNLESS  a variable whose presence keeps it from aborting (GGML_SCHED_DEBUG: abort in the
#                    timed configuration with the probe, the probed check, not in the evidence pass)
#   FP_ABORT_AT      request (default): when the real server starts its first task (its "processing
#                    task" line: the H200's abort came on the first request); start: before it is
#                    ready (a process that dies at injection, where the CUDA driver loads the probe)
#   FP_ABORT_TEXT    the line written to stderr before SIGABRT (default: the H200's words,
#                    "./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed")
#   FP_REAL_ENV      the file that says where the real llama-server is (default: ci/setup.sh's
#                    ${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh)
#   FP_REAL_RUNTIME  an executable to wrap instead (the replay double, for the probed check's probe)
set -u
if [ -n "${FP_REAL_RUNTIME:-}" ]; then
  real=("$FP_REAL_RUNTIME")
else
  env_file=${FP_REAL_ENV:-${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh}
  # shellcheck disable=SC1090
  . "$env_file" || { echo "aborting_runtime (test double): cannot read $env_file" >&2; exit 2; }
  real=("$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER")
fi
under=${FP_ABORT_UNDER:-}
text=${FP_ABORT_TEXT:-./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed}
triggered=0
if [ "$under" = always ]; then triggered=1; elif [ -n "$under" ] && [ -n "${!under+x}" ]; then triggered=1; fi
unless=${FP_ABORT_UNLESS:-}
if [ -n "$unless" ] && [ -n "${!unless+x}" ]; then triggered=0; fi
case " $* " in *" --version "* | *" --list-devices "*) triggered=0 ;; esac
[ "$triggered" = 1 ] || exec "${real[@]}" "$@"

ulimit -c 0  # no core file for the double's own abort
die_like_ggml() {
  printf '%s\n' "$text" >&2
  trap - ABRT
  kill -ABRT $$
}
if [ "${FP_ABORT_AT:-request}" = start ]; then
  echo "aborting_runtime (test double): $under is set: aborting before the runtime is ready" >&2
  die_like_ggml
fi

# The real server's output through a fifo read by this shell, which forwards it line by line and
# aborts on its first task. Both are one process group: flashproof stops the pair as one.
fifo=$(mktemp -u "${TMPDIR:-/tmp}/aborting-runtime.XXXXXX")
mkfifo "$fifo" || exit 2
"${real[@]}" "$@" >"$fifo" 2>&1 &
server=$!
exec 3<"$fifo"
rm -f "$fifo"
while IFS= read -r line <&3; do
  printf '%s\n' "$line"
  case $line in
    *"processing task"*)
      kill -KILL "$server" 2>/dev/null
      die_like_ggml
      ;;
  esac
done
wait "$server"
