#!/usr/bin/env python3
"""Decode probes against the full requests, outside flashproof (bench/README.md section 3).

Gate-like blocks on the completion case's model and depth: per block two fresh llama-servers (the
sid prefix of /var/cache/flashproof/env.sh, realistic.gguf, -c 8192 -t 2 -fa on), a warm-up round
each, then 3 prompts x 2 rounds of full requests (about 3100 prompt tokens, 32 decoded, streamed,
cache_prompt false) in turn A B, each followed by K decode probes in turn (the same prompt again with
cache_prompt true: a token of prefill). Per block: log(B / A) of the median over the launch's full
requests of each one's mean token gap (the gate's itl_ms without probes), of the same over its probes
(with probes), and over both. Printed: each block, then the block spread of each unit.
  usage: bench/decode_probe_spread.py BLOCKS K
Measured 2026-12-04 (this 2-core VM, 10 blocks, K 4): full requests 5.5%, probes 2.8%, both 3.5%.
"""
import os,json,subprocess,time,urllib.request,math,statistics as st,sys,http.client,random
ROOT=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
env=dict(l.strip().split('=',1) for l in open('/var/cache/flashproof/env.sh') if '=' in l and not l.startswith('#'))
doc=open(os.path.join(ROOT,'fixtures/prompts/documents/operations_manual.txt')).read()
doc=(doc*4)[:7750]
def launch(port):
  cmd=[env['FLASHPROOF_LOADER'],'--library-path',env['FLASHPROOF_LIBRARY_PATH'],env['FLASHPROOF_LLAMA_SERVER'],'-m',os.path.join(ROOT,'fixtures/models/generated/realistic.gguf'),'--port',str(port),'-c','8192','-np','1','-t','2','-fa','on','--seed','42']
  return subprocess.Popen(cmd,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
def ready(port):
  for _ in range(240):
    try: urllib.request.urlopen(f'http://127.0.0.1:{port}/health',timeout=1); return
    except Exception: time.sleep(0.2)
def req(port,prompt,cache):
  c=http.client.HTTPConnection('127.0.0.1',port)
  c.request('POST','/v1/completions',json.dumps({'prompt':prompt,'max_tokens':32,'cache_prompt':cache,'ignore_eos':True,'temperature':0,'seed':42,'stream':True}),{'Content-Type':'application/json'})
  r=c.getresponse(); t=[]
  while True:
    line=r.fp.readline()
    if not line: break
    if line.startswith(b'data: ') and b'"text"' in line and line[6:].strip()!=b'[DONE]': t.append(time.perf_counter())
  c.close()
  return (t[-1]-t[0])/(len(t)-1)*1e3
B=int(sys.argv[1]); K=int(sys.argv[2])
prompts=[doc+f'\n# file {j}\ndef handler_{j}(' for j in range(3)]
out=[]
for b in range(B):
  ports=[18981,18982] if b%2==0 else [18982,18981]
  ps=[launch(p) for p in ports]
  try:
    for p in ports: ready(p)
    for p in ports:
      for pr in prompts: req(p,pr,False)   # warm-up round, one launch after the other
    full={p:[] for p in ports}; probe={p:[] for p in ports}
    for r in range(2):
      for pr in prompts:
        for p in ports: full[p].append(req(p,pr,False))
        for k in range(K):
          for p in ports: probe[p].append(req(p,pr,True))
  finally:
    for x in ps: x.terminate(); x.wait()
  a,bb=18981,18982
  row={'full':math.log(st.median(full[bb])/st.median(full[a])),'probe':math.log(st.median(probe[bb])/st.median(probe[a])),
       'all':math.log(st.median(full[bb]+probe[bb])/st.median(full[a]+probe[a])),'full_ms':st.median(full[a]),'probe_ms':st.median(probe[a]),
       'w_full':st.stdev([math.log(x) for x in full[a]]),'w_probe':st.stdev([math.log(x) for x in probe[a]])}
  out.append(row); print(b, ' '.join(f'{k}={v:.3f}' for k,v in row.items()), flush=True)
for k in ('full','probe','all'): print(k,'block sd %.1f%%'%(100*st.stdev([r[k] for r in out])), 'mean %.1f%%'%(100*st.mean([r[k] for r in out])))
