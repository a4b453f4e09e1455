#!/usr/bin/env bash
# One owner per state file (issue 16, finding 1). During an outage (both ticket
# servers killed) an idserver mints Snowflake IDs in its leased window; then:
#  1. a second idserver on the same state file is refused at start (the lock is
#     the file itself: there is no side lock file to delete);
#  2. a second idserver on a copy of the live file starts but does not resume
#     the lease (its owner still runs): ERR UNAVAILABLE, never the same window;
#  3. the owner killed (SIGKILL): a restart on its file resumes (its previous
#     incarnation is provably dead), above everything minted before;
#  4. copies of the dead owner's file (cp, cp -a, rsync, tar) resume nothing,
#     while the owner restarted on its own file does (issue 30, finding 1);
#  5. the file deleted under the running idserver: a new one on that path
#     starts fresh, and one on a copy taken before still does not resume;
#  6. older contents put back into the file, the clock 4 s behind: no resume
#     (issue 30, finding 2).
# Every ID from every process collected: no duplicate.
. "$(dirname "$0")/lib.sh"

pair_up
IDS=$T_DIR/ids.txt
: >"$IDS"
FLAGS=(--lease_window_ms 60000 --lease_extend_ms 500 --reprobe_max_ms 300 --fallback_reserve_ms 100)
STATE=$T_DIR/a.state
P2=$((SVC_PORT + 1))

held() { [ "$(stat "$SVC_PORT" lease_state)" = held ]; }
gone() { wait_for "$1 gone" 10 bash -c "! kill -0 $2 2>/dev/null"; }
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

# 4. Copies of a dead idserver's file (issue 30, finding 1: both copies resumed and
# minted in one window). a is killed; its file copied by cp, cp -a, rsync -a and
# tar; an idserver on the cp copy and a on its own file start at once and both
# mint (before the write stamp both resumed worker $w: duplicates); only a resumes.
# Then each other copy, alone: nothing resumed, nothing served.
kill -KILL "$a_PID"
wait "$a_PID" 2>/dev/null || true
gone a "$a_PID"
cp "$STATE" "$T_DIR/cp.state"
cp -a "$STATE" "$T_DIR/cpa.state"
rsync -a "$STATE" "$T_DIR/rsync.state"
mkdir -p "$T_DIR/untar"
tar -C "$T_DIR" -cf "$T_DIR/a.tar" a.state && tar -C "$T_DIR/untar" -xpf "$T_DIR/a.tar" &&
	mv "$T_DIR/untar/a.state" "$T_DIR/tar.state" || fail "tar copy"
# The cp copy and the owner's own file at once, both minting (the issue's race).
idserver_start cp "$P2" --http_port 0 --grpc_port 0 "${FLAGS[@]}"
idserver_start a "$SVC_PORT" "${FLAGS[@]}"
mint_ids "$P2" 100 "$T_DIR/cp-ids.txt" >"$T_DIR/cp-errs.txt" & m=$!
read -r errs top <<<"$(mint_ids "$SVC_PORT" 100 "$IDS")"
wait "$m"
read -r cp_errs _ <"$T_DIR/cp-errs.txt"
[ -f "$T_DIR/cp-ids.txt" ] && cat "$T_DIR/cp-ids.txt" >>"$IDS"
grep -q "lease resumed from the state file: worker $w " "$T_DIR/a.log" ||
	fail "a on its own file beside the copy: $(grep -m2 -E 'resumed|state file' "$T_DIR/a.log")"
[ "$errs" = 0 ] || fail "a resumed: $errs errors"
for copy in cp cpa rsync tar; do
	[ "$copy" = cp ] || idserver_start "$copy" "$P2" --http_port 0 --grpc_port 0 "${FLAGS[@]}"
	grep -q "lease of worker $w not resumed: it may not be the file's latest write: it is a copy" "$T_DIR/$copy.log" ||
		fail "$copy copy of a dead idserver's file: $(grep -m2 -E 'resumed|state file' "$T_DIR/$copy.log")"
	if [ "$copy" = cp ]; then
		[ "$cp_errs" = 100 ] || fail "the cp copy served $((100 - cp_errs)) of 100 requests in the outage"
	else
		read -r errs _ <<<"$(mint_ids "$P2" 20 "$IDS")"
		[ "$errs" = 20 ] || fail "the $copy copy served $((20 - errs)) of 20 requests in the outage"
	fi
	eval "kill -TERM \$${copy}_PID; gone $copy \$${copy}_PID"
done
log "4. copies of a dead idserver's file (cp, cp -a, rsync -a, tar): none resumed; its own file did"

# 5. The file deleted under a: a new one on the path starts fresh; a copy taken before does not resume.
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
log "5. deleted file: a new one starts fresh, the earlier copy does not resume"

read -r errs top <<<"$(mint_ids "$SVC_PORT" 50 "$IDS")"
[ "$errs" = 0 ] || fail "a stopped serving after its file was deleted: $errs errors"

# 6. Older contents put back into the file, restarted with the clock 4 s behind
# (issue 30, finding 2: the stale reservation became the floor, below what had been
# minted since). The pair back for a new lease (idserver e), then down again; e's
# file copied, e mints on past that copy's reservation, is killed, the copy is
# written back over the file (same inode) and e restarted 4 s behind.
kill -TERM "$a_PID"
gone a "$a_PID"
db_start odd >/dev/null && db_start even >/dev/null || fail "the pair did not restart"
P3=$((SVC_PORT + 2))
idserver_start e "$P3" --http_port 0 --grpc_port 0 "${FLAGS[@]}"
wait_for "a lease for e" 15 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $P3 | awk '\$2==\"lease_state\"{print \$3}')\" = held ]"
we=$(stat "$P3" lease_worker)
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down for e" 10 tier_down "$P3"
drain_pool "$P3"
read -r errs top <<<"$(mint_ids "$P3" 100 "$IDS")"
[ "$errs" = 0 ] && [ "$top" -ge 9007199254740992 ] || fail "e: no fallback IDs ($errs errors, top $top)"
cp "$T_DIR/e.state" "$T_DIR/old.state"
# e mints on for 4.5 s past the copy, so that a clock 4 s behind lands inside it.
t0=$(date +%s%N)
for _ in $(seq 200); do
	[ $(($(date +%s%N) - t0)) -lt 4500000000 ] || break
	read -r errs _ <<<"$(mint_ids "$P3" 20 "$IDS")"
	[ "$errs" = 0 ] || fail "e before the kill: $errs errors"
done
kill -KILL "$e_PID"
wait "$e_PID" 2>/dev/null || true
gone e "$e_PID"
cp "$T_DIR/old.state" "$T_DIR/e.state"
IDSERVER_WRAP=$(faketime_env FAKETIME=-4s)
IDSERVER_WRAP=$IDSERVER_WRAP idserver_start e "$P3" --http_port 0 --grpc_port 0 "${FLAGS[@]}"
grep -q "lease of worker $we not resumed: it may not be the file's latest write: the file changed after its last write" "$T_DIR/e.log" ||
	fail "older contents put back: $(grep -m2 -E 'resumed|state file' "$T_DIR/e.log")"
read -r errs _ <<<"$(mint_ids "$P3" 20 "$IDS")"
[ "$errs" = 20 ] || fail "older contents put back: $((20 - errs)) of 20 requests served in the outage"
log "6. older contents put back, clock 4 s behind: not resumed, nothing served"

n=$(check_unique "$IDS") || fail "duplicate IDs across the processes"
log "ok: $n IDs, no duplicate"
