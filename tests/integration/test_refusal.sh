#!/usr/bin/env bash
# A client refused at accept gets an error in its own protocol (issue 17): a
# Redis client (redis-py) over max_clients_per_ip gets a RESP error it raises
# as ResponseError, a text client the documented ERR line, and a client that
# sends nothing the text line after refusal_wait_ms. At max_clients a new
# client is served and the connection least recently served is closed with the
# error in its own protocol (issue 31): RESP "-UNAVAILABLE evicted: ...", text
# "ERR UNAVAILABLE evicted: ...". The others are still served.
. "$(dirname "$0")/lib.sh"

pair_up
idserver_start svc "$SVC_PORT" --max_clients 3 --max_clients_per_ip 2 --refusal_wait_ms 200
wait_buffered "$SVC_PORT"
/usr/bin/python3 - "$SVC_PORT" <<'PY' || fail "refusals"
import socket, sys, time
import redis
port = int(sys.argv[1])

def conn(src="127.0.0.1"):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.settimeout(5)
    return s

def reply(s, data=b""):
    if data:
        s.sendall(data)
    out = b""
    while not out.endswith(b"\n"):
        b = s.recv(200)
        if not b:
            break
        out += b
    return out

held = [conn(), conn()]
held[0].sendall(b"*1\r\n$4\r\nPING\r\n")
assert held[0].recv(100) == b"+PONG\r\n"
held[1].sendall(b"PING\n")
assert held[1].recv(100) == b"PONG\n"
# Over max_clients_per_ip: redis-py parses the refusal as an error reply.
r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
try:
    r.execute_command("ID")
    sys.exit("redis-py was served over max_clients_per_ip")
except redis.exceptions.ResponseError as e:
    assert str(e) == "UNAVAILABLE too many connections from your address (max_clients_per_ip)", str(e)
    print("redis-py: ResponseError %r" % str(e))
# The same for a text client, byte for byte as documented.
line = reply(conn(), b"ID\n")
assert line == b"ERR UNAVAILABLE too many connections from your address (max_clients_per_ip)\n", line
# A client that says nothing gets the text line once refusal_wait_ms has passed.
t0 = time.time()
line = reply(conn())
assert line.startswith(b"ERR UNAVAILABLE too many connections from your address"), line
assert 0.15 < time.time() - t0 < 3, time.time() - t0
# At max_clients (a third address fills the last slot), a new client is served
# in the slot of the connection least recently served, which is told why in its
# protocol (issue 31): held[0] (RESP), then held[1] (text).
third = conn("127.0.0.2")
third.sendall(b"PING\n")
assert third.recv(100) == b"PONG\n"
EVICTED = (b"UNAVAILABLE evicted: the server is at max_clients and this connection "
           b"was the one longest without a request served")
new = conn("127.0.0.3")
assert reply(new, b"*1\r\n$2\r\nID\r\n")[:1] == b":"
assert reply(held[0]) == b"-" + EVICTED + b"\r\n"
assert reply(conn("127.0.0.3"), b"ID\n").strip().isdigit()
assert reply(held[1]) == b"ERR " + EVICTED + b"\n"
# The others are still served.
for s in [third, new]:
    s.sendall(b"PING\n")
    assert s.recv(100) in (b"PONG\n", b"+PONG\r\n")
print("refusals and evictions in the client's protocol: RESP and text")
PY
[ "$(stat "$SVC_PORT" rejected_per_ip)" -ge 3 ] || fail "rejected_per_ip $(stat "$SVC_PORT" rejected_per_ip)"
log "ok"
