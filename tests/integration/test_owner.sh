#!/usr/bin/env bash
# One owner per state file (issue 16, finding 1). During an outage (both ticket
# servers killed) an idserver mints Snowflake IDs in its leased window; then:
#  1. a second idserver on the same state file is refused at start (the lock is
#     the file itself: there is no side lock file to delete);
#  2. a second idserver on a copy of the live file starts but does not resume
#     the lease (its owner still runs): ERR UNAVAILABLE, never the same window;
#  3. the owner killed (SIGKILL): a restart on its file resumes (its previous
#     incarnation is provably dead), above everything minted before;
#  4. the file deleted under the running idserver: a new one on that path
#     starts fresh, and one on a copy taken before still does not resume.
# Every ID from every process collected: no duplicate.
. "$(dirname "$0")/lib.sh"

pair_up
IDS=$T_DIR/ids.txt
: >"$IDS"
FLAGS=(--lease_window_ms 60000 --lease_extend_ms 500 --reprobe_max_ms 300 --fallback_reserve_ms 100)
STATE=$T_DIR/a.state
P2=$((SVC_PORT + 1))

held() { [ "$(stat "$SVC_PORT" lease_state)" = held ]; }
# unavailable PORT WHAT: the only answer is ERR UNAVAILABLE (nothing minted).
unavailable() {
	local out
	out=$(printf 'ID\nIDS 1000\nBLOCK 4096\n' | timeout 10 nc -N 127.0.0.1 "$1")
	[ "$(grep -c '^ERR UNAVAILABLE' <<<"$out")" = 3 ] || fail "$2: served '$(head -c 200 <<<"$out")', want ERR UNAVAILABLE"
}

idserver_start a "$SVC_PORT" "${FLAGS[@]}"
wait_for "a lease" 10 held
w=$(stat "$SVC_PORT" lease_worker)
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
drain_pool "$SVC_PORT"
read -r errs top <<<"$(mint_ids "$SVC_PORT" 100 "$IDS")"
[ "$errs" = 0 ] && [ "$top" -ge 9007199254740992 ] || fail "no fallback IDs ($errs errors, top $top)"
log "a: worker $w minting in fallback"

# 1. The same file: refused at start, whatever side files are removed.
rm -f "$STATE.lock"	# the lock of earlier versions: deleting it must change nothing
if IDGEN_DB_PASSWORD=x timeout 10 "$IDSERVER" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" \
	--listen_port "$P2" --http_port 0 --grpc_port 0 --state_file "$STATE" "${FLAGS[@]}" \
	>"$T_DIR/same.log" 2>&1; then
	fail "a second idserver on the same state file started"
fi
grep -q "is locked by another idserver (pid $a_PID)" "$T_DIR/same.log" ||
	fail "no lock refusal naming pid $a_PID: $(tail -n 2 "$T_DIR/same.log")"
log "1. same file: refused ($(grep -o 'locked by another idserver ([^)]*)' "$T_DIR/same.log"))"

# 2. A copy of the live file (a cloned volume, a blue/green deploy): no resumption.
cp "$STATE" "$T_DIR/b.state"
idserver_start b "$P2" --http_port 0 --grpc_port 0 "${FLAGS[@]}"
grep -q "lease of worker $w not resumed: its writer may still be alive: its owner, pid $a_PID, is still running" "$T_DIR/b.log" ||
	fail "copy: no refusal to resume: $(grep -m2 'state file' "$T_DIR/b.log")"
unavailable "$P2" "copy of a live state file"
read -r errs top <<<"$(mint_ids "$SVC_PORT" 100 "$IDS")"
[ "$errs" = 0 ] || fail "a stopped serving: $errs errors"
kill -TERM "$b_PID"
log "2. copied file: not resumed, ERR UNAVAILABLE; a still serves"

# 3. a killed: its previous incarnation is provably dead, so its own file resumes.
kill -KILL "$a_PID"
wait "$a_PID" 2>/dev/null || true
wait_for "a gone" 10 bash -c "! kill -0 $a_PID 2>/dev/null"
idserver_start a "$SVC_PORT" "${FLAGS[@]}"
grep -q "lease resumed from the state file: worker $w " "$T_DIR/a.log" ||
	fail "restart after SIGKILL not resumed: $(grep -m2 'state file' "$T_DIR/a.log")"
first=$(q "$SVC_PORT" 'ID\n')
[[ "$first" =~ ^[0-9]+$ ]] && [ "$first" -gt "$top" ] || fail "after the restart: '$first', want an ID above $top"
echo "$first 1" >>"$IDS"
read -r errs top <<<"$(mint_ids "$SVC_PORT" 100 "$IDS")"
[ "$errs" = 0 ] || fail "after the restart: $errs errors"
log "3. owner killed: resumed worker $w above everything minted before"

# 4. The file deleted under a: a new one on the path starts fresh; a copy taken before does not resume.
cp "$STATE" "$T_DIR/c.state"
rm -f "$STATE"
IDGEN_DB_PASSWORD=x "$IDSERVER" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" \
	--listen_port "$P2" --http_port 0 --grpc_port 0 --state_file "$STATE" "${FLAGS[@]}" \
	>"$T_DIR/fresh.log" 2>&1 &
PIDS+=("$!")
fresh=$!
wait_for "fresh answers" 10 bash -c "[ \"\$(printf 'PING\n' | nc -N 127.0.0.1 $P2 2>/dev/null)\" = PONG ]"
grep -q "no state file yet" "$T_DIR/fresh.log" || fail "deleted file: $(grep -m1 'state file' "$T_DIR/fresh.log")"
unavailable "$P2" "a new file where a live one was deleted"
kill -TERM "$fresh"
wait_for "fresh gone" 10 bash -c "! kill -0 $fresh 2>/dev/null"
idserver_start c "$P2" --http_port 0 --grpc_port 0 "${FLAGS[@]}"
grep -q "not resumed: its writer may still be alive" "$T_DIR/c.log" || fail "copy after delete resumed"
unavailable "$P2" "copy after the delete"
kill -TERM "$c_PID"
log "4. deleted file: a new one starts fresh, the earlier copy does not resume"

read -r errs top <<<"$(mint_ids "$SVC_PORT" 50 "$IDS")"
[ "$errs" = 0 ] || fail "a stopped serving after its file was deleted: $errs errors"

n=$(check_unique "$IDS") || fail "duplicate IDs across the processes"
log "ok: $n IDs, no duplicate"
