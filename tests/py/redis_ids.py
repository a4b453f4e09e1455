# RESP with redis-py: Python ints are exact at any size, so Snowflake IDs above
# 2^53 need no care. pipeline() wraps its commands in MULTI/EXEC by default.
import redis


def redis_ids(host, port):
    r = redis.Redis(host=host, port=port)
    one = r.execute_command("ID")                   # 1421869061
    ids = r.execute_command("IDS", 1000)            # [1421869062, ...] ascending
    with r.pipeline() as p:                         # one MULTI/EXEC round trip
        p.execute_command("ID")
        p.execute_command("BLOCK", 100)
        two, (first, n) = p.execute()               # a dense block: first .. first+n-1
    r.close()
    return [one, *ids, two, *range(first, first + n)]
