#!/usr/bin/env python3
"""The gate's estimate checked against the runtime's own timings (bench/README.md section 3).

For every gate output folder (`gate-*`, holding baseline/block-N/timed.log and candidate/block-N/
timed.log, as `flashproof gate --out` and bench/gate_detection.sh leave them), llama-server's own
per-request lines are read:
    slot print_timing: ... prompt eval time =  16.75 ms /  396 tokens ( 0.04 ms per token, ...)
    slot print_timing: ... eval time =   5.50 ms /   16 tokens ( 0.37 ms per token, ...)
Per launch: the median ms per token of every request after the first (the cold one), for prompt
processing and for decode; with the gate's decode probes (a prompt of a token or so, served from the
cache), prompt processing from the full requests and decode from the probes, as the gate's itl_ms, and
the full requests' decode beside it (the peer of the gate's guard itl_requests_ms). Per block: log(candidate / baseline). Printed: each block's two ratios,
their mean over the blocks (a change the runtime itself saw; > 0 means the candidate slower) with a
t interval from the block spread, and the sd of the block values. Nothing of flashproof's clients or
statistics is used, so it is an outside check of the gate's TTFT and itl_ms estimates.
--pooled: per launch the total time over the total tokens of those requests instead (the launch's
mean per token: one stalled request weighs on it in full).
  usage: bench/gate_runtime_timings.py [--pooled] GATE_DIR...
"""
import glob
import json
import math
import os
import re
import statistics as st
import sys

PROBE_PROMPT_TOKENS = 8
LINE = re.compile(r"(prompt eval time|\beval time) =\s*([0-9.]+) ms /\s*([0-9]+) tokens")
# Student t 97.5% quantiles (df 1-30), the standard table; above 30, 30's (slightly wide).
T975 = [12.71, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131,
        2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042]


def launch_timings(log_path, pooled=False, probes_used=True):
    """Median ms per token (prompt, decode, the full requests' decode where the decode came from
    probes, else None) over a launch's requests after the first; pooled: the requests' total ms over
    their total tokens."""
    requests = []  # (prompt (ms, tokens), decode (ms, tokens)): llama-server prints the two in turn
    with open(log_path, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if not m:
                continue
            x = (float(m.group(2)), int(m.group(3)))
            if m.group(1).startswith("prompt"):
                requests.append([x, None])
            elif requests and requests[-1][1] is None:
                requests[-1][1] = x
    requests = [r for r in requests if r[1] and r[1][1] > 0][1:]
    # Decode probes (the gate's --decode-probes: the prompt again from the cache) have a prompt of a
    # token or so: prompt processing from the full requests only, decode from the probes where there
    # are any (the gate's itl_ms comes from them).
    full = [r for r in requests if r[0][1] > PROBE_PROMPT_TOKENS]
    # Without probes, a request whose prompt llama-server found whole in its own prompt cache (a chat
    # case without cache_prompt: false) still counts for decode; prompt processing stays with the
    # requests that processed their prompt.
    probes = [r for r in requests if r[0][1] <= PROBE_PROMPT_TOKENS] if probes_used else []
    prompt = [r[0] for r in full if r[0][1] > 0]
    decode = [r[1] for r in (probes or (full if probes_used else requests))]

    def per_token(xs):
        if not xs:
            return None
        if pooled:
            return sum(ms for ms, _ in xs) / sum(n for _, n in xs)
        return st.median(ms / n for ms, n in xs)
    return per_token(prompt), per_token(decode), per_token([r[1] for r in full]) if probes else None


def gate_used_probes(gate_dir):
    """Whether the gate sent decode probes: its gate.json keeps the full requests' unit
    (itl_requests_ms) beside the probes' only then. Without a gate.json, a request with a prompt of a
    token or so is taken for a probe (on a chat case, llama-server's own prompt cache can make a
    repeated prompt look like one)."""
    try:
        with open(os.path.join(gate_dir, "gate.json")) as f:
            return any("itl_requests_ms" in launch for launch in json.load(f).get("launches", []))
    except (OSError, ValueError):
        return True


def summarize(name, values):
    if len(values) < 2:
        return f"  {name}: {len(values)} block(s), too few"
    mean = st.mean(values)
    sd = st.stdev(values)
    half = T975[min(len(values) - 1, 30) - 1] * sd / math.sqrt(len(values))
    rel = lambda x: 100 * (math.exp(x) - 1)
    return (f"  {name}: candidate {rel(mean):+.1f}% (95% CI {rel(mean - half):+.1f}% .. {rel(mean + half):+.1f}%) "
            f"over {len(values)} blocks, block sd {100 * sd:.1f}%")


def main(args):
    pooled = "--pooled" in args
    dirs = [a for a in args if a != "--pooled"]
    if not dirs:
        print(__doc__)
        return 64
    for d in dirs:
        blocks = sorted({os.path.basename(p) for p in glob.glob(os.path.join(d, "baseline", "block-*"))},
                        key=lambda b: int(b.split("-")[1]))
        pr, dr, fr = [], [], []
        probes_used = gate_used_probes(d)
        print(d)
        for b in blocks:
            a = os.path.join(d, "baseline", b, "timed.log")
            c = os.path.join(d, "candidate", b, "timed.log")
            if not (os.path.exists(a) and os.path.exists(c)):
                continue
            (ap, ad, af), (cp, cd, cf) = launch_timings(a, pooled, probes_used), launch_timings(c, pooled, probes_used)
            line = f"  {b:>9}:"
            if ap and cp:
                pr.append(math.log(cp / ap))
                line += f" prompt {1000 * ap:7.2f} -> {1000 * cp:7.2f} us/token ({100 * math.expm1(pr[-1]):+5.1f}%)"
            if ad and cd:
                dr.append(math.log(cd / ad))
                line += f"  decode {ad:6.3f} -> {cd:6.3f} ms/token ({100 * math.expm1(dr[-1]):+5.1f}%)"
            if af and cf:
                fr.append(math.log(cf / af))
                line += f"  full requests' decode {af:6.3f} -> {cf:6.3f} ({100 * math.expm1(fr[-1]):+5.1f}%)"
            print(line)
        print(summarize("prompt processing (runtime's prompt eval time per token)", pr))
        print(summarize("decode (runtime's eval time per token)", dr))
        if fr:
            print(summarize("full requests' decode (runtime's eval time per token; the guard itl_requests_ms)", fr))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
