# The Python clients of docs/clients.md (redis_ids.py, grpc_ids.py) run ROUNDS times each;
# every ID must be an int of the mode's region (below 2^53 for tickets, above for
# Snowflake), and the gRPC strings equal the numbers. IDs are appended to DUMP
# as "id 1" lines for the test's duplicate check. One report line per client.
#   /usr/bin/python3 check.py MODE HOST RESP_PORT GRPC_PORT ROUNDS DUMP STUBS_DIR
import os
import sys

mode, host, resp, grpc_port, rounds, dump, stubs = sys.argv[1:8]
sys.path.insert(0, stubs)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grpc_ids import grpc_ids      # noqa: E402
from redis_ids import redis_ids    # noqa: E402

small = mode == "ticket"
out = open(dump, "a")
for name, take in (("redis-py", lambda: redis_ids(host, int(resp))),
                   ("grpcio", lambda: grpc_ids("%s:%s" % (host, grpc_port)))):
    got = []
    for _ in range(int(rounds)):
        got.extend(take())
    assert all(isinstance(i, int) and 0 < i < 2**63 for i in got), name
    assert all((i < 2**53) == small for i in got), "%s: an ID outside the %s region" % (name, mode)
    assert len(set(got)) == len(got), "%s: a repeated ID" % name
    out.write("".join("%d 1\n" % i for i in got))
    print("%s: %s: %d IDs, exact ints, all %s 2^53" % (mode, name, len(got),
                                                     "below" if small else "above"))
