#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# seeds.py - write the seed corpus of the fuzz target (stress/fuzz/corpus/):
# for each mode of fuzz_ops.c a few configurations (flavour, debug, hooks,
# capacity, faults) followed by operations from a fixed pseudo-random
# sequence, so that one pass over the corpus reaches every layer.  Run it
# from this directory when a mode's input format changes.
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def ops(rng, n, nops, weights=None):
    out = bytearray()
    for _ in range(n):
        op = rng.choices(range(nops), weights)[0] if weights else rng.randrange(nops)
        out += bytes([op, rng.randrange(256), rng.randrange(256)])
    return bytes(out)


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    rng = random.Random(1)
    # Mode 0: stress/ops.c (6 configuration bytes, 2-byte operations).
    for fl in range(5):
        for cap in (0x10, 0x61, 0x3f):
            cfg = bytes([fl, cap, 6, rng.randrange(64), 0x24, 0x00 if fl % 2 else 0x01])
            write(f"flavours-{fl}-{cap:02x}", b"\x00" + cfg + bytes(rng.randrange(256) for _ in range(300)))
    # Mode 1: handles (7 configuration bytes, 3-byte operations over 17 kinds).
    w = [3, 3, 3, 3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    for fl in range(4):
        for variant in range(8):
            debug = 0x10 if variant in (1, 3, 5, 7) else 0
            reset = 0x20 if variant == 2 else 0
            bad = 0x80 if variant in (3, 6) else 0
            name = 0x40 if variant == 4 else 0
            cap = [600, 0, 40, 1000, 8, 200, 100, 30][variant]
            capw = 1 if cap == 0 else (cap - 1) << 1
            # b5: low nibble 0 = allocator faults; 0x20 destroy with one
            # out (debug); 0x40 the system allocator; 0x80 no hook then.
            faults = [0x21, 0x21, 0x41, 0x21, 0x21, 0x50, 0x41, 0xa1][variant]
            mag = 0x24 + variant + (0x10 if variant == 6 else 0)
            # b3: object size and alignment (40: one byte, aligned to 1)
            cfg = bytes([fl | debug | reset | bad | name, capw & 0xff, capw >> 8,
                         [0, 9, 18, 27, 40, 45, 54, 40][variant], mag, faults, 5 + variant])
            write(f"handles-{fl}-{variant}", b"\x01" + cfg + ops(rng, 400, 18, w))
    # ThreadStatic with an allocator that fails one call in 4: caches that
    # cannot be made (puts straight to the depot), worker slots that fail.
    capw = (500 - 1) << 1
    body = b""
    for i in range(120):
        # get, trim (the depot's magazines go), detach (the cache's go: the
        # magazine slab is free) and put (a new cache needs a new slab)
        body += bytes([0, 0, 0, 11, 0, 0, 14, 3 | (i & 4), 0, 17, i, 0])
    write("handles-2-uncached", b"\x01" + bytes([2, capw & 0xff, capw >> 8, 9, 0x24, 0x10, 3]) + body)
    # Mode 2: array pools (4 configuration bytes, 3-byte operations over 8).
    for fl in range(3):
        for variant in range(5):
            b0 = (fl << 4) | [0, 4, 8, 0xc, 3][variant] | (0x2 if variant == 2 else 0)
            b1 = [0x09, 0x2d, 0x40 | 0x05, 0xe0 | 0x02, 0x11][variant]
            b2 = [0x20, 1, 0x08, 0x40, 0x03][variant]
            b3 = [0x11, 0x01, 0x30, 0x12, 0x40][variant]
            write(f"array-{fl}-{variant}", b"\x02" + bytes([b0, b1, b2, b3]) + ops(rng, 250, 8))
    # Mode 3: rc pools.
    for fl in range(3):
        for variant in range(4):
            b0 = (fl << 4) | [0, 4, 0x8 | 0x2, 0x44 | 0x80][variant]
            cfg = bytes([b0, rng.randrange(256), [0x20, 1, 0x40, 0x06][variant],
                         [0x11, 0x02, 0x31, 0x00][variant]])
            write(f"rc-{fl}-{variant}", b"\x03" + cfg + ops(rng, 250, 7))
    # Mode 4: closure pools.
    for fl in range(3):
        for variant in range(4):
            b0 = (fl << 4) | [0, 4, 0x2, 0x6][variant]
            cfg = bytes([b0, [16, 0x80 | 40, 0, 64][variant], [0x20, 1, 0x10, 0x05][variant],
                         [0x13, 0x02, 0x30, 0x00][variant]])
            write(f"closure-{fl}-{variant}", b"\x04" + cfg + ops(rng, 250, 6))
    # Mode 5: two threads (5 configuration bytes, 2-byte operations, halves).
    for fl in range(4):
        for variant in range(3):
            b0 = fl | [0, 0x10, 0x40 | 0x80][variant]
            capw = [1, 63 << 1, 300 << 1][variant]
            cfg = bytes([b0, capw & 0xff, capw >> 8, 5 + variant, [0x11, 0x01, 0x21][variant]])
            write(f"threads-{fl}-{variant}", b"\x05" + cfg +
                  bytes(rng.randrange(256) for _ in range(800)))


main()
