#!/usr/bin/env bash
# Distant ticket servers, through the latency proxy of the test tooling (no
# netem here): one idserver whose pair is 50 ms away (one way, +-10 ms jitter)
# and one whose pair is 200 ms away (+-50 ms), both on the same MariaDB pair,
# under the same steady open-loop load. After a warm-up the prefetch must keep
# ahead of the load: refill_waits (and refill_late_fallbacks, ids_fallback) do
# not move during the steady phase, so no request waits on a round trip to the
# database. Reports the request latency of the steady phase (idbench's P50/P99),
# the fetch time and the prefetch target; every ID collected, no duplicate.
. "$(dirname "$0")/lib.sh"

# The load: IDS 1000 at RATE requests/s (RATE * 1000 IDs/s); WARM s, then STEADY s.
RATE=${FAR_RATE:-3500}
# 10 s: copy first (design 6.5) makes a far block wait for its copy too, so the far
# idserver's target is about twice what it was, and 6 s did not always fill it.
WARM=${FAR_WARM:-10}
STEADY=${FAR_STEADY:-15}

# lib.sh's cleanup stops only processes whose command line names $ROOT: an
# idserver or idbench from a build dir elsewhere (BUILD=/tmp/...) is stopped here.
far_cleanup() {
	local rc=$? p i ours=()
	for p in "${PIDS[@]}"; do
		if alive "$p" && grep -qa -- "$BUILD/" "/proc/$p/cmdline" 2>/dev/null; then
			ours+=("$p")
			kill -TERM "$p" 2>/dev/null || true
		fi
	done
	set +e
	# Exited (drain, lease release) before lib.sh reads the logs for sanitizer reports.
	for p in "${ours[@]}"; do
		for i in $(seq 1 100); do alive "$p" || break; sleep 0.1; done
		alive "$p" && kill -KILL "$p" 2>/dev/null
	done
	(exit $rc)
	cleanup
}
trap far_cleanup EXIT

pair_up
# proxy NAME LISTEN UPSTREAM DELAY JITTER SEED
proxy() {
	python3 "$ROOT/tests/integration/delayproxy.py" "$2" "$3" "$4" --jitter "$5" --seed "$6" \
		>"$T_DIR/proxy-$1.log" 2>&1 &
	PIDS+=($!)
}
NEAR_ODD=$((ODD_PORT + 100)) NEAR_EVEN=$((EVEN_PORT + 100))
FAR_ODD=$((ODD_PORT + 200)) FAR_EVEN=$((EVEN_PORT + 200))
proxy near-odd "$NEAR_ODD" "$ODD_PORT" 50 10 1
proxy near-even "$NEAR_EVEN" "$EVEN_PORT" 50 10 2
proxy far-odd "$FAR_ODD" "$ODD_PORT" 200 50 3
proxy far-even "$FAR_EVEN" "$EVEN_PORT" 200 50 4
wait_for "the proxies" 10 bash -c "[ \$(ss -Hltn '( sport = :$NEAR_ODD or sport = :$NEAR_EVEN or sport = :$FAR_ODD or sport = :$FAR_EVEN )' | grep -c .) = 4 ]"

NEAR_SVC=$SVC_PORT FAR_SVC=$((SVC_PORT + 1))
# A round trip is up to 500 ms far away and a handshake several of them.
ODD_PORT=$NEAR_ODD EVEN_PORT=$NEAR_EVEN idserver_start near "$NEAR_SVC" \
	--connect_timeout_ms 2000 --query_timeout_ms 2000
ODD_PORT=$FAR_ODD EVEN_PORT=$FAR_EVEN idserver_start far "$FAR_SVC" \
	--connect_timeout_ms 4000 --query_timeout_ms 3000

ready() {
	local out
	out=$(q "$1" 'STATS\n')
	grep -q '^STAT odd_state up' <<<"$out" && grep -q '^STAT even_state up' <<<"$out" &&
		grep -q '^STAT lease_state held' <<<"$out"
}
wait_for "near: both servers up and a lease" 20 ready "$NEAR_SVC"
wait_for "far: both servers up and a lease" 30 ready "$FAR_SVC"

KEYS='refill_waits refill_late_fallbacks ids_fallback ids_ticket prefetch_target ids_buffered odd_fetch_us_avg even_fetch_us_avg odd_fetch_us_max even_fetch_us_max'
# snap PORT: the counters above, as name=value words.
snap() {
	q "$1" 'STATS\n' | awk -v keys="$KEYS" 'BEGIN { n = split(keys, k); for (i = 1; i <= n; i++) want[k[i]] = 1 }
		$1 == "STAT" && ($2 in want) { printf "%s=%s ", $2, $3 }'
}
val() { tr ' ' '\n' <<<"$1" | awk -F= -v n="$2" '$1 == n { print $2 }'; }

# steady NAME PORT: the warm-up run, then the measured run, stats around it.
steady() {
	local name=$1 port=$2 common
	common=(--port "$port" --connections 8 --rate "$RATE" --command 'IDS 1000' --reply-timeout 5)
	"$IDBENCH" "${common[@]}" --duration "$WARM" --dump "$T_DIR/ids-$name-warm.txt" \
		--label "$name-warmup" >"$T_DIR/bench-$name-warm.out" 2>&1 ||
		{ echo "warm-up failed: $(grep '^RESULT' "$T_DIR/bench-$name-warm.out")"; return 1; }
	snap "$port" >"$T_DIR/$name.before"
	"$IDBENCH" "${common[@]}" --duration "$STEADY" --dump "$T_DIR/ids-$name-steady.txt" \
		--label "$name-steady" >"$T_DIR/bench-$name-steady.out" 2>&1 ||
		{ echo "steady run failed: $(grep '^RESULT' "$T_DIR/bench-$name-steady.out")"; return 1; }
	snap "$port" >"$T_DIR/$name.after"
}
log "steady load: IDS 1000 at $RATE req/s ($((RATE * 1000)) IDs/s) on each idserver, ${WARM} s warm-up, ${STEADY} s measured"
steady near "$NEAR_SVC" >"$T_DIR/steady-near.err" 2>&1 & near=$!
steady far "$FAR_SVC" >"$T_DIR/steady-far.err" 2>&1 & far=$!
wait $near || fail "near: $(cat "$T_DIR/steady-near.err")"
wait $far || fail "far: $(cat "$T_DIR/steady-far.err")"

bad=0
for name in near far; do
	b=$(cat "$T_DIR/$name.before") a=$(cat "$T_DIR/$name.after")
	r=$(grep '^RESULT' "$T_DIR/bench-$name-steady.out")
	p50=$(grep -oE 'p50_us=[0-9.]+' <<<"$r" | cut -d= -f2)
	p99=$(grep -oE 'p99_us=[0-9.]+' <<<"$r" | cut -d= -f2)
	p999=$(grep -oE 'p999_us=[0-9.]+' <<<"$r" | cut -d= -f2)
	mx=$(grep -oE 'max_us=[0-9.]+' <<<"$r" | cut -d= -f2)
	log "$name: fetch_us_avg odd $(val "$a" odd_fetch_us_avg) even $(val "$a" even_fetch_us_avg)" \
		"(max $(val "$a" odd_fetch_us_max)/$(val "$a" even_fetch_us_max)), prefetch_target $(val "$a" prefetch_target)," \
		"ids_buffered $(val "$a" ids_buffered)"
	log "$name: refill_waits $(val "$b" refill_waits) -> $(val "$a" refill_waits)," \
		"refill_late_fallbacks $(val "$b" refill_late_fallbacks) -> $(val "$a" refill_late_fallbacks)," \
		"ids_fallback $(val "$b" ids_fallback) -> $(val "$a" ids_fallback);" \
		"steady latency p50 ${p50} us, p99 ${p99} us, p99.9 ${p999} us, max ${mx} us"
	for k in refill_waits refill_late_fallbacks ids_fallback; do
		[ "$(val "$b" $k)" = "$(val "$a" $k)" ] || { log "$name: $k moved in steady state"; bad=1; }
	done
	[ "$(val "$a" ids_ticket)" -gt "$(val "$b" ids_ticket)" ] || { log "$name: no ticket IDs"; bad=1; }
done
# The delay was real: a fetch is one round trip, 80..120 ms near, 300..500 ms far.
for name in near:80000 far:300000; do
	a=$(cat "$T_DIR/${name%:*}.after")
	for r in odd even; do
		[ "$(val "$a" ${r}_fetch_us_avg)" -ge "${name#*:}" ] ||
			fail "${name%:*}: ${r}_fetch_us_avg $(val "$a" ${r}_fetch_us_avg) us: the proxy delay did not apply"
	done
done
[ $bad = 0 ] || fail "requests waited on a refill in steady state"

n=$(check_unique "$T_DIR"/ids-*.txt) || fail "duplicate IDs"
log "ok: $n IDs, no duplicate; no refill wait in steady state 50 ms and 200 ms away"
