#!/usr/bin/env python3
"""rewriting_runtime.py: a TEST DOUBLE around the real llama-server (Debian sid's, through its own
loader, as ci/setup.sh installed it) that runs it unchanged and rewrites only its log on the way to
the harness, line by line. The requests, the answers, the metrics endpoint and the timings are the
real runtime's; what the log says is the real log with one thing changed:

  FP_REWRITE=cuda-degraded  the CUDA build's words on this CPU: its system_info gains the H200 build's
                            "CUDA : ARCHS = ... | FA_QUANTS = q4_0-q4_0,q8_0-q8_0,f16-f16,bf16-bf16 |"
                            section, and after the first "llama_context: flash_attn = enabled" the line
                            ggml-cuda printed on the H200 (fixtures/logs/h200-live/fa_on_q5_1.quiet.log.gz
                            line 150) for the launch's own -ctk/-ctv pair. The CPU build never prints
                            either line itself: they are injected.
  FP_REWRITE=long-records   20000 bytes of filler inside the "flash_attn = enabled" record and inside
                            every "(FLASH_ATTN)" scheduler node record (a logged request body would
                            be one): the evidence must be read whole.
Anything else, or unset: the log unchanged.
"""
import os
import re
import shlex
import signal
import subprocess
import sys

CUDA_SYSTEM_INFO = "CUDA : ARCHS = 500,610,700,750,800,860,890,900 | FA_QUANTS = q4_0-q4_0,q8_0-q8_0,f16-f16,bf16-bf16 | "
CONVERT = ('W ggml_cuda_flash_attn_ext_vec: no FlashAttention vector kernel compiled for K/V types {k}-{v}, converting K and V '
           'to f16 instead (slow). Add "{k}-{v}" to GGML_CUDA_FA_QUANTS to compile it.')
FILLER = "x" * 20000
NODE = re.compile(r" node #\s*\d+ \(\s*FLASH_ATTN")


def real_command():
    env_file = os.path.join(os.environ.get("FLASHPROOF_CACHE") or "/var/cache/flashproof", "env.sh")
    values = {}
    with open(env_file) as f:
        for line in f:
            line = line.strip()
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                values[k] = shlex.split(v)[0] if v else ""
    return [values["FLASHPROOF_LOADER"], "--library-path", values["FLASHPROOF_LIBRARY_PATH"], values["FLASHPROOF_LLAMA_SERVER"]]


def flag_value(argv, names, default):
    for i, a in enumerate(argv):
        if a in names and i + 1 < len(argv):
            return argv[i + 1]
    return default


def main():
    argv = sys.argv[1:]
    mode = os.environ.get("FP_REWRITE", "")
    real = real_command()
    if mode not in ("cuda-degraded", "long-records") or "--version" in argv or "--list-devices" in argv:
        os.execv(real[0], real + argv)
    k = flag_value(argv, ("-ctk", "--cache-type-k"), "f16")
    v = flag_value(argv, ("-ctv", "--cache-type-v"), "f16")
    child = subprocess.Popen(real + argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda sig, _: child.send_signal(sig))
    converted = False
    out = sys.stdout.buffer
    for raw in iter(child.stdout.readline, b""):
        line = raw.decode("utf-8", "replace")
        if mode == "cuda-degraded":
            if "system_info:" in line and "FA_QUANTS" not in line and "| CPU :" in line:
                line = line.replace("| CPU :", "| " + CUDA_SYSTEM_INFO + "CPU :", 1)
            out.write(line.encode())
            if not converted and "flash_attn" in line and "= enabled" in line:
                stamp = line.split(" ", 1)[0] if line[:1].isdigit() else ""
                out.write(((stamp + " " if stamp else "") + CONVERT.format(k=k, v=v) + "\n").encode())
                converted = True
        else:
            line = line.replace("llama_context: flash_attn", "llama_context: " + FILLER + " flash_attn")
            line = NODE.sub(lambda m: " " + FILLER + m.group(0), line)
            out.write(line.encode())
        out.flush()
    code = child.wait()
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
