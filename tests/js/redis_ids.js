// RESP with ioredis: stringNumbers makes every integer reply a string, exact
// for Snowflake IDs (above 2^53) that a JS number would round.
const Redis = require("ioredis");

async function redisIds(host, port) {
  const redis = new Redis({ host, port, stringNumbers: true });
  const id = await redis.call("ID");                // "1421869061"
  const ids = await redis.call("IDS", 1000);        // ["1421869062", ...] ascending
  redis.disconnect();
  return [id, ...ids];                              // BigInt(id) to compute with one
}

module.exports = { redisIds };
