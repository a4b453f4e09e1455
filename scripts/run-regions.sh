#!/usr/bin/env bash
# run-regions.sh - two regions on loopback, each its own odd/even pair, one tier
# (tier_increment 4, region_bits 5: region r's pair has offsets 2r+1 and 2r+2
# and the worker numbers 32r..32r+31; docs/design.md section 12):
#
#   region 0: MariaDB 3307/3308, idserver text+RESP 4242, HTTP 4243, gRPC 4244
#   region 1: MariaDB 3317/3318, idserver text+RESP 4252, HTTP 4253, gRPC 4254
#
# run-regions.sh PORT (make run-regions PORT=N): region 0's idserver on PORT,
# PORT+1, PORT+2 and its pair on PORT+3/PORT+4; region 1 the same from PORT+10;
# data under var/PORT/regions/.
#
# Each idserver takes the other region's tickets while its own pair is down
# (other_regions). Data, state files and logs under var/regions/ (not make run's var/: the shape
# differs). Ctrl-C stops both idservers; the databases keep running until
# `scripts/dbpair.sh down var/regions/r0` (and r1; var/PORT/regions/r0 ...), as with make run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
VAR=${IDGEN_VAR:-var}	# test_run's own directory instead of var/
V=$VAR/regions
# idserver ports of region 0 (text, HTTP, gRPC) and its pair's; region 1: +10.
SVC=4242
DB=3307
if [ $# -gt 0 ] && [ -n "$1" ]; then
	[[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge 1024 ] && [ "$1" -le 65521 ] ||
		{ echo "run-regions: PORT must be a number in 1024..65521 (PORT..PORT+14 are used), not '$1'" >&2; exit 2; }
	SVC=$1
	DB=$(($1 + 3))
	V=$VAR/$1/regions
fi
mkdir -p "$V/r0" "$V/r1"
if [ ! -s "$V/db_password" ]; then
	umask 077
	head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$V/db_password"
	umask 022
fi
cp "$V/db_password" "$V/r0/db_password"
cp "$V/db_password" "$V/r1/db_password"
for r in 0 1; do
	DBPAIR_INCREMENT=4 DBPAIR_REGION=$r DBPAIR_REGION_BITS=5 \
		scripts/dbpair.sh up "$V/r$r" $((DB + 10 * r)) $((DB + 1 + 10 * r))
done
pids=()
stop() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait; }
trap stop EXIT INT TERM
for r in 0 1; do
	"$BUILD/idserver" --config idserver.conf --tier_increment 4 --region_bits 5 --region $r \
		--odd_port $((DB + 10 * r)) --even_port $((DB + 1 + 10 * r)) \
		--other_regions "$((1 - r))=127.0.0.1:$((DB + 10 - 10 * r)),127.0.0.1:$((DB + 11 - 10 * r))" \
		--listen_port $((SVC + 10 * r)) --http_port $((SVC + 1 + 10 * r)) \
		--grpc_port $((SVC + 2 + 10 * r)) --db_password_file "$V/db_password" \
		--state_file "$V/r$r/idserver.state" > >(sed -u "s/^/[region $r] /") 2>&1 &
	pids+=($!)
done
echo "run-regions: region 0 on $SVC/$((SVC + 1))/$((SVC + 2)) (pair $DB/$((DB + 1))), region 1 on" \
	"$((SVC + 10))/$((SVC + 11))/$((SVC + 12)) (pair $((DB + 10))/$((DB + 11))), data under $V/; Ctrl-C stops"
wait
