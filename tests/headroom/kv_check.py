#!/usr/bin/env python3
"""Puts flashproof's headroom lines beside llama.cpp's own KV cache lines and checks they agree.

usage: kv_check.py RESULT_TXT TIMED_LOG
Prints the run's headroom.* lines, then the runtime's `llama_kv_cache: size = ...` and `... KV buffer
size = ...` lines of the timed log. Exit 0 when flashproof's KV cache for the context it ran
(headroom.kv_cache_mib) equals what the runtime printed (its size line, else the sum of its buffer
lines) to the runtime's 2 decimals, the cells match, and the memory left and the context that fits
were measured; 1 otherwise, saying which.
"""
import re
import sys


def main(result_txt, timed_log):
    lines = open(result_txt, encoding="utf-8", errors="replace").read().splitlines()
    log = open(timed_log, encoding="utf-8", errors="replace").read()
    head = [l for l in lines if l.startswith("headroom")]
    for l in head:
        print("flashproof: " + l)
    size = re.findall(r"llama_kv_cache: size = +([\d.]+) MiB \( *(\d+) cells, +(\d+) layers, +(\d+)/(\d+) seqs\), K \((\w+)\): +([\d.]+) MiB, V \((\w+)\): +([\d.]+) MiB", log)
    bufs = re.findall(r"(\S+) KV buffer size = +([\d.]+) MiB", log)
    for m in re.findall(r".*(?:llama_kv_cache: size = |KV buffer size = ).*", log):
        print("llama.cpp:  " + m.strip())
    errors = []
    kv = next((l for l in head if l.startswith("headroom.kv_cache_mib = ")), None)
    if kv is None:
        errors.append("no headroom.kv_cache_mib line (headroom: %s)" % next((l for l in head), "none"))
    else:
        m = re.match(r"headroom\.kv_cache_mib = ([\d.]+) for (\d+) cells", kv)
        ours, cells = float(m.group(1)), int(m.group(2))
        if size:
            # N cells per KV stream; the second number of "n/s seqs" is the streams.
            theirs, their_cells = float(size[-1][0]), int(size[-1][1]) * int(size[-1][4])
            if their_cells != cells:
                errors.append("cells: flashproof %d, llama.cpp %d" % (cells, their_cells))
        elif bufs:
            theirs = sum(float(b[1]) for b in bufs)
        else:
            theirs = None
            errors.append("the runtime printed no KV cache line")
        if theirs is not None and abs(theirs - ours) > 0.0051:
            errors.append("KV cache: flashproof %.3f MiB, llama.cpp %.2f MiB" % (ours, theirs))
        if "agrees with the runtime's own" not in kv:
            errors.append("flashproof's own check does not say it agrees: " + kv)
    if not any(l.startswith("headroom.memory_left_mib.") for l in head):
        errors.append("no memory left measured")
    fit = next((l for l in head if l.startswith("headroom.context_fit_tokens = ")), "")
    m = re.match(r"headroom\.context_fit_tokens = (\d+)", fit)
    if not m:
        errors.append("no context that fits: " + fit)
    for e in errors:
        print("KV CHECK FAILED: " + e)
    if not errors:
        print("KV CHECK: flashproof and llama.cpp agree")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(64)
    sys.exit(main(sys.argv[1], sys.argv[2]))
