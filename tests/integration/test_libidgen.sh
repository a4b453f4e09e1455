#!/usr/bin/env bash
# libidgen against real idservers on the real MariaDB pair: 4 threads mixing
# next/ids/block, two client processes at once, a fork (parent and child both
# taking IDs), one idserver killed under load (no failed call), both killed
# (held IDs served, then the error code, then service again); every ID
# collected, no duplicate. And the idgen command.
. "$(dirname "$0")/lib.sh"
LOAD=$BUILD/idgen_load
IDGEN=$BUILD/idgen

pair_up
S1=$SVC_PORT
S2=$((SVC_PORT + 1))
idserver_start a "$S1"
idserver_start b "$S2"
wait_buffered "$S1"; wait_buffered "$S2"
LIST=127.0.0.1:$S1,127.0.0.1:$S2
D=$T_DIR/ids
mkdir -p "$D"

log "4 threads x 3,000,000 IDs, next/ids/block mixed"
"$LOAD" -s "$LIST" -t 4 -n 3000000 --mix --dump "$D/mix" >"$T_DIR/mix.out" || fail "mix: $(cat "$T_DIR/mix.out")"
cat "$T_DIR/mix.out" >&2
grep -q 'bad=0 errors=0' "$T_DIR/mix.out" || fail "mix had errors"

log "two client processes at once, 2 threads each"
"$LOAD" -s "$LIST" -t 2 -n 2000000 --mix --dump "$D/p1" >"$T_DIR/p1.out" &
P1=$!
"$LOAD" -s "$LIST" -t 2 -n 2000000 --mix --dump "$D/p2" >"$T_DIR/p2.out" || fail "process 2: $(cat "$T_DIR/p2.out")"
wait $P1 || fail "process 1: $(cat "$T_DIR/p1.out")"
cat "$T_DIR/p1.out" "$T_DIR/p2.out" >&2

log "fork: parent and child both take IDs after it"
"$LOAD" -s "$LIST" -t 2 -n 500000 --mix --fork --dump "$D/fork" >"$T_DIR/fork.out" || fail "fork: $(cat "$T_DIR/fork.out")"
cat "$T_DIR/fork.out" >&2
grep -q 'role=child.*forks=1' "$T_DIR/fork.out" || fail "the child did not detect the fork"
grep -q 'role=parent.*forks=0' "$T_DIR/fork.out" || fail "the parent saw a fork"

log "one of two idservers killed under load: no failed call"
"$LOAD" -s "$LIST" -t 4 -d 6 --mix --pace 500 --dump "$D/kill1" >"$T_DIR/kill1.out" &
LP=$!
sleep 2
kill -KILL "$a_PID"
wait $LP || fail "calls failed with one idserver left: $(cat "$T_DIR/kill1.out")"
cat "$T_DIR/kill1.out" >&2
grep -q 'errors=0' "$T_DIR/kill1.out" || fail "errors with one idserver left"
grep -qE 'failures=[1-9]' "$T_DIR/kill1.out" || log "note: the killed idserver was not the one in use"
idserver_start a "$S1"
wait_buffered "$S1"

log "both killed: held IDs served, then the error code; back when one returns"
O=$T_DIR/outage
mkdir -p "$O"
"$LOAD" -s "$LIST" --outage "$O" --dump "$D/outage" >"$T_DIR/outage.out" 2>&1 &
LP=$!
wait_for "the outage client" 20 test -f "$O/ready"
kill -KILL "$a_PID" "$b_PID"
touch "$O/killed"
wait_for "the error code" 40 test -f "$O/errored"
cat "$O/errored" >&2
grep -qE 'code=2 held_after_kill=[1-9][0-9]* msg=no IDs held and no idserver could give any: .*127\.0\.0\.1' "$O/errored" ||
	fail "expected held IDs, then IDGEN_EUNAVAILABLE naming the servers: $(cat "$O/errored")"
idserver_start b "$S2"
touch "$O/restarted"
wait $LP || fail "service did not resume: $(cat "$T_DIR/outage.out")"
grep -q 'OUTAGE resumed' "$T_DIR/outage.out" || fail "no resume line"

log "an idserver that closes idle connections: the kept one is replaced, not counted as a failure"
idserver_start idle "$((SVC_PORT + 2))" --idle_timeout_ms 300
wait_buffered "$((SVC_PORT + 2))"
"$LOAD" -s "127.0.0.1:$((SVC_PORT + 2))" -t 1 -d 3 --pace 600000 --lead-ms 0 --min-held 1 --fetch-ids 1024 --dump "$D/idle" >"$T_DIR/idle.out" ||
	fail "idle-closed connections: $(cat "$T_DIR/idle.out")"
cat "$T_DIR/idle.out" >&2
rt=$(sed -n 's/.* round_trips=\([0-9]*\) .*/\1/p' "$T_DIR/idle.out")
[ "${rt:-0}" -ge 4 ] || fail "expected a refill after each idle gap, got ${rt:-no} round trips"
grep -q ' failures=0 ' "$T_DIR/idle.out" || fail "a connection closed by the server counted as a failure"
[ "$(stat "$((SVC_PORT + 2))" idle_timeouts)" -ge 3 ] || fail "idserver closed fewer idle connections than expected"

log "the idgen command"
id=$("$IDGEN" -s "127.0.0.1:$S2" id)
[[ $id =~ ^[1-9][0-9]*$ ]] || fail "idgen id printed '$id'"
echo "$id 1" >"$D/cli"
"$IDGEN" -s "127.0.0.1:$S2" ids 5 >"$T_DIR/ids5"
[ "$(wc -l <"$T_DIR/ids5")" = 5 ] && sort -n -c "$T_DIR/ids5" || fail "idgen ids 5: $(cat "$T_DIR/ids5")"
awk '{ print $1, 1 }' "$T_DIR/ids5" >>"$D/cli"
read -r first n < <("$IDGEN" -s "127.0.0.1:$S2" block 100)
[ "$n" = 100 ] || fail "idgen block 100 printed '$first $n'"
echo "$first $n" >>"$D/cli"
IDGEN_SERVER=127.0.0.1:$S2 "$IDGEN" --json id | has -E '^\{"id":[0-9]+,"id_str":"[0-9]+"\}$' || fail "idgen --json id"
"$IDGEN" decode "$id" | has -E "^$id ticket block=[0-9]+ server=(odd|even)$" || fail "idgen decode $id: $("$IDGEN" decode "$id")"
# Offline: the same answer as the server's DECODE, with no server.
[ "$("$IDGEN" decode "$id" | cut -d' ' -f2-)" = "$(q "$S2" "DECODE $id\n")" ] || fail "local decode differs from the server's"
"$IDGEN" -s 127.0.0.1:1 decode 9007199254740993 | has 'snowflake time=2026-' || fail "decode of a Snowflake ID"
"$IDGEN" -s "127.0.0.1:$S2" stats | has '^STAT pid ' || fail "idgen stats"
"$IDGEN" -s "127.0.0.1:$S2,127.0.0.1:1" ping >"$T_DIR/ping" && fail "ping with a server down exited 0"
grep -qE "^PONG 127.0.0.1:$S2 [0-9]+ us$" "$T_DIR/ping" && grep -q '^DOWN 127.0.0.1:1 ' "$T_DIR/ping" || fail "ping: $(cat "$T_DIR/ping")"
set +e
"$IDGEN" -s 127.0.0.1:1 -t 300 id 2>"$T_DIR/err1"; rc1=$?
"$IDGEN" ids 0 2>/dev/null; rc2=$?
"$IDGEN" frobnicate 2>/dev/null; rc3=$?
"$IDGEN" -s 'no-port' id 2>/dev/null; rc4=$?
set -e
[ $rc1 = 1 ] && grep -q '127.0.0.1:1: connect' "$T_DIR/err1" || fail "no server: exit $rc1, $(cat "$T_DIR/err1")"
[ $rc2 = 2 ] && [ $rc3 = 2 ] && [ $rc4 = 2 ] || fail "usage errors exit $rc2 $rc3 $rc4, not 2"
# --json: the same exit statuses, each error one JSON object on stderr.
set +e
"$IDGEN" --json -s 127.0.0.1:1 -t 300 id 2>"$T_DIR/jerr1" >/dev/null; rc1=$?
"$IDGEN" --json ids 0 2>"$T_DIR/jerr2"; rc2=$?
"$IDGEN" --json decode 'x"y' 2>"$T_DIR/jerr3"; rc3=$?
"$IDGEN" --bogus --json id 2>"$T_DIR/jerr4"; rc4=$?
set -e
[ $rc1 = 1 ] && [ $rc2 = 2 ] && [ $rc3 = 2 ] && [ $rc4 = 2 ] || fail "--json errors exit $rc1 $rc2 $rc3 $rc4"
python3 - "$T_DIR"/jerr[1-4] <<'PY' || fail "--json errors: $(cat "$T_DIR"/jerr[1-4])"
import json, sys
codes = []
for f in sys.argv[1:]:
    lines = open(f).read().splitlines()
    assert len(lines) == 1, lines
    e = json.loads(lines[0])["error"]
    assert set(e) == {"code", "message"} and e["message"], e
    codes.append(e["code"])
assert codes == ["service", "usage", "usage", "usage"], codes
PY
"$IDGEN" --help | has 'decode ID' || fail "idgen --help"

n=$(check_unique "$D"/*) || fail "duplicate IDs across threads, processes, the fork, kills and the CLI"
log "PASS: $n IDs from libidgen and idgen, no duplicate"
