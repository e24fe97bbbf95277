#!/usr/bin/env bash
# The clean compile of the flashproof target, no compiler cache, as a fresh box meets it (issue 23):
# per COMMIT (default: HEAD~1 and HEAD) and per number of unity groups (UNITY_GROUPS, default "2"; a commit
# from before the groups, 27be138 and older, keeps its own batches and ignores it), a clone of this
# repository, a RelWithDebInfo configure, then
# `cmake --build -j2 --target flashproof`, timed. Prints one table: commit, groups, exit status,
# wall s, CPU s (user + sys of the build and its compilers), the load average before and after.
# Run it on a quiet machine: the wall time is what a contended 2-core box slows most.
# usage: [UNITY_GROUPS="2 4"] bench/compile_time.sh [WORK_DIR] [COMMIT...]   (WORK_DIR default /tmp/fp-compile-time)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/fp-compile-time}; shift || true
commits=("$@"); ((${#commits[@]})) || commits=(HEAD~1 HEAD)
mkdir -p "$work"
rows=()
for c in "${commits[@]}"; do
  sha=$(git -C "$here" rev-parse --short "$c") || { echo "no commit $c" >&2; exit 64; }
  src=$work/$sha/src
  rm -rf "$work/$sha" && git clone -q --no-local "$here" "$src" && git -C "$src" checkout -q "$sha" || exit 1
  for batch in ${UNITY_GROUPS:-2}; do
    b=$work/$sha/build-$batch
    export CCACHE_DISABLE=1
    env -u CMAKE_CXX_COMPILER_LAUNCHER cmake -S "$src" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DFLASHPROOF_UNITY_GROUPS="$batch" >"$work/$sha/configure-$batch.txt" 2>&1 || exit 1
    load0=$(cut -d' ' -f1-3 /proc/loadavg)
    # CPU of the children (the compilers): /usr/bin/time's user + sys of the build command.
    /usr/bin/time -f '%e %U %S' -o "$work/$sha/time-$batch.txt" cmake --build "$b" -j2 --target flashproof \
      >"$work/$sha/build-$batch.txt" 2>&1
    rc=$?
    load1=$(cut -d' ' -f1-3 /proc/loadavg)
    read -r wall user sys <"$work/$sha/time-$batch.txt"
    rows+=("$(printf '%-9s %5s %4s %7s %7s  %-16s %-16s' "$sha" "$batch" "$rc" "$wall" "$(echo "$user + $sys" | bc)" "$load0" "$load1")")
  done
done
printf '%-9s %5s %4s %7s %7s  %-16s %-16s\n' commit groups exit "wall s" "CPU s" "load before" "load after"
printf '%s\n' "${rows[@]}"
