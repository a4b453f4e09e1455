# lib.sh - shared by the integration tests: a real MariaDB pair, real idserver
# processes, real netcat. Sourced by tests/integration/test_*.sh.
#
# Every process started here is recorded by PID and stopped by the EXIT trap;
# everything listens on 127.0.0.1 only; every wait is bounded.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
IDSERVER=$BUILD/idserver
IDBENCH=$BUILD/idbench
TEST_NAME=$(basename "$0" .sh)
T_DIR=${TEST_VAR:-$ROOT/build/test-var}/$TEST_NAME
export DBPAIR_TEMPLATE=$ROOT/build/test-var/template
# Ports of this test run: distinct from `make run` (3307/3308/4242).
ODD_PORT=${ODD_PORT:-23307}
EVEN_PORT=${EVEN_PORT:-23308}
SVC_PORT=${SVC_PORT:-24242}
PIDS=()

rm -rf "$T_DIR"
mkdir -p "$T_DIR" "$DBPAIR_TEMPLATE"

# alive PID: running and not a zombie (nothing may reap a killed server here).
alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# Each line carries the seconds since the test started, to show where its time goes.
log() { printf '[%s %ss] %s\n' "$TEST_NAME" "$SECONDS" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

# A test with more to undo defines on_cleanup (run first, its failures ignored).
# It must not replace the EXIT trap: under set -e, a trap that re-raises the
# status with (exit $rc) ends right there, and nothing below ever runs.
cleanup() {
	local rc=$? p live=()
	set +e
	declare -F on_cleanup >/dev/null && on_cleanup
	# Only our own processes still alive: a PID killed earlier may be reused, so
	# its command line must name this tree, this test's directory or the build
	# directory (BUILD and TEST_VAR may live outside the tree, e.g. under /tmp).
	for p in "${PIDS[@]}"; do
		if alive "$p" && grep -qaF -e "$ROOT" -e "$T_DIR/" -e "$BUILD/" "/proc/$p/cmdline" 2>/dev/null; then
			live+=("$p")
			kill -TERM "$p" 2>/dev/null || true
		fi
	done
	for p in "${live[@]}"; do
		for _ in $(seq 1 50); do alive "$p" || break; sleep 0.1; done
		alive "$p" && kill -KILL "$p" 2>/dev/null || true
	done
	pair_down
	# A sanitizer build reports into the service logs: any report fails the test.
	if grep -l -E 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$T_DIR"/*.log >/dev/null 2>&1; then
		log "FAIL: sanitizer report in $(grep -l -E 'Sanitizer|runtime error:' "$T_DIR"/*.log | tr '\n' ' ')"
		rc=1
	fi
	if [ $rc -ne 0 ]; then
		log "logs in $T_DIR"
		for f in "$T_DIR"/*.log; do
			[ -f "$f" ] && { echo "---- $f (tail)"; tail -n 15 "$f"; }
		done >&2
	fi
	exit $rc
}
trap cleanup EXIT
# A command that stops the test through set -e says so, where, and through which
# calls (a silent exit was all a loaded clean-clone run of test_ns_adopt left to
# read, issue 36). errtrace: without it the trap never runs inside a function, and
# a failure inside a helper (q, stat, mint_ids...) stopped the test silently. Only
# what stops the test reports: under set -e (not in cleanups or a test's set +e
# part), in the test's own shell (a failure in a subshell reports where the
# subshell stops the test, a command substitution's is no verdict).
set -o errtrace
on_err() {
	local rc=$1 i at=
	[[ $- == *e* ]] && [ "$BASHPID" = "$$" ] || return 0
	for ((i = 1; i < ${#FUNCNAME[@]}; i++)); do
		at+=" ${BASH_SOURCE[i]##*/}:${BASH_LINENO[i - 1]}"
		[ "${FUNCNAME[i]}" = main ] || at+=" (${FUNCNAME[i]})"
	done
	log "FAIL: exit $rc at$at: $2"
}
trap 'on_err $? "$BASH_COMMAND"' ERR

pair_up() { "$ROOT/scripts/dbpair.sh" up "$T_DIR/db" "$ODD_PORT" "$EVEN_PORT" >/dev/null; }
pair_down() { [ -d "$T_DIR/db" ] && "$ROOT/scripts/dbpair.sh" down "$T_DIR/db" || true; }
db_sql() { "$ROOT/scripts/dbpair.sh" sql "$T_DIR/db" "$@"; }
db_pid() { cat "$T_DIR/db/$1/mariadbd.pid"; }
# db_sql_retry ROLE SQL: SQL run again when MariaDB made it a deadlock's victim or
# its lock wait timed out (1213, 1205), up to 5 times, as an operator re-runs an
# idempotent script (the schema files) while idservers take tickets: a clean
# clone's test_regress lost its schema load to a deadlock with a ticket
# transaction.
db_sql_retry() {
	local k out
	for k in 1 2 3 4 5; do
		if out=$(db_sql "$@" 2>&1); then
			[ -z "$out" ] || printf '%s\n' "$out"
			return 0
		fi
		grep -qE 'ERROR (1213|1205)' <<<"$out" || break
		sleep 0.2
	done
	printf '%s\n' "$out" >&2
	return 1
}
db_start() { "$ROOT/scripts/dbpair.sh" start "$T_DIR/db" "$1"; }
# db_restored ROLE SQL: SQL as a restore from an old backup writes it, past the
# schema's guard triggers (a restore re-creates the tables; docs/design.md 6.5):
# they are dropped, SQL runs, and the schema files put them back.
db_restored() {
	local role=$1 t; shift
	for t in idgen_marks_no_lower idgen_marks_no_delete idgen_ns_marks_no_lower \
		idgen_ns_marks_no_delete idgen_leases_no_free idgen_leases_no_delete; do
		db_sql "$role" "DROP TRIGGER IF EXISTS idgen.$t"
	done
	db_sql "$role" "$*"
	db_sql "$role" "source $ROOT/schema/10-tables.sql"
	db_sql "$role" "source $ROOT/schema/40-leases.sql"
}

# ctl_env: idgenctl as an operator runs it on the test pair (the service user's
# password, root as the administrator) in the array CTL; ctl ARGS... runs it,
# its output appended to $T_DIR/ctl.out, and fails the test when it fails.
ctl_env() {
	export IDGEN_DB_PASSWORD IDGEN_ADMIN_USER=root IDGEN_ADMIN_PASSWORD=
	IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password")
	CTL=("$BUILD/idgenctl" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT")
}
ctl() { "${CTL[@]}" "$@" >>"$T_DIR/ctl.out" 2>&1 || fail "idgenctl $*: $(tail -n 3 "$T_DIR/ctl.out")"; }
# expect_ctl RC NEEDLE ARGS...: idgenctl ARGS exits RC and its output (in
# $T_DIR/ctl.out, replaced) matches the extended regex NEEDLE; else the test fails.
expect_ctl() {
	local want=$1 needle=$2 rc=0
	shift 2
	"${CTL[@]}" "$@" >"$T_DIR/ctl.out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] && grep -qE -- "$needle" "$T_DIR/ctl.out" ||
		fail "idgenctl $*: exit $rc (want $want), $(cat "$T_DIR/ctl.out")"
}
# ns_served PORT NAME: true once that idserver answers ID of namespace NAME.
ns_served() { q "$1" "ID $2\n" | has -E '^[0-9]+$'; }

# has [GREP FLAGS] PATTERN [FILE]: grep's verdict on its input without -q. Under
# pipefail, `producer | grep -q` fails at random: grep exits at its first match and
# the producer (curl, nc, idgen) still writing gets SIGPIPE (seen: test_auth's
# /metrics check, issue 36). has reads its input to the end.
has() { grep "$@" >/dev/null; }

# Sends lines to a service and prints the replies (real netcat, exits at EOF).
q() { local port=$1; shift; printf "$@" | timeout 10 nc -N 127.0.0.1 "$port"; }

# idserver_start NAME PORT [flags...]: starts a service, waits until it answers PING.
# Its state file is $T_DIR/NAME.state: a restart under the same NAME resumes it.
idserver_start() {
	local name=$1 port=$2 pid i
	shift 2
	# IDSERVER_WRAP: a command prefix, e.g. env with libfaketime for clock tests.
	IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") ${IDSERVER_WRAP:-} "$IDSERVER" \
		--odd_port "$ODD_PORT" --even_port "$EVEN_PORT" --listen_port "$port" \
		--state_file "$T_DIR/$name.state" "$@" >"$T_DIR/$name.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	eval "${name}_PID=$pid"
	for i in $(seq 1 100); do
		if [ "$(q "$port" 'PING\n' 2>/dev/null)" = PONG ]; then
			# Ours answering, not a stray process already on the port.
			[ "$(stat "$port" pid)" = "$pid" ] || fail "port $port is served by another process"
			return 0
		fi
		alive "$pid" || fail "$name exited at start: $(tail -n 3 "$T_DIR/$name.log")"
		sleep 0.1
	done
	fail "$name did not answer PING on port $port within 10 s"
}

# wait_buffered PORT [STAT_FN]: until the idserver holds ticket IDs (its first
# blocks banked: after their copies landed, copy first), so that a request right
# after a start or a restart is not answered ERR UNAVAILABLE by a slow (sanitizer,
# loaded) start: a start takes longer than refill_wait_ms there. STAT_FN PORT NAME
# prints one STATS value (default stat) for an idserver whose text port needs TLS
# or a token. Not where a test asserts what happens before the first block.
wait_buffered() {
	wait_for "ticket IDs buffered on $1 (its first block banked)" 15 stat_above_0 "${2:-stat}" "$1" ids_buffered
}
# wait_ns_buffered PORT NS [STAT_FN]: the same for namespace NS (ns_NS_ids_buffered:
# its first block banked).
wait_ns_buffered() {
	wait_for "namespace $2's IDs buffered on $1 (its first block banked)" 15 \
		stat_above_0 "${3:-stat}" "$1" "ns_$2_ids_buffered"
}
stat_above_0() {
	local v
	v=$("$1" "$2" "$3" 2>/dev/null) || return 1
	[[ $v =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ]
}

# faketime_env SETTING...: prints a command prefix (for IDSERVER_WRAP) running a
# program under libfaketime with the FAKETIME* settings given, the monotonic
# clock left real (durations and deadlines are measured on it), and ASan's
# link-order check off (the preload comes before its runtime). Fails the test
# if libfaketime is missing (package faketime): call it as a plain assignment,
# VAR=$(faketime_env ...), so that the failure stops the test.
faketime_env() {
	local lib
	lib=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n 1)
	[ -n "$lib" ] || fail "libfaketime not found (package faketime)"
	echo "env ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=$lib FAKETIME_DONT_FAKE_MONOTONIC=1 $*"
}

# grpc_stubs: generates the Python gRPC stubs of proto/ into $T_DIR/py now
# (python3-grpc-tools), for grpc_client.
grpc_stubs() {
	mkdir -p "$T_DIR/py"
	/usr/bin/python3 -m grpc_tools.protoc -I "$ROOT/proto" --python_out="$T_DIR/py" \
		--grpc_python_out="$T_DIR/py" "$ROOT/proto/idgen.proto" "$ROOT/proto/health.proto" ||
		fail "cannot generate the Python stubs"
}

# grpc_client PORT MODE [ARGS...]: grpc_client.py's MODE against PORT with those
# stubs, on Debian's python3-grpcio (/usr/bin/python3, not a virtualenv's).
grpc_client() { /usr/bin/python3 "$ROOT/tests/integration/grpc_client.py" "$T_DIR/py" "$@"; }

# Certificates of a throwaway CA, made with openssl in $TLS_DIR (test_tls,
# test_tls_client). tls_key NAME: a P-256 key. tls_ca NAME: a self-signed CA.
# tls_leaf NAME CA [FAKETIME [SAN]]: a certificate signed by CA, for SAN (default
# 127.0.0.1 and localhost), made at FAKETIME if given and not empty (a day long:
# made two days ago, it has expired). Files: NAME-key.pem, NAME-cert.pem.
TLS_DIR=$T_DIR/tls
tls_key() {
	mkdir -p "$TLS_DIR"
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$TLS_DIR/$1-key.pem" 2>/dev/null
}
tls_ca() {
	tls_key "$1"
	openssl req -x509 -new -key "$TLS_DIR/$1-key.pem" -days 30 -subj "/CN=idgen test $1" \
		-out "$TLS_DIR/$1-cert.pem" 2>/dev/null || fail "openssl: CA $1"
}
tls_leaf() {
	local at=${3:-} san=${4:-IP:127.0.0.1,DNS:localhost}
	tls_key "$1"
	openssl req -new -key "$TLS_DIR/$1-key.pem" -subj "/CN=idgen test $1" -out "$TLS_DIR/$1.csr" 2>/dev/null &&
		${at:+faketime "$at"} openssl x509 -req -in "$TLS_DIR/$1.csr" -CA "$TLS_DIR/$2-cert.pem" \
			-CAkey "$TLS_DIR/$2-key.pem" -CAcreateserial -days 1 \
			-extfile <(printf 'subjectAltName=%s\n' "$san") \
			-out "$TLS_DIR/$1-cert.pem" 2>/dev/null || fail "openssl: certificate $1"
}

# stat PORT NAME: one STATS value.
stat() { q "$1" 'STATS\n' | awk -v n="$2" '$1 == "STAT" && $2 == n { print $3 }'; }
# stat_shows PORT NAME VALUE: STATS shows VALUE at one of 100 reads 50 ms apart
# (5 s at least). A refused server is retried every refused_retry_ms and shows
# "connecting" for the few ms each retry takes (7 of 300 reads at 200 ms, 15 of
# 300 on a loaded machine), or "down" with its backoff when a retry's connect
# timed out, so one read of "refused" can miss it (issue 36).
stat_shows() {
	local i
	for i in $(seq 1 100); do
		[ "$(stat "$1" "$2")" = "$3" ] && return 0
		sleep 0.05
	done
	return 1
}

# tier_down PORT: true once no ticket server it knows is up (the pair, servers
# beyond it, other regions'; the buffered ticket IDs may still be served: mode
# stays "ticket" until they are gone).
tier_down() {
	local out
	out=$(q "$1" 'STATS\n')
	! grep -qE '^STAT ((odd|even)(_r[0-9]+)?|o[0-9]+)_state up' <<<"$out" &&
		grep -q '^STAT odd_state' <<<"$out"
}

# drain_pool PORT: takes buffered ticket IDs (BLOCK 4096 at a time) until fewer
# than 1000 are left, so the next IDS 1000 comes from the fallback.
drain_pool() {
	local i b
	for i in $(seq 1 40); do
		b=$(stat "$1" ids_buffered)
		[ "$b" -ge 1000 ] || return 0
		# Below 4,096 a BLOCK 4096 no longer fits a buffered range (the fallback
		# answers it and the tail stays): IDS 1000 takes from the pool.
		if [ "$b" -ge 4096 ]; then
			for _ in $(seq 500); do echo 'BLOCK 4096'; done
		else
			for _ in $(seq $((b / 1000))); do echo 'IDS 1000'; done
		fi | timeout 30 nc -N 127.0.0.1 "$1" >/dev/null
	done
	fail "port $1 still has $(stat "$1" ids_buffered) ticket IDs buffered"
}

# drain_all PORT: takes every buffered ticket ID (BLOCK 4096 while they fit,
# then single IDs for the tail of a partly used block); fails on any ERR.
drain_all() {
	local i b n
	for i in $(seq 1 30); do
		b=$(stat "$1" ids_buffered)
		[ "$b" -gt 0 ] || return 0
		if [ "$b" -ge 4096 ]; then
			n=$((b / 4096)); [ $n -le 500 ] || n=500
			for _ in $(seq $n); do echo 'BLOCK 4096'; done
		else
			for _ in $(seq "$b"); do echo ID; done
		fi | timeout 30 nc -N 127.0.0.1 "$1" >"$T_DIR/drain.out"
		! grep -q '^ERR' "$T_DIR/drain.out" || fail "ERR while draining: $(grep -m1 '^ERR' "$T_DIR/drain.out")"
	done
	fail "port $1 still has $(stat "$1" ids_buffered) ticket IDs buffered after draining"
}

# wait_for DESCRIPTION SECONDS COMMAND...: polls until COMMAND succeeds.
wait_for() {
	local what=$1 secs=$2 i
	shift 2
	for i in $(seq 1 $((secs * 10))); do
		if "$@"; then return 0; fi
		sleep 0.1
	done
	fail "timed out after ${secs}s waiting for: $what"
}

# check_unique FILE...: dump files of "first count" ranges; fails on any overlap.
# Prints the number of IDs checked. Python integers: awk's doubles cannot hold
# Snowflake IDs exactly.
check_unique() {
	python3 - "$@" <<'PY'
import sys
ranges = []
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            a, n = line.split()
            ranges.append((int(a), int(n)))
ranges.sort()
total, last, bad = 0, -1, 0
for first, n in ranges:
    if n < 1 or first <= last:
        bad += 1
        if bad <= 5:
            print("overlap: %d+%d after %d" % (first, n, last), file=sys.stderr)
    last = max(last, first + n - 1)
    total += n
print(total)
sys.exit(1 if bad else 0)
PY
}

# collect FILE: reply lines of IDs on stdin (text protocol IDS replies) appended to
# FILE as "first count" ranges of consecutive IDs (for check_unique: a repeated ID
# still overlaps), ERR lines to FILE.err; prints how many ERR lines. Millions of IDs
# a line each made check_unique alone take tens of seconds. Debian's interpreter
# (make deps installs it) when there: it runs once per load round, and the first
# python3 on PATH may start slowly (a version manager's shim took 0.4 s).
collect() {
	local py=python3
	[ -x /usr/bin/python3 ] && py=/usr/bin/python3
	"$py" -c '
import sys
out, errs = open(sys.argv[1], "a"), 0
for line in sys.stdin:
    w = line.split()
    if not w:
        continue
    if w[0] == "ERR":
        errs += 1
        with open(sys.argv[1] + ".err", "a") as e:
            e.write(line)
        continue
    ids = list(map(int, w))
    start = prev = ids[0]
    for i in ids[1:]:
        if i == prev + 1:
            prev = i
            continue
        out.write("%d %d\n" % (start, prev - start + 1))
        start = prev = i
    out.write("%d %d\n" % (start, prev - start + 1))
out.close()  # written before the summary: a reader of that line may read the file next
print(errs, flush=True)' "$1"
}

# mint_ids PORT N FILE [REQUEST]: N x IDS 1000 (or REQUEST, e.g. 'IDS 100 orders')
# from PORT, appended to FILE as "first count" ranges (for check_unique); prints
# "errors max_id". Every reply line is checked ascending and distinct.
mint_ids() {
	for _ in $(seq "$2"); do echo "${4:-IDS 1000}"; done | timeout 60 nc -N 127.0.0.1 "$1" |
		python3 -c '
import sys
out, errs, top = open(sys.argv[1], "a"), 0, 0
for line in sys.stdin:
    w = line.split()
    if not w or w[0] == "ERR":
        errs += 1
        continue
    ids = list(map(int, w))
    assert ids == sorted(ids) and len(set(ids)) == len(ids), "not ascending"
    start = prev = ids[0]
    for i in ids[1:] + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.write("%d %d\n" % (start, prev - start + 1))
        if i is not None:
            start = prev = i
    top = max(top, ids[-1])
out.close()  # written before the summary: read -r ... < <(mint_ids ...) reads the file next
print(errs, top, flush=True)' "$3"
}
