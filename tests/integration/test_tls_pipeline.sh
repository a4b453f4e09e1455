#!/usr/bin/env bash
# Large pipelined bursts on the TLS text/RESP port (issue 31, item 3): a
# connection that pauses (its replies over a bound, its share of a turn used
# up) must, when it goes on, process the input the TLS session already
# decrypted, with no new bytes on the socket to wake it. With real clients:
#  1. 4,000 text ID lines in one write over TLS: 4,000 replies, no more bytes sent;
#  2. ioredis pipelining 10,000 ID commands (and a PING) over TLS, every reply
#     checked (tests/js/redis_pipeline.js);
#  3. redis-benchmark --tls -P 1000: every request answered (it waits for them
#     all), the server's request count grown by as many;
# and the same burst and ioredis pipeline in cleartext. Every ID taken is checked
# distinct.
. "$(dirname "$0")/lib.sh"

JS=$ROOT/tests/js
PY=/usr/bin/python3
TLS_PORT=$((SVC_PORT + 1))
IDS=$T_DIR/ids.txt
: >"$IDS"
command -v node >/dev/null || fail "node not found (make deps)"
[ -d "$JS/node_modules/ioredis" ] || fail "tests/js/node_modules missing: run make deps"
command -v redis-benchmark >/dev/null || fail "redis-benchmark not found (redis-tools, make deps)"
tls_ca ca
tls_leaf server ca
CA=$TLS_DIR/ca-cert.pem

pair_up
idserver_start svc "$SVC_PORT"
# The TLS twin: the same settings, its text/RESP port behind TLS.
IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") "$IDSERVER" --odd_port "$ODD_PORT" \
	--even_port "$EVEN_PORT" --listen_port "$TLS_PORT" --state_file "$T_DIR/tls.state" \
	--listen_tls on --tls_cert_file "$TLS_DIR/server-cert.pem" \
	--tls_key_file "$TLS_DIR/server-key.pem" >"$T_DIR/tls.log" 2>&1 &
tls_PID=$!
PIDS+=("$tls_PID")
tstat() {
	printf 'STATS\nQUIT\n' | timeout 10 openssl s_client -quiet -CAfile "$CA" \
		-connect "127.0.0.1:$TLS_PORT" 2>/dev/null | awk -v n="$1" '$1 == "STAT" && $2 == n { print $3 }'
}
wait_for "the TLS port answers" 10 bash -c "[ \"\$(printf 'PING\nQUIT\n' | timeout 5 openssl s_client \
	-quiet -CAfile '$CA' -connect 127.0.0.1:$TLS_PORT 2>/dev/null)\" = PONG ]"
tls_stat() { tstat "$2"; }	# wait_buffered's reader of TLS_PORT
wait_buffered "$SVC_PORT"
wait_buffered "$TLS_PORT" tls_stat

# burst PORT N [tls]: N ID lines in one write, then reads until N replies or
# 10 s pass with none; prints how many came (the IDs go to $IDS).
burst() {
	$PY - "$1" "$2" "${3:-}" "$CA" "$IDS" <<'PY'
import socket, ssl, sys, time
port, n, tls, ca, dump = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
s = socket.create_connection(("127.0.0.1", port), timeout=10)
if tls:
    s = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname="localhost")
s.sendall(b"ID\n" * n)		# one write: one or two TLS records, nothing after
buf, got = b"", []
s.settimeout(10)
try:
    while len(got) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        got += lines
except socket.timeout:
    pass
ids = [l for l in got if l.isdigit()]
open(dump, "a").writelines("%s 1\n" % i.decode() for i in ids)
print(len(ids))
PY
}

n=$(burst "$SVC_PORT" 4000)
[ "$n" = 4000 ] || fail "cleartext: 4,000 ID lines in one write got $n IDs"
n=$(burst "$TLS_PORT" 4000 tls)
[ "$n" = 4000 ] || fail "TLS: 4,000 ID lines in one write got $n IDs (no more bytes sent)"
log "1. 4,000 ID lines in one write: 4,000 IDs, cleartext and over TLS"

js() {
	(cd "$ROOT" && NODE_PATH=$JS/node_modules timeout 120 node tests/js/redis_pipeline.js "$@") \
		>"$T_DIR/js.out" 2>&1 || fail "ioredis: $(tail -n 5 "$T_DIR/js.out")"
	log "$(cat "$T_DIR/js.out")"
}
js 127.0.0.1 "$SVC_PORT" 10000 "$IDS"
js 127.0.0.1 "$TLS_PORT" 10000 "$IDS" --ca "$CA"
log "2. ioredis: 10,000 pipelined IDs, cleartext and over TLS, every reply checked"

# redis-benchmark waits for every reply of its pipelines: a lost one hangs it
# (the timeout, then the failure), an error reply makes it say so.
r0=$(tstat requests)
N=200000
out=$(timeout 120 redis-benchmark --tls --cacert "$CA" -h 127.0.0.1 -p "$TLS_PORT" -c 4 -n $N \
	-P 1000 --csv ID 2>&1) || fail "redis-benchmark --tls -P 1000: rc $?: $(tail -n 3 <<<"$out")"
! grep -qiE 'error|ERR ' <<<"$out" || fail "redis-benchmark --tls: $(grep -iE 'error|ERR ' <<<"$out" | head -n 3)"
r1=$(tstat requests)
[ $((r1 - r0)) -ge $N ] || fail "redis-benchmark --tls: the server answered $((r1 - r0)) requests, want $N"
log "3. redis-benchmark --tls -c 4 -P 1000 -n $N ID: $(grep -E '^"ID' <<<"$out" | cut -d, -f2 | tr -d '"') requests/s, every one answered"

n=$(check_unique "$IDS") || fail "DUPLICATE IDs"
log "OK: $n IDs from the bursts and ioredis, none twice"
