#!/usr/bin/env bash
# Makes a real, slower build of the runtime for the side-by-side gate's own tests and benchmarks:
# a copy of a ci/setup.sh prefix that keeps only ggml's pre-AVX CPU backend variants (sse42, x64), so
# ggml loads one of those instead of the variant it picks for this CPU. Real kernels, nothing
# simulated; the script prints which variant each build loads.
# Why not just drop the best variant: on an AMD EPYC without AVX-512 (2026-11-30) ggml loaded
# `haswell`, and the next one it falls back to, `piledriver`, was as fast (llama-bench pp512 on the
# realistic model, -t 2 -fa 1: haswell 1353 and 1701 t/s in two runs, piledriver 1595, sandybridge
# 1512): the AVX variants are alike there. The pre-AVX ones are clearly slower everywhere
# (sse42 309 t/s, x64 230 t/s on that machine).
#
# usage: ci/reduced-prefix.sh SOURCE_PREFIX DEST_PREFIX
# The copy is a tree of symbolic links into SOURCE_PREFIX, except the loader, which is copied:
# ggml looks for its backends beside the running executable (the loader, through /proc/self/exe).
set -euo pipefail
src=$(cd "$1" && pwd)
dst=$2
lib=usr/lib/x86_64-linux-gnu
[ -x "$src/usr/bin/llama-server" ] || { echo "reduced-prefix: $src/usr/bin/llama-server: not there (run ci/setup.sh)" >&2; exit 2; }

loaded_variant() {  # the libggml-cpu-*.so a prefix's llama-server loads here
  local p=$1 out
  out=$("$p/$lib/ld-linux-x86-64.so.2" --library-path "$p/$lib:$p/$lib/llama" "$p/usr/bin/llama-server" \
        -m /nonexistent.gguf --port 1 -v 2>&1 || true)
  sed -n 's/.*loaded CPU backend from .*\/libggml-cpu-\([a-z0-9_]*\)\.so.*/\1/p' <<<"$out" | head -1
}

best=$(loaded_variant "$src")
[ -n "$best" ] || { echo "reduced-prefix: $src: llama-server names no loaded CPU backend variant" >&2; exit 2; }
rm -rf "$dst.tmp" && mkdir -p "$dst.tmp"
cp -rs "$src/." "$dst.tmp/"
rm "$dst.tmp/$lib/ld-linux-x86-64.so.2" && cp "$src/$lib/ld-linux-x86-64.so.2" "$dst.tmp/$lib/"
removed=()
for f in "$dst.tmp/$lib"/libggml-cpu-*.so "$dst.tmp/$lib"/ggml/backends0/libggml-cpu-*.so; do
  v=$(basename "$f" .so); v=${v#libggml-cpu-}
  case $v in sse42 | x64) continue ;; esac
  rm -f "$f"
  case " ${removed[*]} " in *" $v "*) ;; *) removed+=("$v") ;; esac
done
now=$(loaded_variant "$dst.tmp")
if [ -z "$now" ] || [ "$now" = "$best" ]; then
  echo "reduced-prefix: the copy still loads '${now:-nothing}' (was $best): cannot make a slower build here" >&2
  rm -rf "$dst.tmp"; exit 2
fi
rm -rf "$dst" && mv "$dst.tmp" "$dst"
echo "reduced build: $dst: CPU backend $best -> $now (removed: ${removed[*]})"
