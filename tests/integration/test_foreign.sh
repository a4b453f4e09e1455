#!/usr/bin/env bash
# A state file from another deployment (issue 30, finding 6): a copied
# /var/lib/idgen or a golden image, written on another machine, under one
# idserver of a fresh pair. Its marks must refuse inside that process only: never
# copied into the fresh servers (before, they were witnessed into both, and every
# idserver of the tier refused both servers until an operator raised the
# counters). Deployment A's pair has counters above 1000; its idserver's file,
# stamped with another machine-id, goes under idserver x of pair B:
#  1. x says the file is foreign (how to discard it), moves it to .foreign, and
#     refuses B's servers itself (their counters are below the file's marks);
#  2. B's marks rows never hold A's marks; a fresh idserver y serves tickets;
#  3. x restarted serves tickets (the foreign marks lived in its memory only).
# Every ID from pair B collected: no duplicate.
. "$(dirname "$0")/lib.sh"

pair_up
PA=$((ODD_PORT + 40))
on_cleanup() { [ -d "$T_DIR/dbA" ] && "$ROOT/scripts/dbpair.sh" down "$T_DIR/dbA" >/dev/null 2>&1; }
"$ROOT/scripts/dbpair.sh" up "$T_DIR/dbA" "$PA" $((PA + 1)) >/dev/null || fail "pair A did not start"
sqlA() { "$ROOT/scripts/dbpair.sh" sql "$T_DIR/dbA" "$@"; }
sqlA odd "ALTER TABLE idgen.tickets64 AUTO_INCREMENT = 1001"
sqlA even "ALTER TABLE idgen.tickets64 AUTO_INCREMENT = 1002"
IDS=$T_DIR/ids.txt
: >"$IDS"
FLAGS=(--reprobe_max_ms 300 --refused_retry_ms 500 --recheck_ms 1000)

# Deployment A: an idserver takes tickets above 1000 from its own pair.
IDGEN_DB_PASSWORD=$(cat "$T_DIR/dbA/db_password") "$IDSERVER" --odd_port "$PA" \
	--even_port $((PA + 1)) --listen_port $((SVC_PORT + 9)) --state_file "$T_DIR/a.state" \
	"${FLAGS[@]}" >"$T_DIR/a.log" 2>&1 &
a=$!
PIDS+=("$a")
wait_for "A: both of its servers up" 15 bash -c "out=\$(printf 'STATS\n' | nc -N 127.0.0.1 $((SVC_PORT + 9))); grep -q '^STAT odd_state up' <<<\"\$out\" && grep -q '^STAT even_state up' <<<\"\$out\""
wait_buffered $((SVC_PORT + 9))
# Both marks must be above 1000 for x to refuse both of B's servers. A block is
# 2^20 IDs and the first prefetch may take both blocks from the server that
# answered first (the other still connecting): take blocks until A's file holds
# a mark from each server.
marks_both() { python3 "$ROOT/tests/integration/statefile.py" show "$T_DIR/a.state" 2>/dev/null | grep -cE '^mark (- )?(odd|even) 1[0-9]{3} '; }
for _ in 1 2 3 4 5; do
	read -r errs _ <<<"$(mint_ids $((SVC_PORT + 9)) 1100 "$T_DIR/a-ids.txt")"
	[ "$errs" = 0 ] || fail "deployment A: $errs errors"
	[ "$(marks_both)" = 2 ] && break
done
kill -TERM "$a"
wait "$a" 2>/dev/null || true
grep -qE '^mark (- )?odd (1[0-9]{3}) ' <(python3 "$ROOT/tests/integration/statefile.py" show "$T_DIR/a.state") ||
	fail "A's file has no mark above 1000: $(python3 "$ROOT/tests/integration/statefile.py" show "$T_DIR/a.state" | grep mark)"

# Its file, as if written on another machine, under x on pair B.
cp "$T_DIR/a.state" "$T_DIR/x.state"
python3 "$ROOT/tests/integration/statefile.py" edit "$T_DIR/x.state" '^owner [0-9a-zA-Z-]+' \
	'owner 00000000000000000000000000e15e0e'
idserver_start x "$SVC_PORT" "${FLAGS[@]}"
grep -q "state file $T_DIR/x.state is foreign: written on another machine (machine-id 00000000000000000000000000e15e0e.*moved to $T_DIR/x.state.foreign; its marks refuse tickets in this process only.*delete $T_DIR/x.state.foreign once" "$T_DIR/x.log" ||
	fail "x: no foreign line: $(grep -m2 'state file' "$T_DIR/x.log")"
[ -s "$T_DIR/x.state.foreign" ] || fail "the foreign file was not kept aside"
wait_for "x refuses both of B's servers itself" 15 bash -c "out=\$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT); grep -q '^STAT odd_state regressed' <<<\"\$out\" && grep -q '^STAT even_state regressed' <<<\"\$out\""
grep -q "counter regressed.*a foreign state file's mark: 10[0-9][0-9], refusing in this idserver only" "$T_DIR/x.log" ||
	fail "x's refusal does not name the foreign mark: $(grep -m1 REFUSED "$T_DIR/x.log")"
log "1. x: the file foreign, kept aside, B's servers refused by x alone"

# 2. B's marks rows hold nothing of A's; a fresh idserver y serves tickets.
sleep 1.5	# x's rechecks and retries had time to copy, had it copied anything
for r in odd even; do
	top=$(db_sql "$r" "SELECT MAX(high_water) FROM idgen.idgen_marks")
	[ "$top" -lt 1000 ] || fail "the $r server of pair B holds a mark $top: a foreign file's mark was copied"
done
y=$((SVC_PORT + 1))
idserver_start y "$y" --http_port 0 --grpc_port 0 "${FLAGS[@]}"
wait_for "y: both of B's servers up" 15 bash -c "out=\$(printf 'STATS\n' | nc -N 127.0.0.1 $y); grep -q '^STAT odd_state up' <<<\"\$out\" && grep -q '^STAT even_state up' <<<\"\$out\""
wait_buffered "$y"
read -r errs top <<<"$(mint_ids "$y" 100 "$IDS")"
[ "$errs" = 0 ] && [ "$top" -lt 9007199254740992 ] || fail "y: $errs errors, top $top (want tickets)"
log "2. pair B's marks untouched; a fresh idserver serves its tickets"

# 3. x restarted: the foreign marks are gone with the process.
kill -TERM "$x_PID"
wait "$x_PID" 2>/dev/null || true
idserver_start x "$SVC_PORT" "${FLAGS[@]}"
wait_for "x restarted: both up" 15 bash -c "out=\$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT); grep -q '^STAT odd_state up' <<<\"\$out\" && grep -q '^STAT even_state up' <<<\"\$out\""
wait_buffered "$SVC_PORT"
read -r errs top <<<"$(mint_ids "$SVC_PORT" 100 "$IDS")"
[ "$errs" = 0 ] && [ "$top" -lt 9007199254740992 ] || fail "x restarted: $errs errors, top $top"
n=$(check_unique "$IDS") || fail "duplicate IDs from pair B"
log "3. x restarted serves pair B's tickets; $n IDs, no duplicate"
log ok
