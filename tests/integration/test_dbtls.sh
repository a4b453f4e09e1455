#!/usr/bin/env bash
# TLS to the ticket servers (issue 21). A pair started with TLS certificates of a
# throwaway CA, its service user REQUIRE X509 (a cleartext or certificate-less
# session is refused by the server itself):
#  1. idgenctl: cleartext and no client certificate refused by the server; with
#     db_tls = required tier check passes and tier status shows TLS; another CA
#     is refused with one line naming the settings; a server 20 ms away is
#     reached over TLS (the handshake's own wait, src/dbtls.c).
#  2. idserver with another CA refuses to start with one line.
#  3. idserver over TLS serves IDs; its log names each server's TLS session.
#  4. even's certificate replaced by one for another address (FLUSH SSL): the
#     reconnect is refused, and while the odd server serves, no ticket is drawn
#     from even.
#  5. even restarted without TLS: refused ("does not support it"); idgenctl
#     with db_tls_verify_host = 0 refuses it too (our own check after connect).
#  6. even restarted with TLS 1.2 only: idserver uses it again; idgenctl with
#     db_tls_min_version = TLSv1.3 refuses it.
# The password shows in no log and no output.
. "$(dirname "$0")/lib.sh"

TLS=$T_DIR/tls
mkdir -p "$TLS"
# key NAME: a P-256 key NAME-key.pem. ca NAME: a self-signed CA NAME-cert.pem.
# leaf NAME CA IP: NAME-cert.pem signed by CA, for the IP address (subjectAltName).
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$TLS/$1-key.pem" 2>/dev/null; }
ca() {
	key "$1"
	openssl req -x509 -new -key "$TLS/$1-key.pem" -days 2 -subj "/CN=idgen test $1" \
		-out "$TLS/$1-cert.pem" 2>/dev/null || fail "openssl: CA $1"
}
leaf() {
	key "$1"
	openssl req -new -key "$TLS/$1-key.pem" -subj "/CN=idgen test $1" -out "$TLS/$1.csr" 2>/dev/null &&
		openssl x509 -req -in "$TLS/$1.csr" -CA "$TLS/$2-cert.pem" -CAkey "$TLS/$2-key.pem" \
			-CAcreateserial -days 2 -extfile <(printf 'subjectAltName=IP:%s\n' "$3") \
			-out "$TLS/$1-cert.pem" 2>/dev/null || fail "openssl: certificate $1"
}
ca ca; ca otherca
leaf odd ca 127.0.0.1; leaf even ca 127.0.0.1; leaf elsewhere ca 127.0.0.9; leaf client ca 127.0.0.1
cp "$TLS/even-cert.pem" "$TLS/even-good-cert.pem"; cp "$TLS/even-key.pem" "$TLS/even-good-key.pem"

DBPAIR_TLS_DIR=$TLS pair_up
for r in odd even; do db_sql $r "ALTER USER 'idgen'@'%' REQUIRE X509"; done
pw=$(cat "$T_DIR/db/db_password")
export IDGEN_DB_PASSWORD=$pw
ON=(--db_tls required --db_tls_ca_file "$TLS/ca-cert.pem")
CERT=(--db_tls_cert_file "$TLS/client-cert.pem" --db_tls_key_file "$TLS/client-key.pem")
# ctl NAME RC ARGS...: idgenctl ARGS into $T_DIR/NAME.out, which must exit RC.
ctl() {
	local name=$1 want=$2 rc=0
	shift 2
	"$BUILD/idgenctl" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" "$@" >"$T_DIR/$name.out" 2>&1 || rc=$?
	[ $rc = "$want" ] || { cat "$T_DIR/$name.out" >&2; fail "idgenctl ($name) exited $rc, want $want"; }
}
has() { grep -qE "$2" "$T_DIR/$1" || { cat "$T_DIR/$1" >&2; fail "$1: no line matching '$2'"; }; }

# 1. idgenctl.
ctl clear 2 tier check
has clear.out "^UNCHECKED odd .*Access denied for user 'idgen'"
ctl nocert 2 "${ON[@]}" tier check
has nocert.out "^UNCHECKED even .*Access denied for user 'idgen'"
ctl check 0 "${ON[@]}" "${CERT[@]}" tier check
has check.out '^tier check: ok \(2 servers'
ctl status 0 "${ON[@]}" "${CERT[@]}" tier status
[ "$(awk '$1 == "odd" || $1 == "even" { print $1, $13 }' "$T_DIR/status.out" | tr '\n' ' ')" = "odd TLSv1.3 even TLSv1.3 " ] ||
	{ cat "$T_DIR/status.out" >&2; fail "tier status: not TLSv1.3 on both"; }
# odd 150 ms away (a proxy): the handshake waits connect_timeout_ms, not
# Connector/C's 1 ms.
PROXY_PORT=$((SVC_PORT + 1)) FAR_PORT=$((SVC_PORT + 2))
python3 "$ROOT/tests/integration/delayproxy.py" "$PROXY_PORT" "$ODD_PORT" 150 >"$T_DIR/proxy.log" 2>&1 &
PIDS+=($!)
wait_for "the proxy" 10 bash -c "echo >/dev/tcp/127.0.0.1/$PROXY_PORT" 2>/dev/null
ctl far 0 "${ON[@]}" "${CERT[@]}" --odd_port "$PROXY_PORT" --connect_timeout_ms 2000 tier status
ctl otherca 2 --db_tls required --db_tls_ca_file "$TLS/otherca-cert.pem" "${CERT[@]}" tier check
has otherca.out '^UNCHECKED odd \(127\.0\.0\.1:[0-9]+\): cannot connect: TLS/SSL error: .*certificate.* \(db_tls = required: check db_tls_ca_file'
log "1. idgenctl: cleartext and certificate-less refused by the server, TLS ok, another CA refused"

# 2. idserver with a CA that signed neither server: refuses to start, one line each.
rc=0
timeout 20 "$IDSERVER" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" --listen_port "$SVC_PORT" \
	--state_file "$T_DIR/otherca.state" --db_tls required --db_tls_ca_file "$TLS/otherca-cert.pem" \
	"${CERT[@]}" >"$T_DIR/otherca.log" 2>&1 || rc=$?
[ $rc = 1 ] || fail "idserver with another CA exited $rc, want 1"
has otherca.log 'error refusing to start: odd ticket server: TLS/SSL error: .*certificate.* \(db_tls = required: check db_tls_ca_file'
log "2. idserver with another CA: refused to start"

# 3. Over TLS: IDs served, both sessions named in the log.
idserver_start svc "$SVC_PORT" "${ON[@]}" "${CERT[@]}" --refused_retry_ms 200
wait_buffered "$SVC_PORT"
[ "$(q "$SVC_PORT" 'IDS 3\n' | wc -w)" = 3 ] || fail "no IDs over TLS"
# Bounded generously for a loaded machine; a server that stays unchecked still fails,
# naming its STATS (issue 36: even up and serving, its checked line lost).
both_checked() { [ "$(grep -cE 'info (odd|even) ticket server checked .*, TLS TLSv1\.3 [A-Z0-9_]+\)$' "$T_DIR/svc.log")" = 2 ]; }
for _ in $(seq 300); do both_checked && break; sleep 0.1; done
both_checked || fail "both servers not checked over TLS within 30 s: $(q "$SVC_PORT" 'STATS\n' | grep -E ' (odd|even)_(state|waits_for|tickets|connects) ' | tr -d '\r' | tr '\n' ' ')"
log "3. idserver over TLS: $(grep -m1 -oE 'TLS TLSv1\.3 [A-Z0-9_]+' "$T_DIR/svc.log") on both"

# 3b. With odd 150 ms away and rechecked all the time, a client's PING is never
# held behind a query: over TLS the driver's waits come back to the event loop.
idserver_start far "$FAR_PORT" "${ON[@]}" "${CERT[@]}" --odd_port "$PROXY_PORT" \
	--connect_timeout_ms 2000 --query_timeout_ms 2000 --recheck_ms 100
wait_for "odd checked 150 ms away" 30 grep -q 'info odd ticket server checked .*, TLS TLSv1' "$T_DIR/far.log"
# The lease's own connection (to odd, through the proxy, for an even pid) opens
# with a TLS handshake, which holds the loop for its round trip (src/dbtls.c):
# measured once the lease is held, so that only queries run in the window.
wait_for "the far idserver's lease" 30 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $FAR_PORT | awk '\$2 == \"lease_state\" { print \$3 }')\" = held ]"
worst=$(python3 - "$FAR_PORT" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
worst, end = 0.0, time.monotonic() + 2.5
while time.monotonic() < end:
    t = time.monotonic()
    s.sendall(b"PING\n")
    buf = b""
    while not buf.endswith(b"\n"):
        buf += s.recv(100)
    worst = max(worst, time.monotonic() - t)
    time.sleep(0.01)
print(int(worst * 1000))
PY
)
rechecks=$(stat "$FAR_PORT" odd_rechecks)
[ "$rechecks" -ge 3 ] || fail "odd rechecked only $rechecks times 150 ms away"
[ "$worst" -lt 150 ] || fail "a PING waited ${worst} ms behind a query over TLS (the loop blocked)"
kill -TERM "$far_PID"
log "3b. odd 150 ms away over TLS: $rechecks rechecks, worst PING ${worst} ms"

# 4. even's certificate now names another address; its sessions are cut.
state_is() { [ "$(stat "$SVC_PORT" "${1}_state")" = "$2" ]; }
ticket_of() { db_sql "$1" "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'idgen' AND TABLE_NAME = 'tickets64'"; }
kick() {	# kick ROLE: ends the service user's sessions on ROLE
	local id
	for id in $(db_sql "$1" "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'idgen'"); do
		db_sql "$1" "KILL $id" 2>/dev/null || true
	done
}
cp "$TLS/elsewhere-cert.pem" "$TLS/even-cert.pem"; cp "$TLS/elsewhere-key.pem" "$TLS/even-key.pem"
db_sql even "FLUSH SSL"
kick even
wait_for "even refused" 30 state_is even refused
has svc.log 'error even ticket server REFUSED: TLS/SSL error: Validation of SSL server certificate failed \(db_tls = required: check db_tls_ca_file, db_tls_verify_host'
before=$(ticket_of even) odd_before=$(ticket_of odd)
for _ in $(seq 700); do echo 'BLOCK 4096'; done | timeout 30 nc -N 127.0.0.1 "$SVC_PORT" >"$T_DIR/blocks.out"
[ "$(grep -c '^[0-9]' "$T_DIR/blocks.out")" = 700 ] || fail "blocks not all served: $(grep -m1 ERR "$T_DIR/blocks.out")"
[ "$(ticket_of even)" = "$before" ] || fail "a ticket was drawn from the refused even server"
[ "$(ticket_of odd)" -gt "$odd_before" ] || fail "the odd server served no new ticket"
log "4. even with a certificate for another address: refused, no ticket drawn from it; odd served"

gone() { ! alive "$1"; }
stop_even() { local p; p=$(db_pid even); kill -TERM "$p"; wait_for "even stopped" 30 gone "$p"; }

# 5. even without TLS: refused by the client library before it authenticates;
# with db_tls_verify_host = 0 the library goes on, and our check refuses it.
stop_even
cp "$T_DIR/db/even/my.cnf" "$T_DIR/even-tls.cnf"
sed -i '/^ssl_/d' "$T_DIR/db/even/my.cnf"
db_start even
db_sql even "ALTER USER 'idgen'@'%' REQUIRE NONE"
wait_for "even refused for offering no TLS" 30 grep -q 'error even ticket server REFUSED: TLS/SSL error: SSL is required, but the server does not support it' "$T_DIR/svc.log"
ctl notls 2 "${ON[@]}" "${CERT[@]}" --db_tls_verify_host 0 tier check
has notls.out '^UNCHECKED even \(127\.0\.0\.1:[0-9]+\): the server does not offer TLS and db_tls = required: not used in cleartext'
log "5. even without TLS: refused (library, and our own check with db_tls_verify_host = 0)"

# 6. even with TLS 1.2 only and its own certificate again: used again; a client
# asking for TLS 1.3 refuses it.
stop_even
cp "$TLS/even-good-cert.pem" "$TLS/even-cert.pem"; cp "$TLS/even-good-key.pem" "$TLS/even-key.pem"
{ cat "$T_DIR/even-tls.cnf"; echo 'tls_version = TLSv1.2'; } >"$T_DIR/db/even/my.cnf"
db_start even
db_sql even "ALTER USER 'idgen'@'%' REQUIRE X509"
wait_for "even used again over TLS 1.2" 30 grep -qE 'info even ticket server checked and used again .*, TLS TLSv1\.2 ' "$T_DIR/svc.log"
ctl min13 2 "${ON[@]}" "${CERT[@]}" --db_tls_min_version TLSv1.3 tier check
has min13.out '^UNCHECKED even .*TLS/SSL error'
grep -q '^UNCHECKED odd' "$T_DIR/min13.out" && fail "odd (TLS 1.3) refused with db_tls_min_version TLSv1.3"
log "6. even over TLS 1.2 used again; refused with db_tls_min_version = TLSv1.3"

# The password is in no log and no output.
! grep -qF -- "$pw" "$T_DIR"/*.log "$T_DIR"/*.out || fail "the password shows in $(grep -lF -- "$pw" "$T_DIR"/*.log "$T_DIR"/*.out)"
log "ok"
