#!/usr/bin/env bash
# TLS on idserver's own listeners (issue 21; docs/design.md section 7.1), with
# certificates of a throwaway CA made here:
#  1. text, RESP, HTTP and gRPC over TLS with real clients: openssl s_client
#     (text, and 200 pipelined IDS 1000 past max_output_bytes), redis-cli --tls and redis-py ssl=True (RESP), curl --cacert (HTTP),
#     grpcio ssl_channel_credentials (gRPC, ALPN h2); the gRPC port shows its own
#     certificate (grpc_tls_cert_file), the others the shared one.
#  2. Refused by the client: another CA, a name the certificate does not carry.
#     Refused by the server: TLS 1.1 (tls_min_version), a client certificate of
#     another CA (tls_verify_client = optional: none at all is served, part 1);
#     cleartext on a TLS port gets no ID and leaves the server serving.
#  3. A handshake flood is bounded like cleartext connections: silent
#     connections take max_clients_per_ip slots, one more is closed at accept,
#     and each is dropped after tls_handshake_timeout_ms. A client that never
#     reads is dropped by write_timeout_ms, as in cleartext.
#  4. SIGHUP reload: an expired certificate (the client refuses it), then a
#     file that does not load (the old certificate stays, one log line), then a
#     new certificate, seen by a new connection; /metrics gives the notAfter
#     of each listener's certificate, as loaded.
#  5. Client certificates required (mTLS), TLS 1.3 only, and tokens
#     (auth_tokens_file): with a client certificate and a token every protocol
#     serves, without a certificate each is refused in the handshake, without a
#     token by the protocol (NOAUTH, 401, UNAUTHENTICATED); TLS 1.2 is refused.
# Before them (0.), settings that cannot work are refused with one line, and a
# key that does not match its certificate stops the start. Every ID taken is
# checked distinct.
. "$(dirname "$0")/lib.sh"

TLS=$TLS_DIR	# lib.sh's tls_ca and tls_leaf make the certificates there
IDS=$T_DIR/ids.txt
PY=/usr/bin/python3
HTTP_PORT=$((SVC_PORT + 1)) GRPC_PORT=$((SVC_PORT + 2))
M_PORT=$((SVC_PORT + 3)) M_HTTP=$((SVC_PORT + 4)) M_GRPC=$((SVC_PORT + 5))
mkdir -p "$TLS"
: >"$IDS"

tls_ca ca; tls_ca otherca
tls_leaf server ca; tls_leaf grpc ca; tls_leaf renewed ca; tls_leaf client ca
tls_leaf expired ca "$(date -d '-2 days' '+%Y-%m-%d %H:%M:%S')"
# The files the service reads: replaced in place for the reloads of part 4.
cp "$TLS/server-cert.pem" "$TLS/live-cert.pem"; cp "$TLS/server-key.pem" "$TLS/live-key.pem"
CA=$TLS/ca-cert.pem
CCERT=(--cert "$TLS/client-cert.pem" --key "$TLS/client-key.pem")

# tq PORT FORMAT [s_client options...]: the text protocol over TLS (QUIT ends it).
tq() {
	local port=$1 fmt=$2
	shift 2
	printf "$fmt" | timeout 10 openssl s_client -quiet -verify_return_error -CAfile "$CA" \
		-connect "127.0.0.1:$port" "$@" 2>/dev/null
}
# tstat PORT NAME: one STATS value over TLS.
tstat() { tq "$1" 'STATS\nQUIT\n' | awk -v n="$2" '$1 == "STAT" && $2 == n { print $3 }'; }
# subject PORT [s_client options...]: the CN of the certificate a new connection gets.
subject() {
	local port=$1
	shift
	timeout 10 openssl s_client -connect "127.0.0.1:$port" "$@" </dev/null 2>/dev/null |
		openssl x509 -noout -subject 2>/dev/null | sed 's/.*CN *= *//'
}
# keep: numbers on stdin, one or more per line, appended to the IDs; prints how many.
keep() { tr -s ' \t' '\n\n' | grep -E '^[0-9]+$' | tee -a "$IDS" | wc -l; }
# tls_start NAME PORT FLAGS...: an idserver whose text port speaks TLS; waits for PONG.
tls_start() {
	local name=$1 port=$2 pid
	shift 2
	IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") "$IDSERVER" --odd_port "$ODD_PORT" \
		--even_port "$EVEN_PORT" --listen_port "$port" --state_file "$T_DIR/$name.state" \
		"$@" >"$T_DIR/$name.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	eval "${name}_PID=$pid"
	for _ in $(seq 1 100); do
		[ "$(tq "$port" 'PING\nQUIT\n' "${TQ_OPTS[@]}")" = PONG ] && return 0
		alive "$pid" || fail "$name exited at start: $(tail -n 3 "$T_DIR/$name.log")"
		sleep 0.1
	done
	fail "$name did not answer PING over TLS on port $port within 10 s"
}
# curl_rc NAME ARGS...: curl's exit status (0 on success), its output in $T_DIR/NAME.out.
curl_rc() {
	local name=$1 rc=0
	shift
	timeout 10 curl -sS --max-time 5 "$@" >"$T_DIR/$name.out" 2>&1 || rc=$?
	echo $rc
}
ids_json() { $PY -c 'import json, sys; d = json.load(sys.stdin); print(*(d.get("ids_str") or [d["id_str"]]))'; }

# 0. Settings that would look like protection and be cleartext, or cannot work:
# one line each, exit status 2 (before any database is reached).
bad() {
	local want=$1 rc=0 out
	shift
	out=$("$IDSERVER" --state_file "" "$@" 2>&1) || rc=$?
	[ $rc = 2 ] && grep -qF -- "$want" <<<"$out" || fail "idserver $*: exit $rc, '$out' (want 2 and '$want')"
}
bad 'listen_tls = on needs a certificate and key' --listen_tls on
bad 'every listener is cleartext' --tls_cert_file "$TLS/server-cert.pem" --tls_key_file "$TLS/server-key.pem"
bad 'tls_cert_file and tls_key_file go together' --listen_tls on --tls_cert_file "$TLS/server-cert.pem"
bad 'http_tls is off but http_tls_cert_file is set' --listen_tls on --tls_cert_file "$TLS/server-cert.pem" \
	--tls_key_file "$TLS/server-key.pem" --http_tls_cert_file "$TLS/grpc-cert.pem" --http_tls_key_file "$TLS/grpc-key.pem"
bad 'tls_verify_client = required needs tls_ca_file' --listen_tls on --tls_cert_file "$TLS/server-cert.pem" \
	--tls_key_file "$TLS/server-key.pem" --tls_verify_client required
bad "tls_min_version: 'TLSv1.1' is not one of TLSv1.2|TLSv1.3" --tls_min_version TLSv1.1
bad "grpc_tls: 'yes' is not one of off|on" --grpc_tls yes
log "0. TLS settings that cannot work refused at start, exit 2"

pair_up
grpc_stubs
TQ_OPTS=()
# A key that does not match its certificate: one line naming the setting, exit 1.
rc=0
IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") timeout 20 "$IDSERVER" --odd_port "$ODD_PORT" \
	--even_port "$EVEN_PORT" --listen_port "$SVC_PORT" \
	--state_file "$T_DIR/mismatch.state" --listen_tls on --tls_cert_file "$TLS/server-cert.pem" \
	--tls_key_file "$TLS/grpc-key.pem" >"$T_DIR/mismatch.log" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "refusing to start: cannot load the key '.*grpc-key.pem': .*key values mismatch (tls_key_file)" \
	"$T_DIR/mismatch.log" || fail "a key of another certificate: exit $rc, $(tail -n 1 "$T_DIR/mismatch.log")"

# 1. Every protocol over TLS.
tls_start svc "$SVC_PORT" --listen_tls on --http_port "$HTTP_PORT" --http_tls on \
	--grpc_port "$GRPC_PORT" --grpc_tls on --tls_cert_file "$TLS/live-cert.pem" \
	--tls_key_file "$TLS/live-key.pem" --grpc_tls_cert_file "$TLS/grpc-cert.pem" \
	--grpc_tls_key_file "$TLS/grpc-key.pem" --tls_handshake_timeout_ms 1000 \
	--max_clients_per_ip 30 --write_timeout_ms 1000 --http_timeout_ms 1000 \
	--tls_ca_file "$CA" --tls_verify_client optional
wait_buffered "$SVC_PORT" tstat
n=$(tq "$SVC_PORT" 'ID\nIDS 3\nQUIT\n' | keep)
[ "$n" = 4 ] || fail "text over TLS: $n IDs, want 4"
# 200 pipelined IDS 1000: 1.9 MB of replies, past max_output_bytes (1 MB), in order.
n=$( { for _ in $(seq 200); do echo 'IDS 1000'; done; echo QUIT; } |
	timeout 20 openssl s_client -quiet -CAfile "$CA" -connect "127.0.0.1:$SVC_PORT" 2>/dev/null | keep)
[ "$n" = 200000 ] || fail "200 pipelined IDS 1000 over TLS: $n IDs, want 200000"
n=$( { redis-cli --tls --cacert "$CA" -p "$SVC_PORT" ID; redis-cli --tls --cacert "$CA" -p "$SVC_PORT" IDS 3; } | keep)
[ "$n" = 4 ] || fail "redis-cli --tls: $n IDs, want 4"
n=$($PY "$ROOT/tests/integration/tls_client.py" redis "$SVC_PORT" "$CA" | keep)
[ "$n" = 1001 ] || fail "redis-py ssl=True: $n IDs, want 1001"
n=$( { curl -sS --cacert "$CA" "https://127.0.0.1:$HTTP_PORT/v1/id" | ids_json
	curl -sS --cacert "$CA" "https://localhost:$HTTP_PORT/v1/ids?count=3" | ids_json; } | keep)
[ "$n" = 4 ] || fail "curl https: $n IDs, want 4"
n=$($PY "$ROOT/tests/integration/tls_client.py" grpc "$T_DIR/py" "$GRPC_PORT" "$CA" | keep)
[ "$n" = 1020 ] || fail "grpcio over TLS: $n IDs, want 1020"
[ "$(subject "$GRPC_PORT" -alpn h2)" = "idgen test grpc" ] || fail "gRPC port: not its own certificate"
[ "$(subject "$HTTP_PORT")" = "idgen test server" ] || fail "HTTP port: not tls_cert_file's certificate"
timeout 10 openssl s_client -connect "127.0.0.1:$GRPC_PORT" -alpn h2 </dev/null 2>/dev/null |
	grep -q '^ALPN protocol: h2' || fail "gRPC port: ALPN h2 not selected"
log "1. text (s_client), RESP (redis-cli, redis-py), HTTP (curl), gRPC (grpcio, ALPN h2) over TLS: $(wc -l <"$IDS") IDs"

# 2. Refusals. Another CA and another name: the clients refuse.
rc=$(curl_rc otherca --cacert "$TLS/otherca-cert.pem" "https://127.0.0.1:$HTTP_PORT/v1/id")
[ "$rc" = 60 ] || fail "curl with another CA exited $rc, want 60: $(cat "$T_DIR/otherca.out")"
rc=$(curl_rc wronghost --cacert "$CA" --resolve "ids.example:$HTTP_PORT:127.0.0.1" \
	"https://ids.example:$HTTP_PORT/v1/id")
[ "$rc" = 60 ] && grep -q 'subject name' "$T_DIR/wronghost.out" ||
	fail "curl for a name the certificate lacks exited $rc: $(cat "$T_DIR/wronghost.out")"
# tls_verify_client = optional: no certificate is served (part 1), one of this CA
# too, one of another CA is refused by the server.
n=$(curl -sS --cacert "$CA" "${CCERT[@]}" "https://127.0.0.1:$HTTP_PORT/v1/ids?count=2" | ids_json | keep)
[ "$n" = 2 ] || fail "optional client certificate of the CA: $n IDs, want 2"
rc=$(curl_rc optother --cacert "$CA" --cert "$TLS/otherca-cert.pem" --key "$TLS/otherca-key.pem" \
	"https://127.0.0.1:$HTTP_PORT/v1/id")
[ "$rc" != 0 ] && ! grep -q id_str "$T_DIR/optother.out" || fail "optional: a client certificate of another CA was served"
! redis-cli --tls --cacert "$TLS/otherca-cert.pem" -p "$SVC_PORT" ID 2>&1 | has -E '^[0-9]+$' ||
	fail "redis-cli took an ID from a server its CA did not sign"
rc=0; $PY "$ROOT/tests/integration/tls_client.py" grpc "$T_DIR/py" "$GRPC_PORT" \
	"$TLS/otherca-cert.pem" >"$T_DIR/grpc-otherca.out" 2>&1 || rc=$?
[ $rc = 3 ] || fail "grpcio with another CA exited $rc, want 3: $(tail -n 2 "$T_DIR/grpc-otherca.out")"
# TLS 1.1 (the client allowed to offer it): the server's protocol_version alert.
for p in "$SVC_PORT" "$HTTP_PORT" "$GRPC_PORT"; do
	out=$(timeout 10 openssl s_client -connect "127.0.0.1:$p" -tls1_1 -cipher 'DEFAULT@SECLEVEL=0' \
		</dev/null 2>&1 || true)
	grep -qE 'alert protocol version|unsupported protocol' <<<"$out" ||
		fail "TLS 1.1 on port $p not refused by the server: $(head -n 3 <<<"$out")"
done
# TLS 1.2 ciphers (tls_ciphers' default): CBC suites refused by the server, with an
# RSA or an ECDSA key exchange; the AEAD suites of the default served.
for p in "$SVC_PORT" "$HTTP_PORT" "$GRPC_PORT"; do
	for c in AES128-SHA ECDHE-ECDSA-AES128-SHA ECDHE-ECDSA-AES256-SHA384; do
		out=$(timeout 10 openssl s_client -connect "127.0.0.1:$p" -tls1_2 -cipher "$c" </dev/null 2>&1 || true)
		grep -qE 'alert handshake failure|no cipher' <<<"$out" && ! grep -q "^New, .*Cipher is $c" <<<"$out" ||
			fail "TLS 1.2 $c on port $p not refused by the server: $(grep -m2 -E 'Cipher|alert' <<<"$out")"
	done
	for c in ECDHE-ECDSA-AES128-GCM-SHA256 ECDHE-ECDSA-AES256-GCM-SHA384 ECDHE-ECDSA-CHACHA20-POLY1305; do
		timeout 10 openssl s_client -connect "127.0.0.1:$p" -tls1_2 -cipher "$c" -CAfile "$CA" \
			</dev/null 2>&1 | has "^New, TLSv1.2, Cipher is $c" || fail "TLS 1.2 $c on port $p not served"
	done
done
# Cleartext to the TLS ports: nothing useful, and the server goes on.
out=$(printf 'ID\nPING\n' | timeout 10 nc -N -w 3 127.0.0.1 "$SVC_PORT" | tr -cd '[:print:]\n' || true)
! grep -qE '^([0-9]+|PONG)$' <<<"$out" || fail "cleartext client got an answer from the TLS port: $out"
rc=$(curl_rc cleartext "http://127.0.0.1:$HTTP_PORT/v1/id")
[ "$rc" != 0 ] && ! grep -q id_str "$T_DIR/cleartext.out" || fail "cleartext HTTP answered on the TLS port"
[ "$(tq "$SVC_PORT" 'PING\nQUIT\n')" = PONG ] || fail "no PONG after cleartext clients"
log "2. another CA and another name refused by curl, redis-cli, grpcio; with tls_verify_client = optional a client certificate of another CA, TLS 1.1, CBC suites on TLS 1.2 and cleartext refused by the server; the GCM and ChaCha20 suites served"

# 3. Handshake flood: 30 silent connections fill max_clients_per_ip (30), the
# 31st is closed at accept; all 30 are dropped after tls_handshake_timeout_ms.
flood=$($PY - "$SVC_PORT" "$HTTP_PORT" "$GRPC_PORT" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
silent = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(30)]
# ... and one each on HTTP (http_timeout_ms) and gRPC (tls_handshake_timeout_ms).
silent += [socket.create_connection(("127.0.0.1", int(p)), timeout=5) for p in sys.argv[2:]]
time.sleep(0.3)
extra = socket.create_connection(("127.0.0.1", port), timeout=5)
t = time.monotonic()
try:
    refused = extra.recv(100) == b""
except ConnectionResetError:
    refused = True
refused_ms = (time.monotonic() - t) * 1000
t, closed = time.monotonic(), 0
for s in silent:
    s.settimeout(max(0.1, 5 - (time.monotonic() - t)))
    try:
        closed += s.recv(100) == b""
    except ConnectionResetError:
        closed += 1
    except socket.timeout:
        pass
print(int(refused), int(refused_ms), closed, int((time.monotonic() - t) * 1000))
PY
)
read -r refused refused_ms closed closed_ms <<<"$flood"
[ "$refused" = 1 ] && [ "$refused_ms" -lt 500 ] || fail "the 31st connection was not closed at accept: $flood"
[ "$closed" = 32 ] && [ "$closed_ms" -lt 3000 ] || fail "silent handshakes not dropped in time: $flood"
[ "$(tstat "$SVC_PORT" rejected_per_ip)" -ge 1 ] || fail "rejected_per_ip not counted"
timeouts=$(tstat "$SVC_PORT" tls_handshake_timeouts) failures=$(tstat "$SVC_PORT" tls_handshake_failures)
[ "$timeouts" -ge 31 ] || fail "STAT tls_handshake_timeouts $timeouts, want at least 31"
# TLS 1.1 (text and gRPC ports), cleartext, another CA (redis-cli, grpcio); HTTP's are evhttp's.
[ "$failures" -ge 4 ] || fail "STAT tls_handshake_failures $failures, want at least 4"
[ "$(tq "$SVC_PORT" 'PING\nQUIT\n')" = PONG ] || fail "no PONG after the handshake flood"
# A TLS client that never reads its replies is dropped by write_timeout_ms (1 s).
dropped=$($PY - "$SVC_PORT" "$CA" <<'PY'
import socket, ssl, sys, time
ctx = ssl.create_default_context(cafile=sys.argv[2])
raw = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
try:
    s.sendall(b"IDS 1000\n" * 20000)
except OSError:
    pass
time.sleep(2)
n = 0
try:
    while n < 100 << 20:
        d = s.recv(65536)
        if not d:
            break
        n += len(d)
except (OSError, ssl.SSLError):
    pass
print(n)
PY
)
[ "$dropped" -lt 1048576 ] || fail "a TLS client that does not read was not dropped ($dropped bytes read)"
[ "$(tstat "$SVC_PORT" write_timeouts)" = 1 ] || fail "STAT write_timeouts is not 1 after the reader that does not read"
log "3. handshake flood: connection 31 closed at accept in ${refused_ms} ms, 30 silent ones (and one each on HTTP and gRPC) dropped within ${closed_ms} ms, a client that does not read dropped (write_timeout_ms); STAT tls_handshake_timeouts $timeouts, tls_handshake_failures $failures, tls_handshakes $(tstat "$SVC_PORT" tls_handshakes)"

# 4. SIGHUP: expired, then unloadable (the old one stays), then renewed.
hup() {
	local want=$(($(grep -c "$1" "$T_DIR/svc.log") + $2)) lines
	lines=$(grep -cE 'SIGHUP|TLS on the|TLS reload' "$T_DIR/svc.log")
	kill -HUP "$svc_PID"
	wait_for "SIGHUP: $1" 10 bash -c "[ \$(grep -c '$1' '$T_DIR/svc.log') -ge $want ]"
	sleep 0.2
	# One line per SIGHUP (issue 31: it logged two or more).
	[ "$(grep -cE 'SIGHUP|TLS on the|TLS reload' "$T_DIR/svc.log")" = $((lines + 1)) ] ||
		fail "SIGHUP logged $(($(grep -cE 'SIGHUP|TLS on the|TLS reload' "$T_DIR/svc.log") - lines)) lines, want 1"
}
# not_after FILE: a certificate's notAfter in unix seconds. expiry LISTENER: what
# /metrics says of the certificate that listener serves.
not_after() { date -d "$(openssl x509 -enddate -noout -in "$1" | cut -d= -f2)" +%s; }
expiry() {
	curl -sSk "https://127.0.0.1:$HTTP_PORT/metrics" |
		awk -v l="idgen_tls_cert_not_after_timestamp_seconds{listener=\"$1\"}" '$1 == l { print $2 }'
}
[ "$(expiry listen)" = "$(not_after "$TLS/server-cert.pem")" ] ||
	fail "metric expiry of listen: '$(expiry listen)', want $(not_after "$TLS/server-cert.pem")"
[ "$(expiry grpc)" = "$(not_after "$TLS/grpc-cert.pem")" ] ||
	fail "metric expiry of grpc: '$(expiry grpc)', want $(not_after "$TLS/grpc-cert.pem")"
cp "$TLS/expired-cert.pem" "$TLS/live-cert.pem"; cp "$TLS/expired-key.pem" "$TLS/live-key.pem"
hup 'TLS on the listen listener reloaded' 1
[ "$(expiry listen)" = "$(not_after "$TLS/expired-cert.pem")" ] && [ "$(expiry listen)" -lt "$(date +%s)" ] ||
	fail "after the reload of an expired certificate, the metric says '$(expiry listen)'"
rc=$(curl_rc expired --cacert "$CA" "https://127.0.0.1:$HTTP_PORT/v1/id")
[ "$rc" = 60 ] && grep -q 'expired' "$T_DIR/expired.out" || fail "curl took an expired certificate: rc $rc, $(cat "$T_DIR/expired.out")"
! tq "$SVC_PORT" 'ID\nQUIT\n' | has -E '^[0-9]+$' || fail "s_client took an expired certificate"
echo 'not a certificate' >"$TLS/live-cert.pem"
hup 'TLS reload of the listen listener failed, keeping the certificate' 1
[ "$(subject "$SVC_PORT")" = "idgen test expired" ] || fail "a failed reload did not keep the old certificate"
[ "$(expiry listen)" = "$(not_after "$TLS/expired-cert.pem")" ] ||
	fail "a failed reload changed the metric's expiry to '$(expiry listen)'"
# metric NAME: its value on /metrics (the alert IdgenTLSReloadFailed reads the gauge).
metric() { curl -sSk "https://127.0.0.1:$HTTP_PORT/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
[ "$(metric idgen_tls_reload_clean)" = 0 ] && [ "$(metric idgen_tls_reload_failures_total)" -ge 1 ] ||
	fail "a failed reload: idgen_tls_reload_clean '$(metric idgen_tls_reload_clean)', failures '$(metric idgen_tls_reload_failures_total)'"
cp "$TLS/renewed-cert.pem" "$TLS/live-cert.pem"; cp "$TLS/renewed-key.pem" "$TLS/live-key.pem"
hup 'TLS on the http listener reloaded' 1
[ "$(subject "$SVC_PORT")" = "idgen test renewed" ] || fail "the text port did not take the renewed certificate"
[ "$(subject "$HTTP_PORT")" = "idgen test renewed" ] || fail "the HTTP port did not take the renewed certificate"
n=$( { tq "$SVC_PORT" 'IDS 5\nQUIT\n'; curl -sS --cacert "$CA" "https://127.0.0.1:$HTTP_PORT/v1/ids?count=5" | ids_json; } | keep)
[ "$n" = 10 ] || fail "after the reload: $n IDs, want 10"
[ "$(expiry http)" = "$(not_after "$TLS/renewed-cert.pem")" ] ||
	fail "after the renewal the metric's expiry of http is '$(expiry http)'"
[ "$(metric idgen_tls_reload_clean)" = 1 ] && [ "$(metric idgen_tls_reloads_total)" = 3 ] ||
	fail "after the renewal: idgen_tls_reload_clean '$(metric idgen_tls_reload_clean)', reloads '$(metric idgen_tls_reloads_total)' (want 1, 3)"
log "4. SIGHUP: expired certificate refused by curl and s_client (idgen_tls_cert_not_after_timestamp_seconds followed each load), a bad file kept the old one ($(grep -c 'reload of the listen listener failed' "$T_DIR/svc.log") line, idgen_tls_reload_clean 0 until the next clean reload), the renewed one served"

# 5. mTLS required, TLS 1.3 only, and tokens.
TOKEN=$(openssl rand -hex 16)
printf 'app:%s\n' "$TOKEN" >"$T_DIR/tokens"
chmod 600 "$T_DIR/tokens"
TQ_OPTS=(-cert "$TLS/client-cert.pem" -key "$TLS/client-key.pem")
# tls_start_auth FLAGS...: as tls_start for the mtls service, AUTH before its PING.
tls_start_auth() {
	local pid
	IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") "$IDSERVER" --odd_port "$ODD_PORT" \
		--even_port "$EVEN_PORT" --listen_port "$M_PORT" --state_file "$T_DIR/mtls.state" \
		"$@" >"$T_DIR/mtls.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 1 100); do
		tq "$M_PORT" "AUTH $TOKEN\nPING\nQUIT\n" "${TQ_OPTS[@]}" | has -x PONG && return 0
		alive "$pid" || fail "mtls exited at start: $(tail -n 3 "$T_DIR/mtls.log")"
		sleep 0.1
	done
	fail "mtls did not answer PING over TLS on port $M_PORT within 10 s"
}
tls_start_auth --listen_tls on --http_port "$M_HTTP" --http_tls on \
	--grpc_port "$M_GRPC" --grpc_tls on --tls_cert_file "$TLS/server-cert.pem" \
	--tls_key_file "$TLS/server-key.pem" --tls_ca_file "$CA" --tls_verify_client required \
	--tls_min_version TLSv1.3 --auth_tokens_file "$T_DIR/tokens" \
	--tls_ciphersuites TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256
# mtls_stat PORT NAME: tstat with the client certificate and the token (wait_buffered's reader).
mtls_stat() {
	tq "$1" "AUTH $TOKEN\nSTATS\nQUIT\n" "${TQ_OPTS[@]}" | awk -v n="$2" '$1 == "STAT" && $2 == n { print $3 }'
}
wait_buffered "$M_PORT" mtls_stat
n=$( { tq "$M_PORT" "AUTH $TOKEN\nIDS 3\nQUIT\n" "${TQ_OPTS[@]}"
	REDISCLI_AUTH=$TOKEN redis-cli --tls --cacert "$CA" "${CCERT[@]}" -p "$M_PORT" IDS 3
	curl -sS --cacert "$CA" "${CCERT[@]}" -H "Authorization: Bearer $TOKEN" \
		"https://127.0.0.1:$M_HTTP/v1/ids?count=3" | ids_json
	IDGEN_TOKEN=$TOKEN $PY "$ROOT/tests/integration/tls_client.py" redis "$M_PORT" "$CA" \
		"$TLS/client-cert.pem" "$TLS/client-key.pem"
	IDGEN_TOKEN=$TOKEN $PY "$ROOT/tests/integration/tls_client.py" grpc "$T_DIR/py" "$M_GRPC" "$CA" \
		"$TLS/client-cert.pem" "$TLS/client-key.pem"
	} | keep)
[ "$n" = 2030 ] || fail "mTLS with a client certificate and a token: $n IDs, want 2030"
# A certificate but no token: the protocol's own refusal, over TLS.
tq "$M_PORT" 'ID\nQUIT\n' "${TQ_OPTS[@]}" | has '^ERR NOAUTH' || fail "text over TLS without a token: no NOAUTH"
[ "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$CA" "${CCERT[@]}" "https://127.0.0.1:$M_HTTP/v1/id")" = 401 ] ||
	fail "HTTPS without a token: not 401"
rc=0; $PY "$ROOT/tests/integration/tls_client.py" grpc "$T_DIR/py" "$M_GRPC" "$CA" "$TLS/client-cert.pem" \
	"$TLS/client-key.pem" >"$T_DIR/grpc-notoken.out" 2>&1 || rc=$?
[ $rc = 3 ] && grep -q UNAUTHENTICATED "$T_DIR/grpc-notoken.out" || fail "gRPC over TLS without a token: $(tail -n 1 "$T_DIR/grpc-notoken.out")"
! tq "$M_PORT" 'ID\nQUIT\n' | has -E '^[0-9]+$' || fail "text port served without a client certificate"
! redis-cli --tls --cacert "$CA" -p "$M_PORT" ID 2>&1 | has -E '^[0-9]+$' || fail "redis-cli served without a client certificate"
rc=$(curl_rc nocert --cacert "$CA" "https://127.0.0.1:$M_HTTP/v1/id")
[ "$rc" != 0 ] && ! grep -q id_str "$T_DIR/nocert.out" || fail "HTTP served without a client certificate"
rc=$(curl_rc othercert --cacert "$CA" --cert "$TLS/otherca-cert.pem" --key "$TLS/otherca-key.pem" \
	"https://127.0.0.1:$M_HTTP/v1/id")
[ "$rc" != 0 ] && ! grep -q id_str "$T_DIR/othercert.out" || fail "HTTP served a certificate of another CA"
rc=0; $PY "$ROOT/tests/integration/tls_client.py" grpc "$T_DIR/py" "$M_GRPC" "$CA" >"$T_DIR/grpc-nocert.out" 2>&1 || rc=$?
[ $rc = 3 ] || fail "gRPC without a client certificate exited $rc, want 3"
out=$(timeout 10 openssl s_client -connect "127.0.0.1:$M_PORT" -tls1_2 "${TQ_OPTS[@]}" </dev/null 2>&1 || true)
grep -qE 'alert protocol version|unsupported protocol' <<<"$out" || fail "TLS 1.2 not refused with tls_min_version TLSv1.3"
# tls_ciphersuites: a suite left out is refused, one kept served.
out=$(timeout 10 openssl s_client -connect "127.0.0.1:$M_PORT" -ciphersuites TLS_AES_128_GCM_SHA256 \
	"${TQ_OPTS[@]}" </dev/null 2>&1 || true)
grep -q 'alert handshake failure' <<<"$out" || fail "TLS 1.3 suite outside tls_ciphersuites served: $(grep -m1 Cipher <<<"$out")"
timeout 10 openssl s_client -connect "127.0.0.1:$M_PORT" -ciphersuites TLS_CHACHA20_POLY1305_SHA256 \
	-CAfile "$CA" "${TQ_OPTS[@]}" </dev/null 2>&1 | has '^New, TLSv1.3, Cipher is TLS_CHACHA20_POLY1305_SHA256' ||
	fail "TLS 1.3 suite of tls_ciphersuites not served"
log "5. mTLS and tokens: every protocol served with a client certificate and a token; refused without a certificate or with another CA's (handshake), without a token (NOAUTH, 401, UNAUTHENTICATED); TLS 1.2 refused; a TLS 1.3 suite outside tls_ciphersuites refused"

n=$(check_unique <(awk '{ print $1, 1 }' "$IDS")) || fail "DUPLICATE IDs over TLS"
log "PASS: $n IDs over TLS, all distinct"
