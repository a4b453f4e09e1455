#!/usr/bin/env bash
# gRPC with a real client: Debian's python3-grpcio, stubs generated now from the
# repo's proto/ by python3-grpc-tools. Both RPCs and the health check, every
# status code, a deadline that passes while a request waits, thousands of
# calls on one and on several channels, malformed HTTP/2 traffic (nghttp and
# raw sockets), and the fallback with both MariaDB servers killed. IDs collected
# across gRPC, the text protocol, RESP and HTTP in one run never repeat.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
grpc_stubs
IDS=$T_DIR/ids.txt
: >"$IDS"

pair_up
GP=$((SVC_PORT + 1))
HP=$((SVC_PORT + 2))
idserver_start svc "$SVC_PORT" --grpc_port "$GP" --http_port "$HP"
wait_buffered "$SVC_PORT"

# 1. Both RPCs, thousands of concurrent calls, health SERVING.
grpc_client "$GP" calls "$IDS" || fail "gRPC calls"
# caller_service is counted per caller (the client names itself "t").
curl -s "http://127.0.0.1:$HP/metrics" >"$T_DIR/metrics.txt"
grep -qE '^idgen_grpc_calls_total\{caller="t"\} [1-9][0-9]*$' "$T_DIR/metrics.txt" ||
	fail "no per-caller count: $(grep grpc_calls "$T_DIR/metrics.txt")"
lint=$(promtool check metrics <"$T_DIR/metrics.txt" 2>&1) && [ -z "$lint" ] || fail "promtool: $lint"
# Each call is in the gRPC request latency histogram (from its HEADERS to its status).
calls=$(awk -F'[{} ]' '$1 == "idgen_grpc_calls_total" { n += $NF } END { print n + 0 }' "$T_DIR/metrics.txt")
lat=$(awk '$1 == "idgen_request_duration_seconds_count{protocol=\"grpc\"}" { print $2 }' "$T_DIR/metrics.txt")
[ "${lat:-0}" -ge "$calls" ] && [ "$calls" -gt 0 ] ||
	fail "gRPC latency histogram counts ${lat:-none} calls, idgen_grpc_calls_total $calls"
# 2. Every status.
grpc_client "$GP" statuses || fail "gRPC statuses"

# 3. Malformed traffic; the service keeps serving others meanwhile.
printf '\x00\x00\x00\x00\x00' >"$T_DIR/empty-id.bin"	# GenerateIdRequest{}, empty
printf '\x00\x00\x00\x00\x09\x00' >"$T_DIR/short.bin"		# says 9 bytes, has 1
printf '\x00\x7f\xff\xff\xff' >"$T_DIR/huge.bin"			# says 2 GB
printf '\x01\x00\x00\x00\x00' >"$T_DIR/compressed.bin"			# compressed flag
nghttp_call() {	# nghttp_call FILE CONTENT-TYPE PATH: the response headers and trailers
	timeout 10 nghttp -v -n -d "$1" -H ':method: POST' -H "content-type: $2" -H 'te: trailers' \
		"http://127.0.0.1:$GP$3" 2>&1 | grep -oE '(:status|grpc-status): [0-9]+' | tr '\n' ' '
}
P=/hispeeddesign.idgen.v1.IdGeneratorService/GenerateId
out=$(nghttp_call "$T_DIR/short.bin" application/grpc "$P")
[[ "$out" == *"grpc-status: 3"* ]] || fail "truncated prefix: $out"
out=$(nghttp_call "$T_DIR/huge.bin" application/grpc "$P")
[[ "$out" == *"grpc-status: 3"* || "$out" == *"grpc-status: 8"* ]] || fail "oversized prefix: $out"
out=$(nghttp_call "$T_DIR/compressed.bin" application/grpc "$P")
[[ "$out" == *"grpc-status: 12"* ]] || fail "compressed flag: $out"
out=$(nghttp_call "$T_DIR/empty-id.bin" text/plain "$P")
[[ "$out" == *":status: 415"* ]] || fail "wrong content-type: $out"
out=$(nghttp_call "$T_DIR/empty-id.bin" application/grpc "$P")
[[ "$out" == *"grpc-status: 0"* ]] || fail "nghttp GenerateId: $out"
"$PY" - "$GP" <<'PY' || fail "raw HTTP/2 abuse"
import socket, struct, sys, time
port = int(sys.argv[1])
def conn():
    return socket.create_connection(("127.0.0.1", port), timeout=3)
# Garbage instead of the HTTP/2 preface: the connection is closed.
s = conn()
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + b"\x00" * 100)
buf = b""
try:
    while True:
        b = s.recv(4096)
        if not b:
            break
        buf += b
except socket.timeout:
    sys.exit("garbage preface: not closed")
# Many streams opened and abandoned (HEADERS without END_STREAM), then RST.
def frame(t, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([t, flags]) + struct.pack(">I", sid) + payload
s = conn()
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0))
# A literal header block: :method POST, :path, :scheme http, content-type (no Huffman).
def lit(n, v):
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v
hb = (lit(b":method", b"POST") + lit(b":scheme", b"http") + lit(b":authority", b"x") +
      lit(b":path", b"/hispeeddesign.idgen.v1.IdGeneratorService/GenerateId") +
      lit(b"content-type", b"application/grpc"))
data = b""
for sid in range(1, 400, 2):
    data += frame(1, 4, sid, hb)            # END_HEADERS, no END_STREAM
    if sid % 4 == 1:
        data += frame(3, 0, sid, struct.pack(">I", 8))   # RST_STREAM CANCEL
s.sendall(data)
time.sleep(0.3)
s.close()
print("raw HTTP/2: garbage preface closed; 200 streams opened and abandoned, half reset")
PY
grpc_client "$GP" calls "$IDS" || fail "gRPC calls after the abuse"
log "malformed: truncated/oversized prefix, compressed flag, wrong content-type, garbage, abandoned and reset streams"

# 4. The other protocols in the same run.
for _ in $(seq 200); do echo 'IDS 1000'; done | timeout 20 nc -N 127.0.0.1 "$SVC_PORT" |
	awk '{ for (i = 1; i <= NF; i++) print $i, 1 }' >>"$IDS"
redis-cli -p "$SVC_PORT" IDS 1000 | awk '{ print $1, 1 }' >>"$IDS"
curl -s "http://127.0.0.1:$HP/v1/ids?count=1000" | "$PY" -c '
import json, sys
for i in json.load(sys.stdin)["ids"]:
    print(i, 1)' >>"$IDS"

# 5. A deadline that passes while a request waits: servers hung (but not yet
# judged down), nothing buffered, a long refill wait.
idserver_start wait $((SVC_PORT + 3)) --grpc_port $((SVC_PORT + 4)) --refill_wait_ms 3000 \
	--query_timeout_ms 20000 --prefetch_blocks 1 --prefetch_max_blocks 1
kill -STOP "$(db_pid odd)" "$(db_pid even)"
drain_all $((SVC_PORT + 3))
grpc_client $((SVC_PORT + 4)) deadline || { kill -CONT "$(db_pid odd)" "$(db_pid even)"; fail "gRPC deadline"; }
kill -CONT "$(db_pid odd)" "$(db_pid even)"

# 6. No server and no lease: UNAVAILABLE with a clear message, health NOT_SERVING.
idserver_start dead $((SVC_PORT + 5)) --grpc_port $((SVC_PORT + 6)) --odd_port 1 --even_port 2
grpc_client $((SVC_PORT + 6)) unavailable || fail "gRPC unavailable"

# 7. Both MariaDB servers killed: calls keep succeeding, with Snowflake IDs.
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
drain_all "$SVC_PORT"
grpc_client "$GP" fallback "$IDS" || fail "gRPC in fallback"

n=$(check_unique "$IDS") || fail "DUPLICATE IDs across gRPC, text, RESP and HTTP"
log "ok: $n IDs over gRPC, text, RESP and HTTP, no duplicate"
