#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite: unit tests, the cases against the
# real llama-server, integration and self-tests. GPU tests skip here with a reason when no GPU.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fp_build
cd "$FP_BUILD"
rc=0
ctest --output-on-failure -j2 --timeout 900 --output-junit "$FP_BUILD/junit.xml" "$@" || rc=$?
# CTest leaves JUnit failure messages empty: fill them with each case's explanation.
"$FP_BUILD/flashproof" report --junit "$FP_BUILD/junit.xml" >/dev/null || echo "note: could not fill JUnit messages" >&2
exit $rc
