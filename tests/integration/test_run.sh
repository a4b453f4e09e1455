#!/usr/bin/env bash
# make run PORT=N and make run-regions PORT=N (issue 34): the scripts the targets
# run (scripts/run.sh, scripts/run-regions.sh; the targets add deps and the build),
# with PORT = SVC_PORT and var/ moved under the test's directory (IDGEN_VAR):
#  1. run.sh PORT: text/RESP on PORT, HTTP on PORT+1, gRPC on PORT+2, each giving
#     an ID; its pair on PORT+3/PORT+4 with its data under var/PORT/.
#  2. run-regions.sh PORT: region 0 as above, region 1 from PORT+10, each taking
#     tickets of its own region's pair; data under var/PORT/regions/.
#  3. A PORT that is not a port: refused (exit 2) before anything starts.
. "$(dirname "$0")/lib.sh"

P=$SVC_PORT
export IDGEN_VAR=$T_DIR/var BUILD
# stop_pairs: the pairs the scripts leave running (as make run does).
stop_pairs() {
	local d
	for d in "$IDGEN_VAR/$P" "$IDGEN_VAR/$P/regions/r0" "$IDGEN_VAR/$P/regions/r1"; do
		[ -d "$d/odd" ] && "$ROOT/scripts/dbpair.sh" down "$d" >/dev/null 2>&1 || true
	done
}
on_cleanup() { stop_pairs; }
stop_pairs	# a run killed before its cleanup may have left them
rm -rf "$IDGEN_VAR"
db_port_of() { cat "$1/$2/port"; }
# answers PORT: text, HTTP and gRPC of the idserver from PORT each give an ID.
answers() {
	local p=$1
	q "$p" 'ID\n' | has -xE '[0-9]+' &&
		curl -sS --max-time 5 "http://127.0.0.1:$((p + 1))/v1/id" | has '"id_str"' &&
		timeout 10 /usr/bin/python3 "$ROOT/tests/integration/grpc_client.py" "$T_DIR/py" "$((p + 2))" \
			first "$T_DIR/grpc-ids" 2>/dev/null | has '^first OK'
}
grpc_stubs

# 1. make run PORT=N.
"$ROOT/scripts/run.sh" "$P" >"$T_DIR/run.log" 2>&1 &
RUN=$!
PIDS+=("$RUN")
wait_for "run.sh $P: text, HTTP and gRPC" 120 answers "$P"
[ "$(db_port_of "$IDGEN_VAR/$P" odd)" = $((P + 3)) ] && [ "$(db_port_of "$IDGEN_VAR/$P" even)" = $((P + 4)) ] ||
	fail "run.sh $P: the pair is not on $((P + 3))/$((P + 4))"
[ -s "$IDGEN_VAR/$P/idserver.state" ] || fail "run.sh $P: no state file under var/$P/"
[ "$(stat "$P" pid)" = "$RUN" ] || fail "run.sh $P: port $P is not served by the script's idserver"
kill -TERM "$RUN"
wait_for "run.sh exit" 15 bash -c "! kill -0 $RUN 2>/dev/null"
# Its pair stays up, as make run leaves it (make db-down PORT=N stops it).
"$ROOT/scripts/dbpair.sh" sql "$IDGEN_VAR/$P" odd 'SELECT 1' | has -x 1 ||
	fail "run.sh $P: its pair did not stay up"
stop_pairs
log "1. run.sh $P: text/RESP $P, HTTP $((P + 1)), gRPC $((P + 2)), pair $((P + 3))/$((P + 4)), data under var/$P/"

# 2. make run-regions PORT=N.
"$ROOT/scripts/run-regions.sh" "$P" >"$T_DIR/regions.log" 2>&1 &
REG=$!
PIDS+=("$REG")
# up_or_gone PID PORT: the idserver from PORT answers, or the script has died (failed below).
up_or_gone() { answers "$2" || ! alive "$1"; }
wait_for "run-regions.sh $P: region 0" 180 up_or_gone "$REG" "$P"
alive "$REG" || fail "run-regions.sh $P exited: $(tail -n 3 "$T_DIR/regions.log")"
wait_for "run-regions.sh $P: region 1" 60 answers "$((P + 10))"
for r in 0 1; do
	d=$IDGEN_VAR/$P/regions/r$r
	[ "$(db_port_of "$d" odd)" = $((P + 3 + 10 * r)) ] || fail "region $r: odd server not on $((P + 3 + 10 * r))"
	id=$(q $((P + 10 * r)) 'ID\n')
	q $((P + 10 * r)) "DECODE $id\n" | has "region=$r" || fail "region $r's ID $id: $(q $((P + 10 * r)) "DECODE $id\n")"
done
kill -TERM "$REG"
wait_for "run-regions.sh exit" 15 bash -c "! kill -0 $REG 2>/dev/null"
log "2. run-regions.sh $P: region 0 on $P..$((P + 4)), region 1 on $((P + 10))..$((P + 14)), each ID of its region"

# 3. Not a port.
for bad in 80 x 65533; do
	rc=0; out=$("$ROOT/scripts/run.sh" "$bad" 2>&1) || rc=$?
	[ $rc = 2 ] && has -F "PORT must be a number" <<<"$out" || fail "run.sh $bad: exit $rc, $out"
done
rc=0; out=$("$ROOT/scripts/run-regions.sh" 65530 2>&1) || rc=$?
[ $rc = 2 ] || fail "run-regions.sh 65530: exit $rc, $out"
log "3. PORT 80, x, 65533 refused by run.sh, 65530 by run-regions.sh (exit 2)"
log "ok"
