#!/usr/bin/env python3
"""A real CUDA workload for checking the kernel probe: PyTorch's scaled_dot_product_attention.

bf16 inputs get a fused flash-family kernel on Hopper; fp32 inputs never get the flash kernel
(docs/runtimes.md section 4), so PyTorch takes the memory-efficient or the math path. Prints one JSON
line with what it did and how long it took; exits 125 (CTest's skip code here) when there is no
PyTorch or no CUDA device, so a machine without a GPU never passes silently.

Usage: sdpa_workload.py --dtype bf16|fp32 [--backend default|flash|efficient|cudnn|math]
                        [--batch 4 --heads 32 --seq 2048 --head-dim 128 --iters 300]
                        [--tiny-launches N] [--hold-s S] [--profiler]
"""
import argparse
import json
import os
import sys
import time

T_START = time.perf_counter()


def skip(reason):
    print(f"SKIP: {reason}", flush=True)
    sys.exit(125)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], required=True)
    ap.add_argument("--backend", choices=["default", "flash", "efficient", "cudnn", "math"], default="default",
                    help="default lets PyTorch choose (what the check is about); the others pin one path")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--tiny-launches", type=int, default=0,
                    help="after the attention loop, time N tiny elementwise kernels (launch-bound, like decode)")
    ap.add_argument("--hold-s", type=float, default=0.0,
                    help="keep the tensors allocated this long before exiting (for NVML's per-process memory)")
    ap.add_argument("--profiler", action="store_true",
                    help="run everything under torch.profiler (to see who wins the one CUPTI subscriber slot)")
    ap.add_argument("--pre-subscribe-cupti", metavar="LIBCUPTI",
                    help="before CUDA starts, take CUPTI's one subscriber slot through this libcupti, as another "
                         "profiler would (to see the probe refuse)")
    args = ap.parse_args()

    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        skip(f"PyTorch is not installed ({e})")
    t_imported = time.perf_counter()

    pre_subscribe = None
    if args.pre_subscribe_cupti:
        import ctypes
        cupti = ctypes.CDLL(args.pre_subscribe_cupti)
        callback_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p)
        main.keep_alive = callback_type(lambda *_: None)
        handle = ctypes.c_void_p()
        pre_subscribe = cupti.cuptiSubscribe(ctypes.byref(handle), main.keep_alive, None)

    profiler = None
    if args.profiler:
        profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
        profiler.__enter__()

    if not torch.cuda.is_available():
        skip("torch.cuda.is_available() is False (no NVIDIA GPU or driver)")
    torch.zeros(1, device="cuda")  # cuInit: the driver loads CUDA_INJECTION64_PATH here
    torch.cuda.synchronize()
    t_cuda = time.perf_counter()

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    shape = (args.batch, args.heads, args.seq, args.head_dim)
    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(shape, device="cuda", dtype=dtype, generator=gen) for _ in range(3))

    backends = {
        "flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
        "cudnn": "CUDNN_ATTENTION", "math": "MATH",
    }
    if args.backend == "default":
        import contextlib
        ctx = contextlib.nullcontext()
    else:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        ctx = sdpa_kernel(getattr(SDPBackend, backends[args.backend]))

    with ctx:
        for _ in range(args.warmup):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.iters):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
        end.record()
        torch.cuda.synchronize()
    loop_ms = start.elapsed_time(end)

    tiny_s = None
    if args.tiny_launches > 0:
        x = torch.zeros(1024, device="cuda")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(args.tiny_launches):
            x.add_(1.0)
        torch.cuda.synchronize()
        tiny_s = time.perf_counter() - t0

    if args.hold_s > 0:
        print(json.dumps({"event": "holding", "pid": os.getpid(), "seconds": args.hold_s}), flush=True)
        time.sleep(args.hold_s)

    if profiler is not None:
        profiler.__exit__(None, None, None)

    flops = 4.0 * args.batch * args.heads * args.seq * args.seq * args.head_dim * (0.5 if args.causal else 1.0)
    result = {
        "event": "done",
        "pid": os.getpid(),
        "dtype": args.dtype,
        "backend": args.backend,
        "shape_bhsd": list(shape),
        "causal": args.causal,
        "iters": args.iters,
        "ms_per_call": loop_ms / args.iters,
        "tflops": flops * args.iters / (loop_ms / 1000.0) / 1e12,
        "import_s": t_imported - T_START,
        "cuda_init_s": t_cuda - t_imported,
        "tiny_launches": args.tiny_launches,
        "us_per_tiny_launch": (tiny_s / args.tiny_launches * 1e6) if tiny_s is not None else None,
        "checksum": float(out.float().abs().mean()),
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "injection": os.environ.get("CUDA_INJECTION64_PATH", ""),
        "profiler": args.profiler,
    }
    if pre_subscribe is not None:
        result["pre_subscribe_cuptiSubscribe_result"] = pre_subscribe
    if profiler is not None:
        try:  # how many distinct GPU kernels torch.profiler itself recorded (0: it lost CUPTI)
            result["profiler_cuda_kernels"] = len(
                [e for e in profiler.key_averages() if str(getattr(e, "device_type", "")).endswith("CUDA")])
        except Exception as e:  # noqa: BLE001 - report, do not fail the workload
            result["profiler_cuda_kernels"] = f"error: {e}"
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
