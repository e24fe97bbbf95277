#!/usr/bin/env bash
# A dry run of a device script on this CPU, before it costs device time: the work folder laid out as
# run_device.sh's setup leaves it (the prefix, library-path, probe-path), but with ci/setup.sh's sid
# prefix (the CPU build of the same llama.cpp) in place of the bundle's CUDA prefix. No GPU is used:
# the kernel probe cannot attach, so kernel figures are missing, but every step's command line, the
# wrappers, the timeouts and the packing run as on the device.
# usage (repository root, after cmake --build build and bundle_harness.sh):
#   FP_FIGURES_CONTEXT=2048 bash tests/gpu/llama-cuda/dry_run_on_cpu.sh figures_device.sh /tmp/dry-out ab gate:hostslow
# The model: fixtures/models/tiny.json's shape, written to build/dry-run.gguf (device scripts delete
# their model at the end), given to the scripts as FP_FIGURES_RECIPE / FP_SHAPES_RECIPE.
# env: FP_WORK (default /tmp/fp-dry-run; emptied first)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
script=$1; out=$2; shift 2
. /var/cache/flashproof/env.sh || { echo "no /var/cache/flashproof/env.sh: run ci/setup.sh" >&2; exit 1; }
export FP_WORK=${FP_WORK:-/tmp/fp-dry-run}
rm -rf "$FP_WORK"; mkdir -p "$FP_WORK"
ln -s "$FLASHPROOF_PREFIX" "$FP_WORK/prefix"
echo "$FLASHPROOF_LIBRARY_PATH" >"$FP_WORK/library-path"
echo "$FP_WORK/no-probe-on-a-cpu.so" >"$FP_WORK/probe-path"
python3 - "$root" <<'PY'
import json, sys
root = sys.argv[1]
r = json.load(open(root + "/fixtures/models/tiny.json"))
r.pop("sha256", None)
r.update(name="dry-run", output="build/dry-run.gguf")
json.dump(r, open(root + "/build/dry-run.json", "w"), indent=2)
PY
export FP_FIGURES_RECIPE=${FP_FIGURES_RECIPE:-build/dry-run.json}
exec bash "$here/$script" "$root/.gpu-bundle" "$out" "$@"
