#!/usr/bin/env bash
# bench/ticket_lat.sh - one row of the bench alone, in about a minute: row 7's
# open loop (ID, 50 connections x pipeline 32, TL_RATE requests/s) against
# idserver, first with no ticket fetched during the run, then with tickets
# coming all the time (a second client takes BLOCK 4096 at TL_DRAIN requests/s:
# with B = 2^20 a ticket, and its state file write, every 256 of them). Prints
# P50/P99/P99.9/max of each run and what the state file did during it, so two
# builds can be compared (docs/design.md section 6.9: no fsync on the loop).
#
# Environment (all optional):
#   IDSERVER        the binary (default build/idserver), or several separated by
#                   spaces: each runs in turn in every rep, on the same pair
#   TL_ODD_PORT TL_EVEN_PORT TL_SVC_PORT   ports (default 19307 19308 19342)
#   TL_DURATION     seconds per run (default 10)
#   TL_RATE         the open loop's requests/s (default 100000)
#   TL_CONNECTIONS TL_PIPELINE   its shape (default 50 and 32, row 7's)
#   TL_DRAIN        BLOCK 4096 requests/s of the second client (default 12800:
#                   50 tickets/s)
#   TL_REPS         runs of each kind, alternating (default 2)
#   TL_PIN          1: idserver on CPU 0, the clients on CPU 1 (default 1)
#   TL_KEEP         1: keep the logs and outputs (a directory under /tmp)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
IDSERVER=${IDSERVER:-$ROOT/build/idserver}
IDBENCH=$ROOT/build/idbench
ODD_PORT=${TL_ODD_PORT:-19307}
EVEN_PORT=${TL_EVEN_PORT:-19308}
SVC_PORT=${TL_SVC_PORT:-19342}
DUR=${TL_DURATION:-10}
RATE=${TL_RATE:-100000}
CONNS=${TL_CONNECTIONS:-50}
PIPE=${TL_PIPELINE:-32}
DRAIN=${TL_DRAIN:-12800}
REPS=${TL_REPS:-2}
VAR=$(mktemp -d /tmp/idgen-ticket-lat-XXXXXX)
PIN_SRV=(); PIN_CLI=()
if [ "${TL_PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
	PIN_SRV=(taskset -c 0); PIN_CLI=(taskset -c 1)
fi
PIDS=()

say() { printf '[ticket_lat] %s\n' "$*"; }
q() { printf "$2" | nc -N -w 2 127.0.0.1 "$1"; }
stat() { q "$SVC_PORT" 'STATS\n' | awk -v n="$2" '$2 == n { print $3 }'; }

cleanup() {
	local rc=$? p i
	trap - EXIT INT TERM
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do
		for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
	done
	"$ROOT/scripts/dbpair.sh" down "$VAR/db" >/dev/null 2>&1
	if [ $rc -ne 0 ] || [ "${TL_KEEP:-0}" = 1 ]; then say "exit $rc; logs in $VAR"; else rm -rf "$VAR"; fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$ROOT/scripts/dbpair.sh" up "$VAR/db" "$ODD_PORT" "$EVEN_PORT" >"$VAR/dbpair.log" 2>&1 ||
	{ say "dbpair.sh up failed: $(tail -n 3 "$VAR/dbpair.log")"; exit 1; }
# start K BINARY: idserver number K (its own state file), in ticket mode.
start() {
	IDGEN_DB_PASSWORD=$(cat "$VAR/db/db_password") "${PIN_SRV[@]}" "$2" \
		--listen_host 127.0.0.1 --listen_port "$SVC_PORT" --odd_host 127.0.0.1 \
		--odd_port "$ODD_PORT" --even_host 127.0.0.1 --even_port "$EVEN_PORT" \
		--state_file "$VAR/idserver$1.state" >"$VAR/idserver$1.log" 2>&1 &
	SVC_PID=$!
	PIDS+=("$SVC_PID")
	for _ in $(seq 1 100); do
		[ "$(stat "$SVC_PORT" mode 2>/dev/null)" = ticket ] && break
		sleep 0.1
	done
	[ "$(stat "$SVC_PORT" mode)" = ticket ] || { say "idserver $2 not in ticket mode"; exit 1; }
	sleep 1
}

# stop: SIGTERM to the idserver started last, and wait for it.
stop() {
	kill -TERM "$SVC_PID"
	for _ in $(seq 1 100); do kill -0 "$SVC_PID" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$SVC_PID"
}
say "open loop $RATE req/s ($CONNS connections x pipeline $PIPE) for $DUR s; tickets from" \
	"BLOCK 4096 at $DRAIN req/s"

# run KIND N: one open-loop run, with (tickets) or without (quiet) the second client.
run() {
	local kind=$1 n=$2 dpid="" w0 w1 s0 s1 us held line
	w0=$(stat "$SVC_PORT" state_writes); s0=$(stat "$SVC_PORT" state_saves)
	if [ "$kind" = tickets ]; then
		"${PIN_CLI[@]}" "$IDBENCH" --port "$SVC_PORT" --command "BLOCK 4096" \
			--connections 1 --pipeline 8 --rate "$DRAIN" --duration $((DUR + 2)) \
			--no-verify --allow-errors >"$VAR/drain-$n.out" 2>&1 &
		dpid=$!
		sleep 1
	fi
	"${PIN_CLI[@]}" "$IDBENCH" --port "$SVC_PORT" --command ID --connections "$CONNS" \
		--pipeline "$PIPE" --rate "$RATE" --duration "$DUR" --allow-errors \
		--label "$kind-$n" >"$VAR/$kind-$n.out" 2>&1
	[ -n "$dpid" ] && wait "$dpid"
	w1=$(stat "$SVC_PORT" state_writes); s1=$(stat "$SVC_PORT" state_saves)
	us=$(stat "$SVC_PORT" state_write_us_max)
	held=$(stat "$SVC_PORT" state_save_loop_us_max)
	line=$(grep '^RESULT ' "$VAR/$kind-$n.out" | tail -n 1)
	[ -n "$line" ] || { say "$kind-$n: no RESULT: $(tail -n 2 "$VAR/$kind-$n.out")"; return 1; }
	awk -v k="$kind-$n" -v w=$((w1 - w0)) -v s="$((${s1:-0} - ${s0:-0}))" -v us="$us" \
	    -v held="${held:-n/a}" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); r[kv[1]] = kv[2] }
		printf "%-12s req/s %9s  P50 %6s us  P99 %7s us  P99.9 %7s us  max %8s us  " \
		    "errors %s  state file: %s writes (%s saves), longest write ever %s us, " \
		    "a ticket save held the loop at most %s us\n", k,
		    r["req_per_s"], r["p50_us"], r["p99_us"], r["p999_us"], r["max_us"],
		    r["errors"], w, s, us, held
	}' <<<"$line"
}

# Each binary in turn, once per rep, so two builds see the same hour of the machine.
for n in $(seq 1 "$REPS"); do
	k=0
	for bin in $IDSERVER; do
		k=$((k + 1))
		start "$k" "$bin"
		say "idserver $k: $bin (pid $SVC_PID)"
		run quiet "$k.$n" || exit 1
		run tickets "$k.$n" || exit 1
		stop
	done
done
