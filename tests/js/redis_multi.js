// ioredis's transactions and pipelines against idserver's RESP: multi() wraps
// the commands in MULTI/EXEC, pipeline() sends them back to back. Every ID
// reaches the program as an exact string (stringNumbers); a command that fails
// inside EXEC fails alone. Prints one line; appends every ID to the dump file
// as "id 1" for the test's duplicate check.
//   node redis_multi.js HOST PORT DUMP
const fs = require("fs");
const Redis = require("ioredis");

const ROUNDS = 5, N = 100;

async function main() {
  const [host, port, dump] = process.argv.slice(2);
  const redis = new Redis({ host, port: Number(port), stringNumbers: true });
  const got = [];
  const take = (id) => {
    if (typeof id !== "string" || BigInt(id).toString() !== id)
      throw new Error("not an exact decimal string: " + id);
    got.push(id);
  };
  for (let r = 0; r < ROUNDS; r++) {
    const res = await redis.multi().call("ID").call("IDS", N).exec();
    if (res.length !== 2 || res[0][0] || res[1][0])
      throw new Error("multi: " + JSON.stringify(res));
    take(res[0][1]);
    res[1][1].forEach(take);
  }
  const p = await redis.pipeline().call("ID").call("IDS", N).exec();
  take(p[0][1]);
  p[1][1].forEach(take);
  // A runtime error inside EXEC is that command's alone.
  const bad = await redis.multi().call("IDS", 0).call("ID").exec();
  if (!bad[0][0] || !/RANGE/.test(String(bad[0][0])) || bad[1][0])
    throw new Error("error inside EXEC: " + JSON.stringify(bad.map((x) => String(x[0]))));
  take(bad[1][1]);
  redis.disconnect();
  if (new Set(got).size !== got.length) throw new Error("a repeated ID");
  fs.appendFileSync(dump, got.map((id) => id + " 1\n").join(""));
  console.log(`ioredis multi()/pipeline(): ${got.length} IDs in ${ROUNDS + 1} transactions ` +
    `and a pipeline, exact, the RANGE error inside EXEC its command's alone`);
}

main().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
