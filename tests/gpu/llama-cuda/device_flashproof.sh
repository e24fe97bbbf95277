# Sourced on the device machine by harness_device.sh, gate_device.sh and vulkan_device.sh (which set
# W, L and root first): flashproof itself from BUNDLE/flashproof.tar.xz (bundle_harness.sh), the
# bookworm binary started through sid's loader with the few bookworm libraries sid lacks.
# fp_unpack BUNDLE: unpacks it into $W/fpbin (returns 1 when the bundle has none) and links this
# checkout's shipped data (runtime data, prompts, recipes) into $W/share, exported as
# FLASHPROOF_SHARE_DIR; run fp from the checkout (the suite). fp ARGS...: runs it. $W/fpbin/fp is
# the same as an executable, for `timeout` and `env`, which cannot run a shell function.
fp_unpack() {
  [ -f "$1/flashproof.tar.xz" ] || return 1
  mkdir -p "$W/fpbin" && tar -C "$W/fpbin" -xJf "$1/flashproof.tar.xz" || return 1
  # flashproof finds its suite (this checkout) from the working directory and its data through
  # FLASHPROOF_SHARE_DIR: the bundle holds the binary only (src/util/shipped_data.h).
  mkdir -p "$W/share"
  for l in runtime=src/runtime/data prompts=fixtures/prompts models=fixtures/models suite=templates/suite; do
    ln -sfn "$root/${l#*=}" "$W/share/${l%%=*}"
  done
  export FLASHPROOF_SHARE_DIR=$W/share
  printf '#!/bin/sh\nexec "%s" --library-path "%s" "%s" "$@"\n' "$L/ld-linux-x86-64.so.2" "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" \
    >"$W/fpbin/fp" && chmod +x "$W/fpbin/fp"
}
fp() { "$W/fpbin/fp" "$@"; }
