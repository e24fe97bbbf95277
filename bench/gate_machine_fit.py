#!/usr/bin/env python3
"""How much of a side-by-side gate run's block spread the machine-speed reference explains.

For each gate.json (recorded with the reference timed through every launch:
`machine_throughput_samples_ms`): per block, the log-ratio candidate/baseline of each figure
(itl_ms, the geometric mean over prompts of ttft_ms and server_tpot_ms) and of the two launches'
median reference; then per figure the correlation r with the reference's log-ratio, the
least-squares slope, and the block spread (sd of the log-ratios) before and after the slope is
taken out. The gate itself fits a Theil-Sen slope within each order and trims (measure/paired_stats.h);
this is the plain view of the same launches (bench/README.md section 3).
usage: bench/gate_machine_fit.py GATE.json...
"""
import json
import math
import statistics as st
import sys


def per_launch(l):
    u = l["units"]
    s = l.get("machine_throughput_samples_ms") or []
    return {
        "itl_ms": list(u["itl_ms"].values())[0],
        "ttft_ms": st.geometric_mean(u["ttft_ms"].values()),
        "server_tpot_ms": st.geometric_mean(u["server_tpot_ms"].values()),
        "machine": st.median(s) if s else None,
    }


for path in sys.argv[1:]:
    blocks = {}
    for l in json.load(open(path))["launches"]:
        if not l.get("errors"):
            blocks.setdefault(l["block"], {})[l["arm"]] = per_launch(l)
    rows = [{k: math.log(v["candidate"][k] / v["baseline"][k]) for k in v["baseline"]}
            for _, v in sorted(blocks.items())
            if len(v) == 2 and v["baseline"]["machine"] and v["candidate"]["machine"]]
    print(f"{path}: {len(rows)} blocks with the reference in both launches")
    if len(rows) < 3:
        continue
    x = [r["machine"] for r in rows]
    for fig in ("itl_ms", "ttft_ms", "server_tpot_ms"):
        y = [r[fig] for r in rows]
        slope = st.linear_regression(x, y).slope
        after = [b - slope * a for a, b in zip(x, y)]
        print(f"  {fig}: r {st.correlation(x, y):+.2f}, slope {slope:.2f}, block sd {st.stdev(y):.3f} -> {st.stdev(after):.3f}")
