#!/usr/bin/env python3
"""Do the arms of recorded identical-build trials differ more than chance says?

Reads launches as `session trial arm value...` (fixtures/logs/gate-interleaved/generic-launches.txt:
the launch's median TTFT per prompt). Per trial: the difference of the arms' mean log value (the
launch's mean over its prompts), its standard error from the launches' pooled spread, z = diff / se.
With no per-trial structure, the sum of z^2 over trials is about chi-square with one degree of
freedom per trial. This uses the launches only, not the gate's estimate, so it can tell a trial
whose arms really differed from an estimator whose interval was too narrow.

usage: recorded_arm_dispersion.py [LAUNCHES.txt]
"""
import collections
import math
import statistics
import sys


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "fixtures/logs/gate-interleaved/generic-launches.txt"
    arms = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            session, trial, arm, *values = line.split()
            arms[(session, int(trial))][arm].append(statistics.mean(math.log(float(v)) for v in values))
    total, trials = 0.0, 0
    for key in sorted(arms):
        a, b = arms[key].get("baseline", []), arms[key].get("candidate", [])
        if len(a) < 2 or len(b) < 2:
            continue
        pooled = ((len(a) - 1) * statistics.variance(a) + (len(b) - 1) * statistics.variance(b)) / (len(a) + len(b) - 2)
        diff = statistics.mean(b) - statistics.mean(a)
        z = diff / math.sqrt(pooled * (1 / len(a) + 1 / len(b)))
        total += z * z
        trials += 1
        print(f"{key[0]} {key[1]:>3}: {len(a):3d}+{len(b):3d} launches, candidate {100 * math.expm1(diff):+6.1f}%, z {z:+.2f}")
    # chi-square with k degrees of freedom: mean k, standard deviation sqrt(2k).
    print(f"sum of z^2 {total:.1f} on {trials} trials (chance alone: {trials} +- {math.sqrt(2 * trials):.0f})")

if __name__ == "__main__":
    main()
