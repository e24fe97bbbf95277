#!/usr/bin/python3
"""Reads generated GGUF files with llama.cpp's own reader (python3-gguf from Debian sid) and checks
that the quantized ones hold the same weights as the f16 one of the same recipe, within one
quantization step, with the tensor types and file type the weight type names.

usage: check_gguf.py F16.gguf TYPE=FILE.gguf...   (TYPE: q8_0, q4_0, q4_k)
Prints one line per file; exit 1 on the first mismatch."""
import sys

import numpy as np
from gguf import GGUFReader, GGMLQuantizationType as Q
from gguf.quants import dequantize

# type name -> (ggml type of 256-wide rows, general.file_type, bound on |quantized - f16| as a share of
# the block's range: half a step of 255 levels for q8_0, one step of 15 for the 4-bit types)
KINDS = {"q8_0": (Q.Q8_0, 7, 1 / 250), "q4_0": (Q.Q4_0, 2, 1 / 14), "q4_k": (Q.Q4_K, 14, 1 / 12)}


def tensors(path):
    r = GGUFReader(path)
    ft = int(r.fields["general.file_type"].parts[-1][0])
    return ft, {t.name: t for t in r.tensors}


def values(t):
    v = dequantize(t.data, t.tensor_type)
    return np.asarray(v, dtype=np.float32).reshape(-1)


def main():
    _, ref = tensors(sys.argv[1])
    for arg in sys.argv[2:]:
        kind, path = arg.split("=", 1)
        qtype, want_ft, share = KINDS[kind]
        ft, got = tensors(path)
        if ft != want_ft:
            sys.exit(f"{path}: general.file_type {ft}, expected {want_ft} for {kind}")
        if set(got) != set(ref):
            sys.exit(f"{path}: tensors differ from the f16 file's")
        worst, checked = 0.0, 0
        for name, t in got.items():
            if len(t.shape) < 2:
                continue  # the norms stay f32
            if t.tensor_type != qtype:
                sys.exit(f"{path}: {name} is {t.tensor_type.name}, expected {qtype.name}")
            a, b = values(ref[name]), values(t)
            block = 256 if qtype == Q.Q4_K else 32
            a2, b2 = a.reshape(-1, block), b.reshape(-1, block)
            rng = a2.max(axis=1) - a2.min(axis=1)
            err = np.abs(a2 - b2).max(axis=1)
            bad = err > rng * share + 1e-3 * rng + 1e-6
            if bad.any():
                i = int(np.argmax(bad))
                sys.exit(f"{path}: {name} block {i}: |quantized - f16| {err[i]:.6f} > {share:.4f} of the block's range {rng[i]:.6f}")
            worst = max(worst, float((err / np.maximum(rng, 1e-12)).max()))
            checked += 1
        print(f"{kind}: {path}: {checked} matrices {qtype.name}, file type {ft}, worst error {worst:.4f} of a block's range (bound {share:.4f})")


if __name__ == "__main__":
    main()
