#!/usr/bin/env python3
"""ns_take.py PORT PROTO DIR ROUNDS NS...: takes IDs of each namespace NS from
idserver on PORT, ROUNDS times each of ID, IDS 7 and BLOCK 3, over PROTO
(text: the line protocol on a plain socket; resp: RESP arrays on the same
port), and appends them to DIR/NS.ids as "first count" ranges. A namespace
answering ERR is counted; prints "ok N errors E" (N IDs taken).
"""
import os, socket, sys

port, proto, out, rounds = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
names = sys.argv[5:]
s = socket.create_connection(("127.0.0.1", port), timeout=20)
f = s.makefile("rb")


def resp(*words):
    b = b"*%d\r\n" % len(words)
    for w in words:
        w = w.encode()
        b += b"$%d\r\n%s\r\n" % (len(w), w)
    return b


def read_resp():
    line = f.readline().rstrip(b"\r\n")
    t, rest = line[:1], line[1:]
    if t == b":":
        return [int(rest)]
    if t == b"-":
        return rest.decode()
    if t == b"*":
        return [read_resp()[0] for _ in range(int(rest))]
    raise SystemExit("unexpected RESP reply %r" % line)


taken = errors = 0
files = {n: open(os.path.join(out, n + ".ids"), "a") for n in names}
for _ in range(rounds):
    reqs = []
    for n in names:
        reqs += [(n, "ID", None), (n, "IDS", "7"), (n, "BLOCK", "3")]
    # Pipelined: every request of the round sent at once.
    if proto == "text":
        s.sendall(b"".join(("%s %s%s\n" % (c, a + " " if a else "", n)).encode()
                           for n, c, a in reqs))
    else:
        s.sendall(b"".join(resp(c, *([a] if a else []), n) for n, c, a in reqs))
    for n, c, a in reqs:
        if proto == "text":
            r = f.readline().decode().split()
            if r and r[0] == "ERR":
                errors += 1
                continue
            r = [int(x) for x in r]
        else:
            r = read_resp()
            if isinstance(r, str):
                errors += 1
                continue
        if c == "BLOCK":
            first, count = r[0], r[1]
            assert count == 3, r
            files[n].write("%d %d\n" % (first, count))
            taken += count
        else:
            assert r == sorted(r) and len(set(r)) == len(r), r
            for x in r:
                files[n].write("%d 1\n" % x)
            taken += len(r)
for fh in files.values():
    fh.close()
print("ok %d errors %d" % (taken, errors))
