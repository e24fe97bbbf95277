#!/usr/bin/env python3
"""Builds tests/report/fixture/ from real flashproof results (kept as committed data; rerun only to
refresh it): a results tree with a history of chat-tiny-short across two llama-server builds (the
later one about 22% slower on TTFT, so the trend shows the step), the failing self-test case, an A/B
run (a real ab.json when given, else one assembled in the schema of src/report/ab_report.cpp from the
two real runs) and the golden the runs were compared with. Paths to the golden are written as @FIXTURE@, which the render
test replaces with the fixture's copy.

usage: make_fixture.py RESULTS_ROOT GOLDEN_FINGERPRINT_DIR OUT [REAL_AB_JSON]
With REAL_AB_JSON (from `flashproof ab`), that file is the fixture's A/B run instead of the assembled one."""
import copy, glob, json, os, shutil, sys

src_root, golden_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(out, ignore_errors=True)
res = os.path.join(out, "results")
fp_new = os.path.basename(golden_dir.rstrip("/"))
fp_old = fp_new.rsplit("-", 1)[0] + "-11600"

def load(case):
    return [json.load(open(p)) for p in sorted(glob.glob(f"{src_root}/*/{case}/*/result.json"))]

base = load("chat-tiny-short")[-1]
fail = load("chat-tiny-fa-off-expects-on")[-1]
history = []

def put(fp, case, stamp, r, finished):
    d = os.path.join(res, fp, case, stamp)
    os.makedirs(d, exist_ok=True)
    r["fingerprint"] = fp
    r["golden"]["dir"] = "@FIXTURE@/golden/" + fp_new
    json.dump(r, open(os.path.join(d, "result.json"), "w"), indent=2)
    history.append(f"{finished}\t{fp}\t{case}\t{r['status']}\t{fp}/{case}/{stamp}")

def scaled(r, k, build, i):
    r = copy.deepcopy(r)
    r["runtime"]["build"] = build
    for name, f in r["figures"].items():
        up = name.endswith("_ms") or name.endswith("_p95")
        f["samples"] = [s * (k if up else 1 / k) * (1 + 0.01 * ((i * 7 + j) % 5 - 2)) for j, s in enumerate(f["samples"])]
        xs = sorted(f["samples"]); f["p50"] = xs[len(xs) // 2]; f["p95"] = xs[int(0.95 * (len(xs) - 1))]
    return r

for i in range(5):
    put(fp_old, "chat-tiny-short", f"202611{20+i}T010000Z-{100+i}", scaled(base, 1.0, "11600", i), f"2026-11-{20+i}T01:00:30Z")
for i in range(4):
    put(fp_new, "chat-tiny-short", f"202611{25+i}T010000Z-{200+i}", scaled(base, 1.22, "11669", i), f"2026-11-{25+i}T01:00:30Z")
put(fp_new, "chat-tiny-fa-off-expects-on", "20261128T010100Z-300", copy.deepcopy(fail), "2026-11-28T01:01:30Z")
history.sort()
open(os.path.join(res, "history.tsv"), "w").write("".join(h + "\n" for h in history))

# An A/B run: arm off from the flash-attention-off run, arm on from the on run.
on_f, off_f = base["figures"], fail["figures"]
def arm(name, flag, verdict, figs, compute):
    return {"flag_value": flag,
            "evidence": {"verdict": verdict, "backend": "CPU 30", "levels_used": ["log", "placement"], "as_required": True,
                         "explanation": "", "quotes": [], "signals": f"flash attention {'enabled' if flag == 'on' else 'disabled'}; graph splits 1",
                         "signal_mismatches": []},
            "launches": 5,
            "figures": {k: {"n": len(v["samples"]), "p50": v["p50"], "p95": v["p95"], "samples": v["samples"]} for k, v in figs.items()},
            "memory": {"kv_buffer_mib": {"CPU": 1.0}, "compute_buffer_mib": {"CPU": compute}, "gpu": "not measured"},
            "sustained": {"ran": False}, "answers": {}, "unstable_answers": [], "errors": []}
def med(xs): xs = sorted(xs); return xs[len(xs) // 2]
figs = []
for k in on_f:
    if k not in off_f: continue
    a, b = med(off_f[k]["samples"]), med(on_f[k]["samples"])
    figs.append({"figure": k, "gate": k == "ttft_ms_p95", "headline": k == "ttft_ms_p95",
                 "direction": on_f[k]["direction"], "n_off": len(off_f[k]["samples"]), "n_on": len(on_f[k]["samples"]),
                 "median_off": a, "median_on": b, "diff": b - a, "diff_rel": (b - a) / a if a else None,
                 "ci95": [None, None], "mann_whitney_p": None, "verdict": "within_noise", "effect": "within noise",
                 "too_few_repetitions": True, "repetitions_needed": None, "explanation": "fixture: samples from two real single runs"})
ab = {"case": "chat-tiny-short", "job": "chat", "runtime": base["runtime"], "fingerprint": fp_new,
      "decision": {"exit_code": 0, "complete": True, "text": "fixture A/B: flag off vs on from two real runs", "failures": []},
      "gates": [], "arms": {"off": arm("off", "off", "not active", off_f, 8.52), "on": arm("on", "on", "active", on_f, 4.27)},
      "figures": figs, "mechanism": [], "unpredicted": [], "answers": {"same_system": "fixture", "prompts": []}}
if len(sys.argv) > 4:
    ab = json.load(open(sys.argv[4]))
d = os.path.join(res, fp_new, "chat-tiny-short", "ab-20261128T020000Z-400")
os.makedirs(d); json.dump(ab, open(os.path.join(d, "ab.json"), "w"), indent=2)

os.makedirs(os.path.join(out, "golden", fp_new))
shutil.copy(os.path.join(golden_dir, "chat-tiny-short.json"), os.path.join(out, "golden", fp_new, "chat-tiny-short.json"))
