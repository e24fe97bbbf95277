#!/usr/bin/env python3
"""Classifies a kernel-probe tally against tests/gpu/pytorch-sdpa.json and checks expectations.

Usage: check_sdpa_tally.py TALLY [--patterns FILE] [--expect-fused-flash | --expect-no-fused-flash]
                                 [--expect PATH]... [--forbid PATH]...
Prints, for every attention path in the pattern file, whether it matched, with the matching kernels,
their launches and their share of GPU time. Exit 0 when every expectation holds, 1 when one fails,
and 1 as well when the tally holds no evidence (no file header, probe refused or failed, no kernel
line): no evidence is never a pass.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_tally(path):
    """Returns (header dict, [(launches, ns, name)]) or raises ValueError naming the problem."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ValueError(f"{path}: no tally ({e.strerror}): the probe was not loaded "
                         "(CUDA_INJECTION64_PATH wrong, or the process never initialised CUDA)")
    if not lines or not lines[0].startswith("# flashproof-probe "):
        raise ValueError(f"{path}:1: expected a '# flashproof-probe v1|v2 ...' header, got {lines[:1]!r}")
    header = {}
    head = lines[0][len("# flashproof-probe "):]
    if " reason=" in head:
        head, reason = head.split(" reason=", 1)
        header["reason"] = reason
    for token in head.split()[1:]:
        key, _, value = token.partition("=")
        header[key] = value
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        if not line or line.startswith("#"):
            continue
        parts = line.split("\t", 2)
        if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
            raise ValueError(f"{path}:{n}: expected 'launches<TAB>gpu_ns<TAB>[device<TAB>]name', got {line[:120]!r}")
        device, _, name = parts[2].partition("\t")  # probe v2: a device column before the name
        if not (name and device.isdigit()):
            name = parts[2]
        rows.append((int(parts[0]), int(parts[1]), name))
    return header, rows


def classify(rows, patterns):
    """Returns {path: {"matched": bool, "kernels": [(launches, ns, name)], ...}}."""
    out = {}
    for path, spec in patterns["paths"].items():
        groups = [[p.lower() for p in g] for g in spec["all_of"]]
        kernels, satisfied = [], []
        for group in groups:
            hits = [r for r in rows if any(p in r[2].lower() for p in group)]
            satisfied.append(bool(hits))
            kernels.extend(h for h in hits if h not in kernels)
        out[path] = {"matched": all(satisfied), "kernels": kernels,
                     "fused_flash": bool(spec.get("fused_flash")), "description": spec.get("description", "")}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tally")
    ap.add_argument("--patterns", default=os.path.join(HERE, "pytorch-sdpa.json"))
    ap.add_argument("--expect-fused-flash", action="store_true", help="a fused flash-family path must match")
    ap.add_argument("--expect-no-fused-flash", action="store_true", help="no fused flash-family path may match")
    ap.add_argument("--expect", action="append", default=[], metavar="PATH", help="this path must match")
    ap.add_argument("--forbid", action="append", default=[], metavar="PATH", help="this path must not match")
    args = ap.parse_args()

    with open(args.patterns, encoding="utf-8") as f:
        patterns = json.load(f)
    for p in args.expect + args.forbid:
        if p not in patterns["paths"]:
            sys.exit(f"{args.patterns}: no path named {p!r}; valid: {', '.join(patterns['paths'])}")
    try:
        header, rows = load_tally(args.tally)
    except ValueError as e:
        print(f"FAIL: no evidence: {e}")
        return 1
    status = header.get("status", "?")
    print(f"tally: {args.tally}: status={status} state={header.get('state', '?')} "
          f"records={header.get('records', '?')} dropped={header.get('dropped', '?')} kernels={len(rows)}")
    if status != "ok":
        print(f"FAIL: no evidence: the probe reported status={status}: {header.get('reason', '(no reason)')}")
        return 1
    if not rows:
        print("FAIL: no evidence: the probe ran but recorded no kernel at all")
        return 1
    if header.get("dropped", "0") != "0":
        print(f"warning: CUPTI dropped {header['dropped']} records; launch counts are lower bounds")

    total_ns = sum(r[1] for r in rows) or 1
    result = classify(rows, patterns)
    for path, r in result.items():
        ns = sum(k[1] for k in r["kernels"])
        mark = "MATCH" if r["matched"] else "-----"
        print(f"{mark} {path:14s} {100.0 * ns / total_ns:5.1f}% of GPU time  ({r['description']})")
        for launches, kns, name in r["kernels"][:6]:
            print(f"        {launches:7d} launches {kns / 1e6:10.3f} ms  {name[:160]}")
    fused = [p for p, r in result.items() if r["matched"] and r["fused_flash"]]

    failures = []
    if args.expect_fused_flash and not fused:
        failures.append("expected a fused flash attention kernel, found none")
    if args.expect_no_fused_flash and fused:
        failures.append(f"expected no fused flash attention kernel, found: {', '.join(fused)}")
    failures += [f"expected path {p!r} to match, it did not" for p in args.expect if not result[p]["matched"]]
    failures += [f"path {p!r} matched, it must not" for p in args.forbid if result[p]["matched"]]
    if not any(r["matched"] for r in result.values()):
        failures.append("no attention path matched at all: the patterns do not describe this build's kernels")
    for f in failures:
        print(f"FAIL: {f}")
    if not failures:
        print("PASS: fused flash paths matched: " + (", ".join(fused) if fused else "none"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
