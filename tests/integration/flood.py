"""flood.py MODE COUNT PORT SECONDS - hostile clients for test_flood.sh.

MODE idle:      COUNT connections that send nothing.
MODE slowloris: COUNT connections that send an unfinished request, one byte of it
                every 0.5 s (never a newline).
MODE nonreader: COUNT connections that pipeline 'IDS 1000' and never read.
MODE http:      COUNT HTTP/1.1 keep-alive connections, each answered one
                GET /v1/ids?count=1000 (so each held buffers), then idle.

Prints READY once every connection is open (and, for nonreader, once each has
written what the kernel takes), holds them for SECONDS, then closes them all and
prints the number still open at the end (the server may have closed some).
"""
import errno, socket, sys, time

mode, count, port, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
conns = []
for i in range(count):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setblocking(False)
    conns.append(s)
if mode == "http":
    req = b"GET /v1/ids?count=1000 HTTP/1.1\r\nHost: flood\r\n\r\n"
    for s in conns:
        s.setblocking(True)
        s.sendall(req)
        got = b""
        while b"\r\n\r\n" not in got:
            got += s.recv(65536)
        head, body = got.split(b"\r\n\r\n", 1)
        n = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
        while len(body) < n:
            body += s.recv(65536)
        s.setblocking(False)
if mode == "nonreader":
    burst = b"IDS 1000\n" * 4096
    for s in conns:
        for _ in range(64):
            try:
                s.send(burst)
            except BlockingIOError:
                break
            except OSError:
                break
print("READY %d" % len(conns), flush=True)
end = time.monotonic() + secs
tick = 0
while time.monotonic() < end:
    time.sleep(0.5)
    tick += 1
    if mode == "slowloris":
        for s in conns:
            try:
                s.send(b"ID"[tick % 2:tick % 2 + 1])
            except OSError:
                pass
alive = 0
for s in conns:
    try:
        s.send(b"")
        alive += 1
    except OSError:
        pass
    s.close()
print("CLOSED %d" % alive, flush=True)
