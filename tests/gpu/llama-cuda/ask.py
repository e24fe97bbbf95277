#!/usr/bin/env python3
"""Waits for a llama-server to answer /health, then sends the same /completion request N times
(temperature 0, no prompt cache, fixed length) and writes the answers, with the server's own timings
and the client's wall time, as JSON. Standard library only (runs on the device machine's python3).

usage: ask.py --port P --prompt-file F [--chars 1000] [--n-predict 8] [--requests 2]
              [--ready-timeout 300] [--pid PID] --out FILE
Exit 0 when every request answered 200; 1 otherwise (the reason on stderr and in FILE)."""
import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--port', type=int, required=True)
    ap.add_argument('--prompt-file', required=True)
    ap.add_argument('--chars', type=int, default=1000)
    ap.add_argument('--n-predict', type=int, default=8)
    ap.add_argument('--requests', type=int, default=2)
    ap.add_argument('--ready-timeout', type=float, default=300)
    ap.add_argument('--pid', type=int)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    base = f'http://127.0.0.1:{a.port}'
    result = {'ready_s': None, 'requests': [], 'error': None}
    t0 = time.monotonic()
    while True:
        if a.pid:
            try:
                os.kill(a.pid, 0)
            except OSError:
                result['error'] = 'server exited before it was ready'
                break
        try:
            status, _ = get(base + '/health', timeout=2)
            if status == 200:
                result['ready_s'] = round(time.monotonic() - t0, 3)
                break
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        if time.monotonic() - t0 > a.ready_timeout:
            result['error'] = f'not ready after {a.ready_timeout} s'
            break
        time.sleep(0.25)
    if result['error'] is None:
        prompt = open(a.prompt_file, encoding='utf-8').read()[:a.chars]
        body = json.dumps({'prompt': prompt, 'n_predict': a.n_predict, 'temperature': 0,
                           'cache_prompt': False, 'ignore_eos': True, 'seed': 42}).encode()
        for i in range(a.requests):
            req = urllib.request.Request(base + '/completion', data=body,
                                         headers={'Content-Type': 'application/json'})
            t = time.monotonic()
            try:
                with urllib.request.urlopen(req, timeout=600) as r:
                    answer = json.loads(r.read())
                    wall = time.monotonic() - t
                    result['requests'].append({'status': r.status, 'wall_ms': round(wall * 1000, 1),
                                               'content': answer.get('content'),
                                               'tokens_evaluated': answer.get('tokens_evaluated'),
                                               'timings': answer.get('timings')})
            except urllib.error.HTTPError as e:
                result['requests'].append({'status': e.code, 'body': e.read().decode(errors='replace')[:2000]})
                result['error'] = f'request {i}: HTTP {e.code}'
            except Exception as e:  # noqa: BLE001 - reported, not hidden
                result['error'] = f'request {i}: {e!r}'
                break
    with open(a.out, 'w') as f:
        json.dump(result, f, indent=1)
    for r in result['requests']:
        t = r.get('timings') or {}
        print(f"  status {r.get('status')} wall {r.get('wall_ms')} ms, prompt {t.get('prompt_n')} tok "
              f"{t.get('prompt_ms')} ms, decode {t.get('predicted_n')} tok {t.get('predicted_ms')} ms",
              file=sys.stderr)
    if result['error']:
        print('ask.py: ' + result['error'], file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
