# Sourced by the GPU checks: exits 125 (CTest's skip code for the `gpu` tests) with the reason
# printed when this machine has no NVIDIA GPU, so a CPU machine never passes a GPU check silently.
# A machine that declares its GPUs (FLASHPROOF_EXPECT_GPUS=N, or a machine file: src/flow/passes/gpu_machine.h)
# may not skip: there the same reasons FAIL (exit 1), and so does listing fewer GPUs than declared.
fp_gpu_box() {
  if [ -n "${FLASHPROOF_EXPECT_GPUS:-}" ] && [ "${FLASHPROOF_EXPECT_GPUS}" != 0 ]; then
    echo "FLASHPROOF_EXPECT_GPUS=${FLASHPROOF_EXPECT_GPUS}"
    return 0
  fi
  local file=${FLASHPROOF_MACHINE_FILE:-/etc/flashproof/machine.json} n
  [ -f "$file" ] || return 1
  n=$(sed -n 's/.*"gpus"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$file" | head -n 1)
  [ -n "$n" ] && [ "$n" != 0 ] || return 1
  echo "$file (gpus $n)"
}

# Skips (125) on a machine without GPUs; fails (1) on a GPU box.
fp_skip_or_fail() {
  local box
  if box=$(fp_gpu_box); then
    echo "FAIL: $1 (this machine declares its GPUs: $box; a GPU box may not skip)"
    exit 1
  fi
  echo "SKIP: $1"
  exit 125
}

fp_require_gpu() {
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    fp_skip_or_fail "nvidia-smi not found: no NVIDIA driver on this machine"
  fi
  local list
  if ! list=$(nvidia-smi -L 2>&1); then
    fp_skip_or_fail "nvidia-smi -L failed: ${list}"
  fi
  if ! grep -q '^GPU [0-9]' <<<"$list"; then
    fp_skip_or_fail "nvidia-smi lists no GPU: ${list}"
  fi
  local want=${FLASHPROOF_EXPECT_GPUS:-0} have
  have=$(grep -c '^GPU [0-9]' <<<"$list")
  if [ "$want" -gt "$have" ] 2>/dev/null; then
    echo "FAIL: FLASHPROOF_EXPECT_GPUS=$want but nvidia-smi lists $have GPU(s): ${list}"
    exit 1
  fi
}

# Exits 125 when python3 cannot import torch with CUDA (the SDPA workload's prerequisite).
fp_require_torch_cuda() {
  local py=${PYTHON:-python3} out
  if ! out=$("$py" -c 'import torch; assert torch.cuda.is_available(), "torch.cuda.is_available() is False"; print(torch.__version__)' 2>&1); then
    echo "SKIP: $py has no PyTorch with CUDA: $(tail -n 1 <<<"$out")"
    exit 125
  fi
}
