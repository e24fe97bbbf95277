#!/usr/bin/env python3
"""Measures the CUPTI probe's cost on the SDPA workload: the same command with and without
CUDA_INJECTION64_PATH, interleaved (A B A B ...), N repetitions each, medians reported.

Three figures per run: the whole process's wall time (what a user of the runtime feels, CUDA and
CUPTI start-up included), the SDPA loop's GPU time (CUDA events), and the host time per tiny
kernel launch (a launch-bound loop, like token-by-token decode, where the activity API costs most).

Usage: probe_overhead.py --probe PROBE_SO [--reps 7] [--out FILE] [-- workload args...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_once(cmd, env):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"workload failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    done = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{") and '"done"' in l]
    if not done:
        sys.exit(f"workload printed no result line: {proc.stdout}")
    return wall, done[-1]


def summary(values):
    return f"median {statistics.median(values):9.4f}  min {min(values):9.4f}  max {max(values):9.4f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe", required=True)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out")
    ap.add_argument("workload", nargs="*", default=[])
    args = ap.parse_args()
    workload = args.workload or ["--dtype", "bf16", "--iters", "300", "--tiny-launches", "20000"]
    cmd = [sys.executable, os.path.join(HERE, "sdpa_workload.py")] + workload

    tmp = tempfile.mkdtemp(prefix="flashproof-overhead.")
    base_env = {k: v for k, v in os.environ.items() if k not in ("CUDA_INJECTION64_PATH", "FLASHPROOF_KERNEL_TALLY")}
    probe_env = dict(base_env, CUDA_INJECTION64_PATH=os.path.abspath(args.probe),
                     FLASHPROOF_KERNEL_TALLY=os.path.join(tmp, "tally-%p.tsv"))
    run_once(cmd, base_env)  # warm-up: page cache, GPU clocks, lazy module loading
    rows = {"without": [], "with": []}
    for i in range(args.reps):
        for name, env in (("without", base_env), ("with", probe_env)) if i % 2 == 0 else \
                         (("with", probe_env), ("without", base_env)):
            rows[name].append(run_once(cmd, env))

    lines = [f"command: {' '.join(cmd)}",
             f"repetitions: {args.reps} each, interleaved, after one warm-up run without the probe",
             f"probe: CUDA_INJECTION64_PATH={os.path.abspath(args.probe)}", ""]
    med = {}
    for name in ("without", "with"):
        wall = [r[0] for r in rows[name]]
        init = [r[1]["cuda_init_s"] for r in rows[name]]
        loop = [r[1]["ms_per_call"] for r in rows[name]]
        tiny = [r[1]["us_per_tiny_launch"] for r in rows[name] if r[1]["us_per_tiny_launch"] is not None]
        med[name] = (statistics.median(wall), statistics.median(init), statistics.median(loop),
                     statistics.median(tiny) if tiny else None)
        lines.append(f"{name} probe:")
        lines.append(f"  process wall s        {summary(wall)}")
        lines.append(f"  CUDA init s           {summary(init)}")
        lines.append(f"  SDPA ms per call      {summary(loop)}")
        if tiny:
            lines.append(f"  tiny launch us        {summary(tiny)}")
        lines.append("  raw wall s: " + " ".join(f"{w:.3f}" for w in wall))
    lines.append("")
    w, p = med["without"], med["with"]
    lines.append(f"overhead, medians: process wall {p[0] - w[0]:+.3f} s ({100 * (p[0] / w[0] - 1):+.1f}%), "
                 f"CUDA init {p[1] - w[1]:+.3f} s, SDPA per call {100 * (p[2] / w[2] - 1):+.2f}%"
                 + (f", tiny launch {p[3] - w[3]:+.2f} us ({100 * (p[3] / w[3] - 1):+.1f}%)" if w[3] and p[3] else ""))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
