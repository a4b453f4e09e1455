#!/usr/bin/env bash
# run-regions.sh - two regions on loopback, each its own odd/even pair, one tier
# (tier_increment 4, region_bits 5: region r's pair has offsets 2r+1 and 2r+2
# and the worker numbers 32r..32r+31; docs/design.md section 12):
#
#   region 0: MariaDB 3307/3308, idserver text+RESP 4242, HTTP 4243, gRPC 4244
#   region 1: MariaDB 3317/3318, idserver text+RESP 4252, HTTP 4253, gRPC 4254
#
# Each idserver takes the other region's tickets while its own pair is down
# (other_regions). Data, state files and logs under var/regions/ (not make run's var/: the shape
# differs). Ctrl-C stops both idservers; the databases keep running until
# `scripts/dbpair.sh down var/regions/r0` (and r1), as with make run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
V=var/regions
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
		scripts/dbpair.sh up "$V/r$r" $((3307 + 10 * r)) $((3308 + 10 * r))
done
pids=()
stop() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait; }
trap stop EXIT INT TERM
for r in 0 1; do
	"$BUILD/idserver" --config idserver.conf --tier_increment 4 --region_bits 5 --region $r \
		--odd_port $((3307 + 10 * r)) --even_port $((3308 + 10 * r)) \
		--other_regions "$((1 - r))=127.0.0.1:$((3317 - 10 * r)),127.0.0.1:$((3318 - 10 * r))" \
		--listen_port $((4242 + 10 * r)) --http_port $((4243 + 10 * r)) \
		--grpc_port $((4244 + 10 * r)) --db_password_file "$V/db_password" \
		--state_file "$V/r$r/idserver.state" > >(sed -u "s/^/[region $r] /") 2>&1 &
	pids+=($!)
done
echo "run-regions: region 0 on 4242/4243/4244, region 1 on 4252/4253/4254; Ctrl-C stops"
wait
