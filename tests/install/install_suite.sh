#!/usr/bin/env bash
# The installed flashproof and a suite of one's own, against the real llama-server (tests/install/
# CMakeLists.txt registers one CTest test per mode).
#
# usage: install_suite.sh MODE BUILD_DIR WORK_DIR
#   suite         `cmake --install --strip` into WORK_DIR/prefix (checks the layout and that the binary
#                 holds no path of this checkout), `flashproof init WORK_DIR/suite`, then in the suite
#                 `cmake -S . -B build -DCMAKE_PREFIX_PATH=<prefix>` and `ctest --test-dir build`: the
#                 example case must pass against the real llama-server. The fixture of the next mode.
#   results-diff  in that suite, the example case once more by the installed binary from cases/ (the
#                 suite found by walking up), as its CTest test ran it: the result.txt of the two runs
#                 may differ only in measured lines.
# Exit 0 pass, 1 fail (the working files are kept and named), 125 skipped (no llama-server here).
set -uo pipefail
mode=$1 build=$2 work=$3
prefix=$work/prefix suite=$work/suite
fail() { echo "FAIL (install $mode): $* (working files kept in $work)"; exit 1; }

if [ "$mode" = suite ]; then
  [ -x "$build/flashproof" ] || fail "no flashproof binary in $build"
  if ! "$build/flashproof" fingerprint >/dev/null 2>&1; then
    echo "SKIP: llama-server not found (run ci/setup.sh): $("$build/flashproof" fingerprint 2>&1 | tail -1)"
    exit 125
  fi
  rm -rf "$work" && mkdir -p "$work"
  start=$(date +%s)
  cmake --install "$build" --prefix "$prefix" --strip >"$work/install.txt" 2>&1 || fail "cmake --install: $(tail -5 "$work/install.txt")"
  for f in bin/flashproof share/flashproof/runtime/llama-server.json share/flashproof/prompts/chat/greeting.txt \
           share/flashproof/models/tiny.json share/flashproof/suite/CMakeLists.txt \
           lib/cmake/flashproof/flashproof-config.cmake lib/cmake/flashproof/FlashproofCases.cmake; do
    [ -f "$prefix/$f" ] || fail "not installed: $prefix/$f"
  done
  # Nothing may depend on where flashproof was built: no path of this checkout in the binary.
  source_dir=$(cd "$(dirname "$0")/../.." && pwd)
  if grep -aq -- "$source_dir" "$prefix/bin/flashproof"; then fail "the installed binary holds the checkout's path $source_dir"; fi

  "$prefix/bin/flashproof" init "$suite" >"$work/init.txt" 2>&1 || fail "flashproof init: $(cat "$work/init.txt")"
  cat "$work/init.txt"
  for f in flashproof-suite.json CMakeLists.txt README.md .gitignore cases/example-chat.json golden prompts/chat models/tiny.json; do
    [ -e "$suite/$f" ] || fail "flashproof init did not write $f"
  done
  grep -q "example case valid" "$work/init.txt" || fail "init did not validate the example case"
  # A second init into the same folder refuses and overwrites nothing.
  if "$prefix/bin/flashproof" init "$suite" >"$work/init2.txt" 2>&1; then fail "a second init into the suite succeeded"; fi
  grep -q "is a suite already" "$work/init2.txt" || fail "second init: $(cat "$work/init2.txt")"

  (cd "$suite" && cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.txt" 2>&1) ||
    fail "configuring the suite: $(tail -20 "$work/configure.txt")"
  (cd "$suite" && ctest --test-dir build --output-on-failure >"$work/ctest.txt" 2>&1)
  rc=$?
  cat "$work/ctest.txt"
  [ $rc -eq 0 ] || fail "the suite's ctest exited $rc"
  grep -Eq "case:example-chat \.+ +Passed" "$work/ctest.txt" || fail "case:example-chat did not pass"
  grep -q "100% tests passed" "$work/ctest.txt" || fail "not every test of the suite passed"
  echo "installed, initialised, configured and tested in $(( $(date +%s) - start )) s"
  exit 0
fi

if [ "$mode" = results-diff ]; then
  [ -f "$suite/flashproof-suite.json" ] || fail "no suite at $suite (the install:suite fixture failed)"
  # The suite's ctest ran case:example-chat; the same run once more, by hand from cases/ (the suite
  # found by walking up), into the same results folder: its history then holds both.
  (cd "$suite/cases" && "$prefix/bin/flashproof" run example-chat.json --results ../build/results-ci \
     --golden ../build/golden-ci --timing-golden ../golden --quiet >"$work/run.txt" 2>&1)
  rc=$?
  [ $rc -eq 0 ] || fail "the second run exited $rc: $(tail -5 "$work/run.txt")"
  case_dir=$(dirname "$(find "$suite/build/results-ci" -path '*/example-chat/latest' | head -1)")
  [ -n "$case_dir" ] && [ -e "$case_dir/previous/result.txt" ] || fail "no previous and latest run of example-chat"
  diff "$case_dir/previous/result.txt" "$case_dir/latest/result.txt" >"$work/result.diff"
  cat "$work/result.diff"
  # What was measured (timings, memory, the memory left and what it holds, who else held it, the
  # server's gauges) may differ; anything else (launch lines, paths, verdict, signals, answers) may not.
  measured='^[<>] (cold\.[a-z0-9_]+|figure\.[a-z0-9_.]+\.(p50|p95|p99|launch_medians)|fidelity|ttft\.split[a-z0-9_.]*|server_gauges\.[0-9]+|memory\.(host_peak_rss_mib|gpu)|headroom\.(memory_left_mib\.[A-Za-z0-9]+|more_tokens|context_fit_tokens|others\.[A-Za-z0-9]+|neighbour\.[^ ]+|deployed_context)) = '
  other=$(grep -E '^[<>] ' "$work/result.diff" | grep -Ev "$measured" || true)
  [ -z "$other" ] || fail "the two result.txt differ beyond measured lines:
$other"
  grep -Eq '^[<>] figure\.' "$work/result.diff" || fail "no figure differs: were both runs measured?"
  grep -q '{port}' "$case_dir/latest/result.txt" || fail "result.txt does not show {port}"
  grep -q '"timed_line"' "$case_dir/latest/result.json" && grep -q "\"suite\": \"$suite\"" "$case_dir/latest/result.json" ||
    fail "result.json lacks the launch line or the resolved suite"
  echo "two runs of example-chat differ only in measured lines ($(grep -c '^<' "$work/result.diff") lines)"
  exit 0
fi
echo "unknown mode $mode"; exit 64
