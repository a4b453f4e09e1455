#!/usr/bin/env bash
# Silent partitions made by the kernel, not by a proxy: the test runs in a
# network namespace of its own (its own loopback, so the MariaDB pair and
# idserver bind 127.0.0.1 as usual), where an nftables DROP rule blackholes
# the packets between idserver and one ticket server, then both, then heals:
# no RST, no error, just silence. Under load (idbench, every ID collected):
#  - no request fails in any phase: buffered ticket IDs, the other server or the
#    Snowflake fallback (the lease window stays valid) always serves;
#  - one server partitioned: judged down by its timeout, the other carries on;
#  - both partitioned: the fallback serves;
#  - healed: both servers up again by themselves and the ticket path used again;
#  - every ID unique.
# Needs root (ip netns, nft). The namespace is deleted at the end, also on failure.
set -euo pipefail

if [ -z "${IDGEN_PART_NS:-}" ]; then
	# Outside: create the namespace, run this script inside it, delete it.
	NS=idgen-part-$$
	self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
	ns_cleanup() {
		local rc=$? p i
		set +e
		# Everything in this namespace was started by this run: the inside's own
		# cleanup stopped it, unless it was killed first.
		for p in $(ip netns pids "$NS" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
		for i in $(seq 1 100); do
			[ -z "$(ip netns pids "$NS" 2>/dev/null)" ] && break
			sleep 0.1
		done
		for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$NS" 2>/dev/null
		# awk reads to the end: no SIGPIPE to ip under pipefail (lib.sh is not loaded here).
		ip netns list 2>/dev/null | awk -v n="$NS" '$1 == n { f = 1 } END { exit !f }' && { echo "[test_partition] FAIL: namespace $NS left behind" >&2; rc=1; }
		exit $rc
	}
	trap ns_cleanup EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	ip netns add "$NS" || { echo "[test_partition] FAIL: ip netns add $NS (root needed)" >&2; exit 1; }
	ip netns exec "$NS" ip link set lo up
	rc=0
	IDGEN_PART_NS=$NS ip netns exec "$NS" bash "$self" "$@" || rc=$?
	exit $rc
fi

. "$(dirname "$0")/lib.sh"
NS=$IDGEN_PART_NS
command -v nft >/dev/null || fail "nft not found (make deps installs nftables)"
# Never touch the host's firewall: the rules below go only into our namespace.
[ "$(ip netns identify $$)" = "$NS" ] || fail "not inside network namespace $NS"

# lib.sh's cleanup stops only processes whose command line names $ROOT: an
# idserver or idbench from a build dir elsewhere (BUILD=/tmp/...) is stopped
# here (and by the outside's namespace sweep).
part_cleanup() {
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
trap part_cleanup EXIT

nft -f - <<EOF
table inet idgen_part {
	set blocked { type inet_service; }
	chain input {
		type filter hook input priority 0; policy accept;
		tcp dport @blocked counter drop
		tcp sport @blocked counter drop
	}
}
EOF
block() { local p; for p in "$@"; do nft add element inet idgen_part blocked "{ $p }"; done; }
heal() { nft flush set inet idgen_part blocked; }
dropped() { nft list chain inet idgen_part input | grep -oE 'packets [0-9]+' | awk '{ n += $2 } END { print n + 0 }'; }

pair_up
idserver_start svc "$SVC_PORT" --query_timeout_ms 800 --connect_timeout_ms 800 \
	--reprobe_max_ms 500 --lease_extend_ms 500
st() { stat "$SVC_PORT" "$1"; }
STATS_NOW=
snap() { STATS_NOW=$(q "$SVC_PORT" 'STATS\n'); }
sv() { awk -v n="$1" '$1 == "STAT" && $2 == n { print $3 }' <<<"$STATS_NOW"; }
state_is() { [ "$(st "$1_state")" = "$2" ]; }
state_not() { [ "$(st "$1_state")" != "$2" ]; }
gt() { [ "$(st "$1")" -gt "$2" ]; }
ready() {
	snap
	[ "$(sv odd_state)" = up ] && [ "$(sv even_state)" = up ] && [ "$(sv lease_state)" = held ]
}
wait_for "both servers up and a lease" 15 ready
wait_buffered "$SVC_PORT"

# The load, for the whole test, open loop (latency counts from the intended
# send time, so a stall shows): a seeded mix of ID, IDS 1..1000 and BLOCK
# 1..4096 at 3,000 requests/s (about 2.5 million IDs/s, below the fallback's
# 4,096 IDs per ms, so the fallback phase is not a saturation test), and single
# IDs at 2,000/s.
DUR=30
"$IDBENCH" --port "$SVC_PORT" --connections 8 --rate 3000 --command MIX --duration $DUR \
	--reply-timeout 5 --dump "$T_DIR/ids-mix.txt" --label partition-mix \
	>"$T_DIR/bench-mix.out" 2>&1 & mix=$!
PIDS+=($mix)
"$IDBENCH" --port "$SVC_PORT" --connections 4 --rate 2000 --command ID --duration $DUR \
	--reply-timeout 5 --dump "$T_DIR/ids-id.txt" --label partition-id \
	>"$T_DIR/bench-id.out" 2>&1 & idb=$!
PIDS+=($idb)
t0=$SECONDS
sleep 3
snap
log "healthy: odd $(sv odd_tickets) even $(sv even_tickets) tickets, $(sv ids_ticket) ticket IDs"

# 1. The odd server blackholed: its fetch or check times out (query_timeout_ms),
# it is judged down, the even server carries the load.
d0=$(dropped)
block "$ODD_PORT"
log "odd partitioned (DROP both ways) at +$((SECONDS - t0)) s"
wait_for "odd judged down" 10 state_not odd up
snap; e1=$(sv even_tickets) f1=$(sv ids_fallback) ef1=$(sv even_failures)
sleep 4
snap
[ "$(sv even_tickets)" -gt "$e1" ] || fail "the even server did not carry the load"
if [ "$(sv even_failures)" != "$ef1" ]; then
	# Even's own query timed out (a loaded machine: a clean clone's run saw it
	# 2.5 s after odd's, then 83 ms of fallback): the fallback was then due, so
	# no verdict on it; even must be back by itself.
	log "even itself failed $(( $(sv even_failures) - ef1 )) time(s) in the phase (load): $(( $(sv ids_fallback) - f1 )) fallback IDs not judged"
	wait_for "even up again" 10 state_is even up
	wait_for "ticket mode" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT mode ticket'"
else
	[ "$(sv even_state)" = up ] || fail "even not up while only odd was partitioned: $(sv even_state)"
	[ "$(sv mode)" = ticket ] || fail "mode $(sv mode) with one server partitioned"
	[ "$(sv ids_fallback)" = "$f1" ] || fail "$(( $(sv ids_fallback) - f1 )) fallback IDs while the even server was up"
fi
log "odd partitioned: odd $(sv odd_state), even carried on ($(sv even_tickets) tickets)"
[ "$(dropped)" -gt "$d0" ] || fail "no packet dropped by the rule"

# 2. Both blackholed: buffered IDs, then the Snowflake fallback (lease still valid).
block "$EVEN_PORT"
log "both partitioned at +$((SECONDS - t0)) s"
wait_for "even judged down" 10 state_not even up
wait_for "fallback mode" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT mode fallback'"
snap; fb=$(sv ids_fallback)
sleep 4
snap
[ "$(sv ids_fallback)" -gt "$fb" ] || fail "no fallback IDs with both partitioned"
[ "$(sv lease_state)" = held ] || fail "lease $(sv lease_state) with both partitioned"
log "both partitioned: mode $(sv mode), $(sv ids_fallback) Snowflake IDs so far, lease $(sv lease_state)"

# 3. Healed: re-probes get through, both servers checked again, tickets again.
snap; to=$(sv odd_tickets) te=$(sv even_tickets) ti=$(sv ids_ticket)
heal
log "healed at +$((SECONDS - t0)) s"
wait_for "odd up again" 20 state_is odd up
wait_for "even up again" 20 state_is even up
wait_for "ticket mode again" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT mode ticket'"
wait_for "odd tickets again" 10 gt odd_tickets "$to"
wait_for "even tickets again" 10 gt even_tickets "$te"
wait_for "ticket IDs again" 10 gt ids_ticket "$ti"
log "healed: both up and fetching again after $((SECONDS - t0)) s"
# New requests are served from tickets again (below 2^53), not the fallback.
sleep 2
id=$(q "$SVC_PORT" 'IDS 1000\n' | awk '{ print $NF }')
[ "$id" -lt 9007199254740992 ] || fail "still Snowflake IDs after healing ($id)"

left=$((DUR - (SECONDS - t0)))
[ $left -le 0 ] || sleep "$left"
wait $mix || fail "requests failed: $(grep '^RESULT' "$T_DIR/bench-mix.out")"
wait $idb || fail "requests failed: $(grep '^RESULT' "$T_DIR/bench-id.out")"
snap
for f in mix id; do
	grep '^RESULT' "$T_DIR/bench-$f.out" | tr ' ' '\n' |
		grep -E '^(label|requests|ids|p50_us|p99_us|p999_us|max_us|errors)=' | tr '\n' ' ' >&2
	echo >&2
done
for k in err_unavailable err_clock err_badreq err_range; do
	[ "$(sv $k)" = 0 ] || fail "$k=$(sv $k)"
done
log "ids_ticket $(sv ids_ticket) ids_fallback $(sv ids_fallback) refill_waits $(sv refill_waits)" \
	"refill_late_fallbacks $(sv refill_late_fallbacks) odd_failures $(sv odd_failures)" \
	"even_failures $(sv even_failures) packets dropped $(dropped)"
# Silence, not a reset: each server was judged down by its own timeout.
for r in odd even; do
	grep -qE "warn $r ticket server down: .*timed out" "$T_DIR/svc.log" ||
		fail "the $r server was not judged down by a timeout: $(grep -m1 "$r ticket server down" "$T_DIR/svc.log")"
done
grep -E ' warn | mode ' "$T_DIR/svc.log" | cut -d' ' -f2- | head -8 >&2 || true
n=$(check_unique "$T_DIR"/ids-*.txt) || fail "DUPLICATE IDs across the partitions"
log "ok: $n IDs through silent partitions of one and both servers, none failed, no duplicate"
