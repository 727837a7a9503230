#!/usr/bin/env python3
"""Prints an agent checkpoint (src/agent/agent_ckpt.c) as hex with what
depends on the wall clock zeroed: the state's best_elapsed_s, elapsed_s,
policy_s and eval_s, and the checksum; two runs that computed the same
thing print the same. With --updates, prints the updates it holds instead
(after checking its checksum: a whole checkpoint).
usage: ck_strip.py [--updates] FILE"""
import struct
import sys

b = bytearray(open(sys.argv[-1], "rb").read())
# from version 7 the cost model's version (u32) and the device hash (u64)
# follow the version
at = 20 + (12 if struct.unpack_from("<I", b, 16)[0] >= 7 else 0)
idlen = struct.unpack_from("<I", b, at)[0]
s0 = at + 4 + idlen + 8  # after magic, version, model block, idlen, id, state_bytes
if sys.argv[1] == "--updates":
    h = 0xCBF29CE484222325  # FNV-1a 64 of everything before the checksum
    for c in b[:-8]:
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    if struct.unpack_from("<Q", b, len(b) - 8)[0] != h:
        sys.exit("ck_strip: bad checksum")
    print(struct.unpack_from("<q", b, s0)[0])
    sys.exit(0)
b[s0 + 48:s0 + 80] = bytes(32)  # best_elapsed_s, elapsed_s, policy_s, eval_s
b[-8:] = bytes(8)  # the checksum
sys.stdout.write(b.hex() + "\n")
