#!/usr/bin/env bash
# run.sh - `make run`: a local odd/even MariaDB pair, then idserver in the foreground.
#
#   run.sh          the sample config as it is: text+RESP 4242, HTTP 4243, gRPC 4244,
#                   its pair on 3307/3308, data under var/
#   run.sh PORT     every port from PORT: text+RESP PORT, HTTP PORT+1, gRPC PORT+2,
#                   its pair on PORT+3/PORT+4, data under var/PORT/ (apart from the
#                   default run's, so two checkouts or two runs side by side work)
#
# The pair keeps running after Ctrl-C: stop it with `make db-down [PORT=N]`.
# IDGEN_VAR moves var/ (test_run uses its own directory).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
VAR=${IDGEN_VAR:-var}
if [ $# -eq 0 ] || [ -z "$1" ]; then
	scripts/dbpair.sh up var 3307 3308
	exec "$BUILD/idserver" --config idserver.conf
fi
P=$1
[[ $P =~ ^[0-9]+$ ]] && [ "$P" -ge 1024 ] && [ "$P" -le 65531 ] ||
	{ echo "run: PORT must be a number in 1024..65531 (PORT..PORT+4 are used), not '$P'" >&2; exit 2; }
V=$VAR/$P
scripts/dbpair.sh up "$V" $((P + 3)) $((P + 4))
echo "run: text+RESP $P, HTTP $((P + 1)), gRPC $((P + 2)); pair $((P + 3))/$((P + 4)) under $V/"
exec "$BUILD/idserver" --config idserver.conf --listen_port "$P" --http_port $((P + 1)) \
	--grpc_port $((P + 2)) --odd_port $((P + 3)) --even_port $((P + 4)) \
	--db_password_file "$V/db_password" --state_file "$V/idserver.state"
