"""grpc_flood.py PORT COUNT STREAMS SECONDS SRC... - hostile gRPC clients for
test_grpc_flood.sh, in raw HTTP/2 frames (no h2 library: the preface, SETTINGS
and HEADERS are a few bytes each).

Opens COUNT connections to 127.0.0.1:PORT, spread over the source addresses SRC
(127.0.0.x: all of them are loopback), each with STREAMS request streams that
never complete: stream k of connection i sends HEADERS without END_STREAM,
and when i + k is odd also part of a gRPC message (a 5-byte prefix announcing
10 bytes, then 2).
Prints "READY open=N refused=M" once every connection is open (refused: it
broke while sending), then watches the replies for at most SECONDS and prints
one line per event kind, with the seconds since the connection was opened:

  ANSWERED n min=S max=S  streams that got their end (trailers) or RST_STREAM
  CLOSED n max=S refused=M  connections the server closed (EOF or GOAWAY)
                      after ending a stream; refused: before ending any
  GOAWAY code=C n     the GOAWAY error codes received, and how often
  OPEN n              connections still open when it stopped watching

It stops watching early once every accepted connection is closed, or at
SIGTERM; then closes every socket and prints DONE.
"""
import selectors
import signal
import socket
import struct
import sys
import time

port, count, streams, secs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
srcs = sys.argv[5:] or ["127.0.0.1"]
stop = False


def on_term(signum, frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def frame(t, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([t, flags]) + struct.pack(">I", sid) + payload


def lit(n, v):
    # A literal header field without indexing, no Huffman coding.
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v


HB = (lit(b":method", b"POST") + lit(b":scheme", b"http") + lit(b":authority", b"x") +
      lit(b":path", b"/hispeeddesign.idgen.v1.IdGeneratorService/GenerateId") +
      lit(b"content-type", b"application/grpc") + lit(b"te", b"trailers"))
HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0) + frame(4, 1, 0)


# The streams of connection i.
def requests(i):
    req = b""
    for k in range(streams):
        sid = 1 + 2 * k
        req += frame(1, 4, sid, HB)                                     # END_HEADERS only
        if (i + k) % 2 == 1:
            req += frame(0, 0, sid, b"\x00\x00\x00\x00\x0a" + b"\x0a\x00")  # 2 of 10 bytes
    return req


reqs = [requests(0), requests(1)]

sel = selectors.DefaultSelector()
conns = []          # [sock, opened_at, buffer, closed_at or None, answered stream ids]
refused = 0
for i in range(count):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((srcs[i % len(srcs)], 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    try:
        s.sendall(HELLO + reqs[i % 2])
    except OSError:
        refused += 1
        s.close()
        continue
    s.setblocking(False)
    c = [s, time.monotonic(), b"", None, set()]
    conns.append(c)
    sel.register(s, selectors.EVENT_READ, c)

answered, answered_min, answered_max, closed, closed_max = 0, 1e9, 0.0, 0, 0.0
goaways = {}        # GOAWAY error code: how many


def close(c, now):
    global closed, closed_max, refused
    c[3] = now
    sel.unregister(c[0])
    if not c[4]:       # closed before any of its streams ended: refused
        refused += 1
    else:
        closed += 1
        closed_max = max(closed_max, now - c[1])


def parse(c, now):
    """Consumes the complete frames in c's buffer; False once GOAWAY came."""
    global answered, answered_min, answered_max
    buf = c[2]
    while len(buf) >= 9:
        n = int.from_bytes(buf[0:3], "big")
        if len(buf) < 9 + n:
            break
        t, flags, sid = buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7fffffff
        payload, buf = buf[9:9 + n], buf[9 + n:]
        if t == 7:                      # GOAWAY: last stream id, error code, why
            code = int.from_bytes(payload[4:8], "big")
            goaways[code] = goaways.get(code, 0) + 1
            c[2] = buf
            return False
        # RST_STREAM, or the end of a (trailers-only) response; once a stream.
        if sid != 0 and (t == 3 or (t == 1 and flags & 1)) and sid not in c[4]:
            c[4].add(sid)
            answered += 1
            answered_min = min(answered_min, now - c[1])
            answered_max = max(answered_max, now - c[1])
    c[2] = buf
    return True


print("READY open=%d refused=%d" % (len(conns), refused), flush=True)
end = time.monotonic() + secs
live = len(conns)
while not stop and live > 0 and time.monotonic() < end:
    for key, _ in sel.select(timeout=0.2):
        c = key.data
        now = time.monotonic()
        try:
            data = c[0].recv(65536)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            data = b""
        if data:
            c[2] += data
            if parse(c, now):
                continue
        close(c, now)
        live -= 1
print("ANSWERED %d min=%.2f max=%.2f" % (answered, answered_min if answered else 0.0, answered_max))
print("CLOSED %d max=%.2f refused=%d" % (closed, closed_max, refused))
for code, k in sorted(goaways.items()):
    print("GOAWAY code=%d %d" % (code, k))
print("OPEN %d" % live, flush=True)
for c in conns:
    c[0].close()
print("DONE", flush=True)
