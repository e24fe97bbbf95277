#!/usr/bin/env bash
# CPU check (runs in CI): the probe library exports InitializeInjection, the one symbol the CUDA
# driver looks up, and needs no library of flashproof's (it lives inside the runtime's process).
set -uo pipefail
probe=${1:?usage: probe_exports_test.sh PROBE_SO}
NM=${NM:-nm}
if ! syms=$("$NM" -D --defined-only "$probe" 2>&1); then
  echo "FAIL: $NM -D $probe: $syms"
  exit 1
fi
if ! grep -Eq '^[0-9a-f]+ T InitializeInjection$' <<<"$syms"; then
  echo "FAIL: $probe does not export InitializeInjection as a function; its dynamic symbols:"
  echo "$syms"
  exit 1
fi
if grep -q 'fp::\|flashproof' <<<"$("$NM" -DC --defined-only "$probe")" ; then
  echo "FAIL: $probe exports flashproof symbols (it must link to nothing of ours)"
  exit 1
fi
needed=$(objdump -p "$probe" 2>/dev/null | awk '/NEEDED/ {print $2}')
echo "exports InitializeInjection; needs: $(tr '\n' ' ' <<<"$needed")"
if grep -q flashproof <<<"$needed"; then
  echo "FAIL: $probe needs a flashproof library"
  exit 1
fi
grep -q '^libcupti' <<<"$needed" || { echo "FAIL: $probe does not link CUPTI"; exit 1; }
echo "PASS"
