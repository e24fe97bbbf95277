#!/usr/bin/env python3
"""Does a longer decode steady a request's decode speed? (bench/README.md section 3)

One llama-server (the sid prefix, realistic.gguf, -c 8192 -t 2 -fa on, extra args after the two
numbers), then ROUNDS rounds of: for each length in LENGTHS, one streamed and one non-streamed request
(a 3000-character prompt, cache_prompt false, ignore_eos). Printed per length and mode: the median
and the spread (sd of the log) of llama-server's own decode time per token over the requests after
the first, and of the client's mean token gap (streamed).
  usage: bench/decode_length_spread.py LENGTHS ROUNDS [llama-server args...]   e.g. 32,256 9
Measured 2026-12-04 (this 2-core VM): 32 tokens 8.7% (streamed) and 7.7%, 256 tokens 6.4% and 6.4%:
8 times the tokens made it 1.2-1.4 times steadier, not the 2.8 times that noise independent from token
to token would give: the noise comes per request.
"""
import os,json,subprocess,time,urllib.request,math,statistics as st,sys,http.client
ROOT=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
env=dict(l.strip().split('=',1) for l in open('/var/cache/flashproof/env.sh') if '=' in l and not l.startswith('#'))
doc=open(os.path.join(ROOT,'fixtures/prompts/documents/operations_manual.txt')).read()[:3000]
cmd=[env['FLASHPROOF_LOADER'],'--library-path',env['FLASHPROOF_LIBRARY_PATH'],env['FLASHPROOF_LLAMA_SERVER'],'-m',os.path.join(ROOT,'fixtures/models/generated/realistic.gguf'),'--port','18977','-c','8192','-np','1','-t','2','-fa','on','--seed','1']+sys.argv[3:]
p=subprocess.Popen(cmd,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
def req(prompt,n,stream):
  c=http.client.HTTPConnection('127.0.0.1',18977)
  c.request('POST','/completion',json.dumps({'prompt':prompt,'n_predict':n,'cache_prompt':False,'ignore_eos':True,'temperature':0,'stream':stream}),{'Content-Type':'application/json'})
  r=c.getresponse(); times=[]; timings=None
  if not stream:
    d=json.load(r); timings=d['timings']
  else:
    while True:
      line=r.fp.readline()
      if not line: break
      if line.startswith(b'data: '):
        d=json.loads(line[6:])
        if d.get('content'): times.append(time.perf_counter())
        if 'timings' in d: timings=d['timings']
        if d.get('stop'): break
  c.close()
  srv=timings['predicted_ms']/timings['predicted_n']
  cli=(times[-1]-times[0])/(len(times)-1)*1e3 if len(times)>2 else float('nan')
  return srv,cli
try:
  for _ in range(120):
    try: urllib.request.urlopen('http://127.0.0.1:18977/health',timeout=1); break
    except Exception: time.sleep(0.5)
  res={}
  lens=[int(x) for x in sys.argv[1].split(',')]
  for i in range(int(sys.argv[2])):
    for n in lens:
      for s in (True,False):
        res.setdefault((n,s),[]).append(req(doc+f'\n# step {i}\ndef f{i}(',n,s))
  for k,v in res.items():
    sv=[a for a,b in v][1:]; cv=[b for a,b in v][1:]
    print(k,'server median %.2f sd %.1f%%'%(st.median(sv),100*st.stdev([math.log(x) for x in sv])), ('client median %.2f sd %.1f%%'%(st.median(cv),100*st.stdev([math.log(x) for x in cv]))) if k[1] else '')
finally:
  p.terminate(); p.wait()
