#!/usr/bin/env python3
"""Prints the body of an agent checkpoint (src/agent/agent_ckpt.c) as hex:
what follows the header (magic, version, cost model block, identity), with the fields that
depend on the wall clock (the state's best_elapsed_s, elapsed_s, policy_s,
eval_s and the preparation's seconds) and the checksum zeroed. Two runs
that computed the same thing print the same, whatever checkpoint version or
settings identity they wrote. A search checkpoint prints as one line naming
it (its clock fields are not at fixed places; compare its log and
placement instead).
usage: ck_body.py FILE"""
import struct
import sys

b = bytearray(open(sys.argv[1], "rb").read())
if b[:16] != b"DPLACE-AGENT-CK\n":
    print("not an agent checkpoint: %r" % bytes(b[:16]))
    sys.exit(0)
# from version 7 the cost model's version (u32) and the device hash (u64)
# follow the version: part of the header
at = 20 + (12 if struct.unpack_from("<I", b, 16)[0] >= 7 else 0)
idlen = struct.unpack_from("<I", b, at)[0]
state_len = struct.unpack_from("<Q", b, at + 4 + idlen)[0]
s0 = at + 4 + idlen + 8  # after magic, version, model block, identity and the state's length
b[s0 + 48:s0 + 80] = bytes(32)  # best_elapsed_s, elapsed_s, policy_s, eval_s
# the state ends with: pretrain_s (f64), pretrain_step (i64), have_keep (i32),
# keep_n (u64), keep_n floats, then the warm start's 28 bytes
warm = s0 + state_len - 28
for k in range(0, state_len // 4):
    at = warm - 4 * k - 8
    if at < s0 + 80:
        break
    if struct.unpack_from("<Q", b, at)[0] == k:
        b[at - 4 - 8 - 8:at - 4 - 8] = bytes(8)  # pretrain_s
        break
b[-8:] = bytes(8)  # the checksum
sys.stdout.write(b[at + 4 + idlen:].hex() + "\n")
