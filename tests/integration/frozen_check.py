#!/usr/bin/env python3
"""frozen_check.py PW PE_END :PID: LEASES FILE...: a process frozen past its lease
window (SIGSTOP) minted on worker PW only up to that window's end PE_END, and after
it only on a worker whose lease row (LEASES: worker, holder, window_start lines, tab
separated) names the process, from that window's start on (docs/design.md 11.8).
FILEs hold "first count" ranges of its IDs. Used by test_libgen and test_libmany."""
import sys
pw, pend, me, rows = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
mine = {}
for line in open(rows):
    w = line.split("\t")
    if me in w[1]:
        mine[int(w[0])] = int(w[2])
old = after = 0
for path in sys.argv[5:]:
    for line in open(path):
        first, n = map(int, line.split())
        for i in (first, first + n - 1):
            ts, w = i >> 22, (i >> 12) & 1023
            if w == pw:
                assert ts <= pend, f"worker {w} minted at {ts}, after its window's end {pend}"
                old += 1
            else:
                assert w in mine and ts >= mine[w], f"worker {w} at {ts}: no window of ours ({mine})"
                after += 1
assert old and after, (old, after)
print(f"stopped process: {old} range ends on worker {pw} up to {pend}, {after} on {sorted(set(mine) - {pw})}", file=sys.stderr)
