# Sourced by the GPU checks: exits 125 (CTest's skip code for the `gpu` tests) with the reason
# printed when this machine has no NVIDIA GPU, so a CPU machine never passes a GPU check silently.
fp_require_gpu() {
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "SKIP: nvidia-smi not found: no NVIDIA driver on this machine"
    exit 125
  fi
  local list
  if ! list=$(nvidia-smi -L 2>&1); then
    echo "SKIP: nvidia-smi -L failed: ${list}"
    exit 125
  fi
  if ! grep -q '^GPU [0-9]' <<<"$list"; then
    echo "SKIP: nvidia-smi lists no GPU: ${list}"
    exit 125
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
