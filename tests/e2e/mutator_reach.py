# SPDX-License-Identifier: Apache-2.0
"""What a snapshot of testprogs/mutator reaches of its records and buffers.

Shared by test_pause.py (each snapshot must be whole) and bench/bench_pause.py.

A record or buffer is counted where the profile charges it, under the program's own
roots (main.*): at the end of a chain through a field or element of its type
("[10+]. (*main.Rec)", "Buf. ([]uint8)"), or as the first object of a frame variable
that points at it directly. The scan is breadth first, so a record that main.mutate's
variable `a` points at when the program is stopped is one hop from that root and two
from main.recs: it is charged to ("main.mutate.a",), a chain with no type in it (seen in
CI: a whole snapshot counted 19,999 records). The variables are the mutator's own
(testprogs/mutator/main.go): records in mutate's a and b and swapBuffers' a and b, a
buffer in mutate's buf.
"""

RECORD_VARS = {"main.mutate.a", "main.mutate.b", "main.swapBuffers.a", "main.swapBuffers.b"}
BUFFER_VARS = {"main.mutate.buf"}


def reached(p):
    """(buffers, records) the profile p charges to the mutator's own roots."""
    buffers = records = 0
    for chain, (objects, _) in p.items():
        if not chain[0].startswith("main."):
            continue
        if chain[-1].startswith("Buf. ([]uint8)") or (len(chain) == 1 and chain[0] in BUFFER_VARS):
            buffers += objects
        elif chain[-1].endswith("(*main.Rec)") or (len(chain) == 1 and chain[0] in RECORD_VARS):
            records += objects
    return buffers, records
