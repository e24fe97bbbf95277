#!/usr/bin/env python3
"""Block spread of every figure in side-by-side gate runs (gate.json files): per block the mean
log-ratio candidate/baseline over its prompts, then the standard deviation of those block values
and the MAD-based one (1.4826 MAD, which a burst block does not inflate), in percent, with every
block value. `itl_ms (per prompt, before)` is the unit itl_ms had before issue 22 (kept in gate.json
as itl_per_prompt_ms) and `itl_ms (gap median, before)` the one it had next (the median of every token
gap of a launch, kept as itl_gap_median_ms), so the units' spread shows on the same launches.

usage: bench/gate_block_spread.py GATE.json... [--figure NAME]
"""
import json
import math
import statistics as st
import sys


def block_values(launches, figure):
    by_block = {}
    for l in launches:
        u = l["units"].get(figure)
        if u:
            by_block.setdefault(l["block"], {})[l["arm"]] = u
    out = []
    for _, arms in sorted(by_block.items()):
        if len(arms) < 2:
            continue
        a, b = arms["baseline"], arms["candidate"]
        r = [math.log(b[p] / a[p]) for p in a if p in b and a[p] > 0 and b[p] > 0]
        if r:
            out.append(st.mean(r))
    return out


def main(argv):
    only = None
    paths = []
    it = iter(argv)
    for a in it:
        if a == "--figure":
            only = next(it)
        else:
            paths.append(a)
    if not paths:
        print(__doc__.strip())
        return 64
    for path in paths:
        j = json.load(open(path))
        launches = [l for l in j["launches"] if not l["errors"]]
        for l in launches:
            if l.get("itl_per_prompt_ms"):
                l["units"]["itl_ms (per prompt, before)"] = l["itl_per_prompt_ms"]
            if l.get("itl_gap_median_ms"):
                l["units"]["itl_ms (gap median, before)"] = {"": l["itl_gap_median_ms"]}
            if l.get("itl_requests_ms"):
                l["units"]["itl_ms (full requests, no probes)"] = {"": l["itl_requests_ms"]}
        figures = sorted({f for l in launches for f in l["units"]})
        print(f"{path}: {j['case']}, {j['blocks']} blocks in {j['wall_s']:.0f} s, {j['outcome']}")
        for f in figures:
            if only and not f.startswith(only):
                continue
            d = block_values(launches, f)
            if len(d) < 2:
                continue
            med = st.median(d)
            mad = st.median([abs(x - med) for x in d])
            blocks = " ".join("%+.1f" % (100 * math.expm1(x)) for x in d)
            print(f"  {f:28s} {len(d):3d} blocks  sd {100 * st.stdev(d):6.2f}%  MAD-sd {100 * 1.4826 * mad:6.2f}%  [{blocks}]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
