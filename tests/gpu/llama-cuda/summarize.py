#!/usr/bin/env python3
"""Summarises the llama-server runs made by run_device.sh: per run the backend the log says was
loaded, graph splits, where the FLASH_ATTN / SOFT_MAX nodes were placed (GGML_SCHED_DEBUG=2 runs),
the probe's header and the attention kernels (patterns of src/runtime/data/llama-server.json), and per
configuration whether the verbose and the quiet run executed the same set of attention kernel names.
A quick reading on the device; `flashproof explain` gives the verdicts.

usage: summarize.py RUNS_DIR PATTERNS_JSON"""
import collections
import glob
import gzip
import json
import os
import re
import sys

PLACE = re.compile(r'node #\s*\d+ \(\s*(FLASH_ATTN|SOFT_MAX)\s*\): .{20} \(.{5}\) \[\s*([^ \]]+)')


def read_log(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt', errors='replace') as f:
        return f.read()


def tally(path):
    header, rows = None, []
    if not os.path.exists(path):
        return 'no tally file (probe not loaded?)', rows
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        if line.startswith('#'):
            header = line
        elif line:
            n, ns, name = line.split('\t', 2)
            device, _, rest = name.partition('\t')  # probe v2: a device column before the name
            if rest and device.isdigit():
                name = rest
            rows.append((int(n), int(ns), name))
    return header, rows


def main():
    runs, pat_file = sys.argv[1], sys.argv[2]
    sigs = json.load(open(pat_file))['evidence']['kernels']
    fused = [re.compile(k['pattern']) for k in sigs if k['kind'] == 'fused_kernel']
    unfused = [re.compile(k['pattern']) for k in sigs if k['kind'] == 'unfused_kernel']
    sets = {}
    out = []
    for log in sorted(glob.glob(os.path.join(runs, '*.log*'))):
        name = os.path.basename(log).split('.log')[0]
        text = read_log(log)
        out.append(f'== {name}')
        for pat in (r'load_backend: loaded \S+ backend from \S+', r'ggml_cuda_init: found .*',
                    r'Device 0: .*', r'flashproof cublas shim: .*', r'ggml_cuda_init: failed.*',
                    r'llama_context: flash_attn\s*=.*', r'graph splits = \d+', r'graph: nodes = \d+, splits = \d+',
                    r'using device CUDA0 .*', r'offloaded \d+/\d+ layers to GPU', r'CUDA0 compute buffer size = .*', r'CUDA0 KV buffer size = .*',
                    r'llama_kv_cache: size = .*', r'prompt eval time = .*', r'       eval time = .*'):
            seen = collections.OrderedDict()
            for m in re.finditer(pat, text):
                seen[m.group(0).strip()] = seen.get(m.group(0).strip(), 0) + 1
            for s, c in seen.items():
                out.append(f'  log: {s}' + (f'   (x{c})' if c > 1 else ''))
        place = collections.Counter((m.group(1), m.group(2)) for m in PLACE.finditer(text))
        if place:
            out.append('  placement (node lines, all graphs): ' +
                       ', '.join(f'{op} {be} {n}' for (op, be), n in sorted(place.items())))
        header, rows = tally(os.path.join(runs, name + '.kernels.tsv'))
        out.append(f'  tally: {header}')
        att = {'fused': {}, 'unfused': {}}
        for n, ns, k in rows:
            for kind, pats in (('fused', fused), ('unfused', unfused)):
                if any(p.search(k) for p in pats):
                    att[kind][k] = (n, ns)
        total_ns = sum(ns for _, ns, _ in rows) or 1
        out.append(f'  kernels: {len(rows)} names, {sum(n for n, _, _ in rows)} launches')
        for kind in ('fused', 'unfused'):
            for k, (n, ns) in sorted(att[kind].items(), key=lambda x: -x[1][1]):
                out.append(f'  {kind}: {n:6d} launches {ns / 1e6:9.3f} ms  {k}')
        top = sorted(rows, key=lambda r: -r[1])[:5]
        for n, ns, k in top:
            out.append(f'  top: {n:6d} launches {100 * ns / total_ns:5.1f}%  {k[:140]}')
        sets[name] = (set(att['fused']), set(att['unfused']), len(rows))
        ans = os.path.join(runs, name + '.answers.json')
        if os.path.exists(ans):
            a = json.load(open(ans))
            out.append(f"  answers: ready {a.get('ready_s')} s, error {a.get('error')}; " + '; '.join(
                f"{r.get('status')} prompt {(r.get('timings') or {}).get('prompt_n')} tok "
                f"{(r.get('timings') or {}).get('prompt_ms')} ms, content {r.get('content')!r}"
                for r in a.get('requests', [])))
    out.append('== verbose vs quiet: attention kernel names')
    for name in sorted(sets):
        if not name.endswith('.verbose'):
            continue
        q = name[:-len('.verbose')] + '.quiet'
        if q not in sets:
            out.append(f'  {name}: no quiet run')
            continue
        v, qq = sets[name], sets[q]
        same = v[0] == qq[0] and v[1] == qq[1] and v[2] > 0 and qq[2] > 0
        out.append(f"  {name[:-8]}: {'IDENTICAL' if same else 'DIFFERENT'} "
                   f"(fused {len(v[0])} vs {len(qq[0])}, unfused {len(v[1])} vs {len(qq[1])})")
        for kind, a, b in (('fused', v[0], qq[0]), ('unfused', v[1], qq[1])):
            for k in sorted(a - b):
                out.append(f'    {kind} only verbose: {k}')
            for k in sorted(b - a):
                out.append(f'    {kind} only quiet: {k}')
    print('\n'.join(out))


if __name__ == '__main__':
    main()
