#!/usr/bin/env python3
"""What would the gate have decided with another unit for a gated figure? (bench/README.md section 3)

Writes a copy of a recorded gate.json in which the gated figure FIGURE keeps its name but takes its
units from another figure every launch recorded (gate.json keeps them all: tpot_ms, server_tpot_ms,
e2e_ms, ...; or a per-launch number such as itl_gap_median_ms), and in which FIGURE is the only figure gated, so that `gate_replay` (bench/gate_replay.cpp)
re-judges that one figure look by look on the same launches. Nothing is launched.
  usage: bench/gate_swap_unit.py GATE.json OUT.json FIGURE UNIT
  e.g.   bench/gate_swap_unit.py gate.json /tmp/swap.json itl_ms tpot_ms && build/bench/gate_replay /tmp/swap.json
UNIT equal to FIGURE keeps the recorded unit (FIGURE alone, for a like-for-like comparison).
"""
import json
import sys


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 64
    src, dst, figure, unit = argv[1:]
    with open(src) as f:
        g = json.load(f)
    if not any(d.get("figure") == figure for d in g.get("gated", [])):
        print(f"{src}: gated: no figure {figure!r}; gated here: {[d.get('figure') for d in g.get('gated', [])]}",
              file=sys.stderr)
        return 65
    g["gated"] = [d for d in g["gated"] if d.get("figure") == figure]
    missing = 0
    for launch in g.get("launches", []):
        units = launch.get("units", {})
        if unit != figure:
            if unit in units:
                units[figure] = units[unit]
            elif isinstance(launch.get(unit), (int, float)):  # a per-launch field (itl_gap_median_ms)
                units[figure] = {"": launch[unit]}
            else:
                units.pop(figure, None)
                missing += 1
        for other in [k for k in units if k != figure]:
            units.pop(other)
    if missing:
        print(f"{src}: {missing} launch(es) without {unit}: left out of the replay", file=sys.stderr)
    with open(dst, "w") as f:
        json.dump(g, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
