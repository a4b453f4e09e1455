#!/usr/bin/env bash
# Slow and hostile local clients: idle connections and a request left
# unfinished are closed (idle_timeout_ms, partial_timeout_ms) in the text
# protocol and in RESP; a client that reads its replies a trickle at a time is
# dropped once its replies have not all been taken for write_timeout_ms; one
# address cannot take more than max_clients_per_ip slots. Well-behaved clients
# are served throughout.
. "$(dirname "$0")/lib.sh"

pair_up
idserver_start svc "$SVC_PORT" --idle_timeout_ms 1500 --partial_timeout_ms 700 \
	--write_timeout_ms 1500 --max_clients_per_ip 40 --max_output_bytes 65536
wait_buffered "$SVC_PORT"
st() { stat "$SVC_PORT" "$1"; }

python3 - "$SVC_PORT" <<'PY' || fail "slow clients"
import socket, sys, time
port = int(sys.argv[1])
def conn(host="127.0.0.1"):
    s = socket.create_connection((host, port), timeout=10)
    return s
def closed(s, within):
    s.settimeout(within)
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return True
    except socket.timeout:
        return False
    except OSError:
        return True
def ask(line=b"PING\n"):
    s = conn()
    s.sendall(line)
    s.shutdown(socket.SHUT_WR)
    return s.recv(100)
# 1. Idle: 20 connections that send nothing, 10 that finished a request and
# went quiet (text and RESP): closed after idle_timeout_ms (1.5 s), not before.
idle = [conn() for _ in range(20)]
quiet = []
for i in range(10):
    s = conn()
    s.sendall(b"PING\n" if i % 2 else b"*1\r\n$4\r\nPING\r\n")
    s.recv(100)
    quiet.append(s)
t0 = time.time()
time.sleep(0.9)
assert ask() == b"PONG\n"
assert not any(closed(s, 0.01) for s in idle + quiet), "closed before idle_timeout_ms"
assert all(closed(s, 3) for s in idle + quiet), "idle connections not closed"
print("idle: 30 connections closed after %.1f s" % (time.time() - t0))
# 2. Partial: a request begun and never finished, however slowly it trickles,
# is closed after partial_timeout_ms (0.7 s) from its first byte.
parts = []
for req in (b"IDS 10", b"*2\r\n$3\r\nIDS\r\n$2\r\n1"):
    s = conn()
    s.sendall(req[:1])
    parts.append((s, req))
t0 = time.time()
for k in range(1, 6):
    time.sleep(0.1)
    for s, req in parts:
        try:
            s.sendall(req[k:k + 1])
        except OSError:
            pass
assert all(closed(s, 3) for s, _ in parts), "partial requests not closed"
el = time.time() - t0
assert 0.5 < el < 2.5, "partial closed after %.1f s" % el
print("partial: trickled requests closed after %.1f s" % el)
# 3. A reader of a trickle: its replies are never all taken, so it is dropped
# (reset: the kernel discards what it still held) about write_timeout_ms
# (1.5 s) after it fell behind, though it keeps reading.
import threading
def stat(name):
    s = conn()
    s.sendall(b"STATS\n")
    s.shutdown(socket.SHUT_WR)
    buf = b""
    while not buf.endswith(b"END\n"):
        b = s.recv(65536)
        if not b:
            break
        buf += b
    for line in buf.decode().splitlines():
        w = line.split()
        if len(w) == 3 and w[1] == name:
            return int(w[2])
    return -1
before = stat("write_timeouts")
stop = False
def trickle():
    s = conn()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"IDS 1000\n" * 2000)
    s.settimeout(0.2)
    while not stop:
        try:
            if not s.recv(64):
                return
        except socket.timeout:
            pass
        except OSError:
            return
        time.sleep(0.05)
t = threading.Thread(target=trickle)
t0 = time.time()
t.start()
while time.time() - t0 < 8 and stat("write_timeouts") == before:
    time.sleep(0.1)
el = time.time() - t0
stop = True
t.join()
assert stat("write_timeouts") == before + 1, "a trickling reader was never dropped"
assert 1.0 < el < 5, "dropped after %.1f s" % el
print("trickling reader dropped after %.1f s" % el)
# 4. One address gets max_clients_per_ip (40) slots; others still get theirs.
held = [conn() for _ in range(40)]
extra = conn()
line = extra.recv(200)
assert line == b"ERR UNAVAILABLE too many connections from your address (max_clients_per_ip)\n", line
for s in held:
    s.close()
time.sleep(0.2)
assert ask() == b"PONG\n"
print("per-address limit: the 41st connection refused")
PY
[ "$(st idle_timeouts)" -ge 30 ] || fail "idle_timeouts $(st idle_timeouts), want >= 30"
[ "$(st partial_timeouts)" -ge 2 ] || fail "partial_timeouts $(st partial_timeouts), want >= 2"
[ "$(st write_timeouts)" -ge 1 ] || fail "write_timeouts $(st write_timeouts)"
[ "$(st rejected_per_ip)" -ge 1 ] || fail "rejected_per_ip $(st rejected_per_ip)"
log "ok: idle, partial, trickling and per-address bounds hold; counters: idle $(st idle_timeouts) partial $(st partial_timeouts) write $(st write_timeouts) per-ip $(st rejected_per_ip)"
