"""lockout.py KIND PORT COUNT RENEW SECONDS SRC... - connections that take slots
and never complete a request that returns IDs, for test_lockout.sh (raw sockets,
no library).

KIND text: each connection sends PING (every second one in RESP) and reads the
reply (PONG, or NOAUTH when tokens are on), then stays idle, sending PING again every RENEW seconds (0: never).
KIND grpc: each connection sends the HTTP/2 preface, SETTINGS and the HEADERS
of a GenerateId stream that never ends, then the HEADERS of a new such stream
every RENEW seconds (0: never).
KIND grpc-token: as grpc, with "authorization: Bearer nosuchtoken..." sent.

COUNT connections go round-robin over the source addresses SRC (127.0.0.x); one
the server closes is opened again at once, as an attacker keeping every slot.
Prints "READY open=N refused=M" once all are open, then watches for at most
SECONDS (or until SIGTERM) and prints:

  CLOSED n evicted=E  connections the server closed; E of them said
                      "evicted" (text/RESP: the error line; gRPC: GOAWAY's
                      debug data or a stream's grpc-message)
  OPEN n              connections still open
  DONE
"""
import selectors
import signal
import socket
import struct
import sys
import time

kind, port, count, renew, secs = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                  float(sys.argv[4]), float(sys.argv[5]))
srcs = sys.argv[6:] or ["127.0.0.1"]
stop = False


def on_term(signum, frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def frame(t, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([t, flags]) + struct.pack(">I", sid) + payload


def lit(n, v):
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v


HB = (lit(b":method", b"POST") + lit(b":scheme", b"http") + lit(b":authority", b"x") +
      lit(b":path", b"/hispeeddesign.idgen.v1.IdGeneratorService/GenerateId") +
      lit(b"content-type", b"application/grpc") + lit(b"te", b"trailers"))
if kind == "grpc-token":
    HB += lit(b"authorization", b"Bearer nosuchtoken-nosuchtoken")
HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0) + frame(4, 1, 0)


def ping(i):
    return b"*1\r\n$4\r\nPING\r\n" if i % 2 else b"PING\r\n"


sel = selectors.DefaultSelector()
conns = []          # [sock, index, buffer, next stream id]
refused = 0


def opened(i):
    """Connection i, its request sent (text: its reply read); None if refused."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((srcs[i % len(srcs)], 0))
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        if kind == "text":
            s.sendall(ping(i))
            if not s.recv(100):       # PONG, or with tokens on a NOAUTH error
                raise OSError("no reply")
        else:
            s.sendall(HELLO + frame(1, 4, 1, HB))
    except OSError:
        s.close()
        return None
    s.setblocking(False)
    c = [s, i, b"", 3]
    sel.register(s, selectors.EVENT_READ, c)
    return c


for i in range(count):
    c = opened(i)
    if c is None:
        refused += 1
    else:
        conns.append(c)

print("READY open=%d refused=%d" % (len(conns), refused), flush=True)
closed = evicted = 0
reconnect = True
live = len(conns)
end = time.monotonic() + secs
next_renew = time.monotonic() + renew if renew > 0 else float("inf")
while not stop and live > 0 and time.monotonic() < end:
    if time.monotonic() >= next_renew:
        next_renew += renew
        for c in conns:
            if c[0] is None:
                continue
            try:
                if kind == "text":
                    c[0].send(ping(c[1]))
                else:
                    c[0].send(frame(1, 4, c[3], HB))
                    c[3] += 2
            except OSError:
                pass
    for key, _ in sel.select(timeout=0.1):
        c = key.data
        try:
            data = c[0].recv(65536)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            data = b""
        if data:
            c[2] = (c[2] + data)[-4096:]
            continue
        if b"evicted" in c[2]:
            evicted += 1
        closed += 1
        sel.unregister(c[0])
        c[0].close()
        c[0] = None
        # The slot is taken again at once, as an attacker would.
        if reconnect:
            n = opened(c[1])
            if n is not None:
                conns.append(n)
                continue
        live -= 1
print("CLOSED %d evicted=%d" % (closed, evicted))
print("OPEN %d" % live, flush=True)
for c in conns:
    if c[0] is not None:
        c[0].close()
print("DONE", flush=True)
