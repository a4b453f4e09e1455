#!/usr/bin/env bash
# Every line of nasty.txt on a live service: the expected reply, then PONG.
. "$(dirname "$0")/lib.sh"

pair_up
# The smallest output bound, so pipelined big replies hit it.
idserver_start svc "$SVC_PORT" --max_output_bytes 65536 --max_requests_per_event 16 \
	--write_timeout_ms 1000
wait_buffered "$SVC_PORT"

n=0
while IFS=$'\t' read -r req want; do
	case "$req" in '#'*) continue ;; esac
	got=$(q "$SVC_PORT" "$req\nPING\n")
	first=$(printf '%s\n' "$got" | sed -n 1p)
	[[ "$first" =~ $want ]] || fail "request '$req': got '$first', want /$want/"
	[ "$(printf '%s\n' "$got" | sed -n 2p)" = PONG ] || fail "request '$req' closed the connection"
	n=$((n + 1))
done <"$(dirname "$0")/nasty.txt"

# 10,000 garbage requests pipelined in one write: one reply each, in order.
out=$(head -c 200000 /dev/urandom | tr -dc 'A-Za-z0-9 \n' | head -n 10000 |
	awk '{ print "X" $0 } END { print "PING" }' | timeout 20 nc -N 127.0.0.1 "$SVC_PORT" | tail -n 1)
[ "$out" = PONG ] || fail "garbage flood: last reply '$out'"

# A line longer than 1024 bytes without LF: error, then the connection closes.
out=$(head -c 5000 /dev/zero | tr '\0' 'x' | timeout 10 nc -N 127.0.0.1 "$SVC_PORT")
[ "$out" = "ERR BADREQ line too long" ] || fail "unterminated long line: '$out'"
# ... also when it is the unterminated last line before EOF (1025 bytes).
out=$(head -c 1025 /dev/zero | tr '\0' 'x' | timeout 10 nc -N 127.0.0.1 "$SVC_PORT")
[ "$out" = "ERR BADREQ line too long" ] || fail "1025-byte line at EOF: '$out'"
# Exactly 1024 bytes is still a (bad) request, not a long line.
out=$(q "$SVC_PORT" "$(head -c 1024 /dev/zero | tr '\0' 'y')\nPING\n" | tail -n 1)
[ "$out" = PONG ] || fail "1024-byte line closed the connection"

# 3,000 pipelined IDS 1000 (52 MB of replies, sent as fast as the service
# takes them): the output bound pauses the client, never loses a request; every
# reply complete. The reader is connected before the first byte is sent (a
# reader still starting up under load would be dropped by write_timeout_ms).
python3 - "$SVC_PORT" <<'PY' || fail "pipelined big replies"
import socket, sys, threading
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
def send():
    s.sendall(b"IDS 1000\n" * 3000)
    s.shutdown(socket.SHUT_WR)
threading.Thread(target=send, daemon=True).start()
n = 0
for line in s.makefile("rb"):
    ids = list(map(int, line.split()))
    assert len(ids) == 1000 and ids == sorted(set(ids)), "bad reply %d: %d IDs" % (n, len(ids))
    n += 1
sys.exit(0 if n == 3000 else "%d replies to 3000 requests" % n)
PY

# A client that sends a pipeline and never reads its replies is dropped after
# write_timeout_ms (1 s here), and nothing else is disturbed.
before=$(stat "$SVC_PORT" write_timeouts)
python3 - "$SVC_PORT" <<'PY' || fail "a client that never reads was not dropped"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.sendall(b"IDS 1000\n" * 3000)
deadline = time.time() + 8
while time.time() < deadline:
    time.sleep(0.2)
    try:
        s.send(b"PING\n")       # fails once the server has closed
    except OSError:
        sys.exit(0)
sys.exit(1)
PY
[ "$(stat "$SVC_PORT" write_timeouts)" -gt "$before" ] || fail "write_timeouts not counted"

# The service survived all of it.
[ "$(q "$SVC_PORT" 'PING\n')" = PONG ] || fail "service stopped answering"
log "ok: $n nasty requests"
