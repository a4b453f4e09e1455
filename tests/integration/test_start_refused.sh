#!/usr/bin/env bash
# Misconfiguration at start (docs/design.md 6.4; issue 30, item 7): after
# `idgenctl tier raise-increment 4`, the odd server restarted with its old
# my.cnf (auto_increment_increment = 2) is refused, and a fresh idserver
#   1. starts anyway, names the odd server once (the setting and the fix) and
#      serves only from the even server: every ID a ticket of residue 2 mod 4;
#   2. uses the odd server once it is repaired (SET GLOBAL), without a restart;
#   3. still refuses to start (exit 1, nothing listens) when both servers are
#      misconfigured, or on an error of its own configuration (a wrong password).
# Every ID collected, no duplicate.
. "$(dirname "$0")/lib.sh"

pair_up
ctl_env
A=$SVC_PORT C=$((SVC_PORT + 1))
# B = 4096: a ticket per 4096 IDs, so a few hundred thousand IDs draw many.
B=4096
for r in odd even; do db_sql "$r" "UPDATE idgen.idgen_meta SET block_size = $B"; done
FLAGS=(--tier_increment 4 --refused_retry_ms 300 --reprobe_max_ms 300 --refill_wait_ms 50)
NEEDLE="odd ticket server REFUSED: auto_increment_increment is 2, must be 4"

# residues FILE: the residues mod 4 of the tickets of every ID in FILE ("first
# count" ranges), sorted, one word each. IDs above 2^53 are the fallback's:
# counted on stderr, not listed (with refill_wait_ms 50 a loaded machine's
# pipelined burst may outrun the fetches; which servers give tickets is the
# question here, and the duplicate check covers every ID).
residues() {
	python3 - "$1" "$B" <<'PY'
import sys
b, seen, sf = int(sys.argv[2]), set(), 0
for line in open(sys.argv[1]):
    first, n = map(int, line.split())
    if first >= 1 << 53:
        sf += n
        continue
    for t in range(first // b, (first + n - 1) // b + 1):
        seen.add(str(t % 4))
if sf:
    print(f"{sys.argv[1]}: {sf} Snowflake IDs (the fallback, refill_wait_ms)", file=sys.stderr)
print(" ".join(sorted(seen)))
PY
}

ctl tier raise-increment 4
grep -q "auto_increment_increment = 4" "$T_DIR/ctl.out" || fail "raise-increment: $(cat "$T_DIR/ctl.out")"
# The operator changes the even server's my.cnf, forgets the odd one's, and
# restarts the odd server.
printf '[mariadbd]\nauto_increment_increment = 4\n' >>"$T_DIR/db/even/my.cnf"
pid=$(db_pid odd)
kill -TERM "$pid"
for _ in $(seq 1 300); do alive "$pid" || break; sleep 0.1; done
db_start odd
[ "$(db_sql odd "SELECT @@GLOBAL.auto_increment_increment")" = 2 ] || fail "odd restarted without its old increment"

# 1. A fresh idserver starts from the even server alone.
idserver_start a "$A" "${FLAGS[@]}"
grep -qF "$NEEDLE" "$T_DIR/a.log" || fail "the odd server's refusal is not logged: $(grep -m2 REFUSED "$T_DIR/a.log")"
grep -qF "repair: set auto_increment_increment = 4 in the server's my.cnf and restart it" "$T_DIR/a.log" ||
	fail "the refusal names no fix: $(grep -m1 REFUSED "$T_DIR/a.log")"
grep -q "starting without the odd ticket server" "$T_DIR/a.log" || fail "no line says it starts without odd"
! grep -q "refusing to start" "$T_DIR/a.log" || fail "a 'refusing to start' line"
stat_shows "$A" odd_state refused && [ "$(stat "$A" even_state)" = up ] ||
	fail "states odd $(stat "$A" odd_state), even $(stat "$A" even_state)"
# Its first block banked before the check of residues: a loaded machine's
# first ticket can take longer than refill_wait_ms, and the fallback then
# serves the first requests, as it should (a clean clone failed so).
wait_buffered "$A"
read -r errs _ < <(mint_ids "$A" 100 "$T_DIR/a.txt")
[ "$errs" = 0 ] || fail "$errs errors from the idserver started without odd"
r=$(residues "$T_DIR/a.txt")
[ "$r" = 2 ] || fail "IDs from tickets of residues '$r' mod 4, want only 2 (the even server)"
sleep 1.5	# about five retries of the odd server
n=$(grep -cF "$NEEDLE" "$T_DIR/a.log")
[ "$n" = 1 ] || fail "the odd server's refusal logged $n times"
log "1. started without the odd server (refused once: increment 2, must be 4); 100000 IDs, all of even's tickets (B $B) (residue 2 mod 4)"

# 2. Repaired while it runs: the odd server is used again.
db_sql odd "SET GLOBAL auto_increment_increment = 4"
wait_for "odd used again" 10 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $A | awk '\$2==\"odd_state\"{print \$3}')\" = up ]"
for k in $(seq 1 10); do
	read -r errs _ < <(mint_ids "$A" 20 "$T_DIR/a2.txt")
	[ "$errs" = 0 ] || fail "$errs errors after the repair"
	[ "$(residues "$T_DIR/a2.txt")" = "1 2" ] && break
done
r=$(residues "$T_DIR/a2.txt")
[ "$r" = "1 2" ] || fail "after the repair: residues '$r', want 1 and 2"
log "2. odd repaired (SET GLOBAL): used again without a restart, residues 1 and 2 mod 4"

# expect_exit1 WHAT NEEDLE [flags]: a fresh idserver exits 1, logs NEEDLE, never listens.
expect_exit1() {
	local what=$1 needle=$2 rc=0
	shift 2
	IDGEN_DB_PASSWORD=${PW:-$(cat "$T_DIR/db/db_password")} timeout 20 "$IDSERVER" \
		--state_file "$T_DIR/c.state" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" \
		--listen_port "$C" "${FLAGS[@]}" "$@" >"$T_DIR/c.log" 2>&1 || rc=$?
	[ $rc = 1 ] || fail "$what: exit $rc, want 1: $(tail -n 3 "$T_DIR/c.log")"
	grep -q "refusing to start: .*$needle" "$T_DIR/c.log" || fail "$what: $(cat "$T_DIR/c.log")"
	! grep -q "listening on" "$T_DIR/c.log" || fail "$what: it listened"
}

# 3. Both misconfigured, or a wrong password: still fatal.
db_sql odd "SET GLOBAL auto_increment_increment = 2"
db_sql even "SET GLOBAL auto_increment_increment = 2"
expect_exit1 "both servers at increment 2" "even ticket server: auto_increment_increment is 2, must be 4.*no ticket server of its region passed"
grep -q "refusing to start: odd ticket server: auto_increment_increment is 2" "$T_DIR/c.log" || fail "odd not named: $(cat "$T_DIR/c.log")"
db_sql even "SET GLOBAL auto_increment_increment = 4"
PW=wrong expect_exit1 "a wrong password" "authentication failed"
log "3. both servers misconfigured: exit 1, each named; a wrong password: exit 1"

n=$(check_unique "$T_DIR/a.txt" "$T_DIR/a2.txt") || fail "DUPLICATE IDs"
log "$n IDs, no duplicate"
log ok
