# Sourced on the device machine by harness_device.sh, gate_device.sh and vulkan_device.sh (which set
# W, L and root first): flashproof itself from BUNDLE/flashproof.tar.xz (bundle_harness.sh), the
# bookworm binary started through sid's loader with the few bookworm libraries sid lacks.
# fp_unpack BUNDLE: unpacks it into $W/fpbin (returns 1 when the bundle has none) and links the source
# folder the binary was built in, where it finds cases, fixtures and runtime data (/work/main when the
# lead builds it), to this checkout. fp ARGS...: runs it.
fp_unpack() {
  [ -f "$1/flashproof.tar.xz" ] || return 1
  mkdir -p "$W/fpbin" && tar -C "$W/fpbin" -xJf "$1/flashproof.tar.xz" || return 1
  fp_src=$(strings -n 8 "$W/fpbin/flashproof" 2>/dev/null | grep -m1 -E '^/.+/src/runtime/data$' | sed 's#/src/runtime/data$##')
  fp_src=${fp_src:-/work/main}
  [ -e "$fp_src" ] || { mkdir -p "$(dirname "$fp_src")" && ln -s "$root" "$fp_src"; }
}
fp() { "$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof" "$@"; }
