#!/usr/bin/env python3
"""Shrinks a CUDA shared library for transport by keeping, in every fat binary of its .nv_fatbin
section, only the images for the given GPU architectures (default: sm_90, for the H200).

Why: Debian sid's libggml-cuda.so (0.27.0) is 575 MB: 145 fat binaries, each with compressed PTX
for compute_50/61/70/75/80/90 and uncompressed cubins for sm_86/89 only. An H200 (sm_90) can use
only the compute_90 PTX (JIT-compiled by the driver), so the rest is dead weight that does not fit
the 64 MiB a device call may carry.

How: each fat binary is rewritten in place, header first (magic 0xBA55ED50, version 1, header size 16,
then the size of what follows), then the kept entries moved up contiguously, unchanged byte for byte
(their own headers keep the compression flags); the fat binary's size field shrinks to the kept
entries, and the bytes freed at its end become zeros, so that xz squeezes them away. Nothing else of
the file moves: the __fatbinwrap records still point at the same headers. Refuses (exit 1) when a fat
binary has no entry for a wanted architecture, or when the section does not parse end to end.

usage: fatbin_keep_arch.py IN.so OUT.so [--arch 90 ...]
"""
import argparse
import struct
import sys

MAGIC = 0xBA55ED50


def section(data, name):
    # Minimal ELF64 little-endian section lookup.
    e_shoff, = struct.unpack_from('<Q', data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from('<HHH', data, 0x3A)
    def sh(i):
        return struct.unpack_from('<IIQQQQIIQQ', data, e_shoff + i * e_shentsize)
    strtab_off = sh(e_shstrndx)[4]
    for i in range(e_shnum):
        s = sh(i)
        n = data[strtab_off + s[0]:data.index(b'\0', strtab_off + s[0])].decode()
        if n == name:
            return s[4], s[5]  # offset, size
    raise SystemExit(f'no {name} section')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('inp')
    ap.add_argument('out')
    ap.add_argument('--arch', type=int, action='append')
    a = ap.parse_args()
    keep = set(a.arch or [90])
    data = bytearray(open(a.inp, 'rb').read())
    off, size = section(data, '.nv_fatbin')
    end = off + size
    p = off
    n = 0
    before = after = 0
    while p < end:
        if p + 16 > end or struct.unpack_from('<I', data, p)[0] != MAGIC:
            # padding between fat binaries must be zeros
            if data[p] != 0:
                raise SystemExit(f'unexpected byte at 0x{p:x} in .nv_fatbin')
            p += 1
            continue
        magic, ver, hsz, fsz = struct.unpack_from('<IHHQ', data, p)
        if ver != 1 or hsz != 16:
            raise SystemExit(f'fat binary at 0x{p:x}: version {ver}, header size {hsz}: not understood')
        q = p + hsz
        stop = q + fsz
        kept = []
        while q < stop:
            kind, _v, ehsz, psz = struct.unpack_from('<HHIQ', data, q)
            arch, = struct.unpack_from('<I', data, q + 28)
            if kind not in (1, 2) or q + ehsz + psz > stop:
                raise SystemExit(f'fat binary at 0x{p:x}: bad entry at 0x{q:x}')
            if arch in keep:
                kept.append(bytes(data[q:q + ehsz + psz]))
            q += ehsz + psz
        if q != stop:
            raise SystemExit(f'fat binary at 0x{p:x}: entries overrun its size')
        if not kept:
            raise SystemExit(f'fat binary at 0x{p:x}: no image for sm_{sorted(keep)}')
        body = b''.join(kept)
        data[p + hsz:stop] = body + bytes(fsz - len(body))
        struct.pack_into('<Q', data, p + 8, len(body))
        before += fsz
        after += len(body)
        n += 1
        p = stop
    open(a.out, 'wb').write(data)
    print(f'{n} fat binaries; {before} bytes of images -> {after} kept (sm_{sorted(keep)})', file=sys.stderr)


if __name__ == '__main__':
    main()
