// ioredis pipelining a large burst against idserver's RESP port, over TLS or
// not, optionally with a token (issue 31): N commands in one pipeline(), every
// reply checked (an ID as an exact decimal string, none twice, PING's PONG at
// the end). With a token, the client is given only what the options say:
// `password` alone (ioredis sends AUTH <token>), or `username` too (AUTH
// <username> <token>). Prints one line; appends every ID to DUMP as "id 1".
//   node redis_pipeline.js HOST PORT N DUMP [--ca FILE] [--password TOKEN]
//     [--username NAME]
"use strict";
const fs = require("fs");
const Redis = require("ioredis");

async function main() {
  const [host, port, nArg, dump, ...rest] = process.argv.slice(2);
  const n = Number(nArg);
  const opt = {};
  for (let i = 0; i + 1 < rest.length; i += 2)
    opt[rest[i].replace(/^--/, "")] = rest[i + 1];
  if (!(n > 0) || !dump) {
    console.error("usage: redis_pipeline.js HOST PORT N DUMP [--ca FILE] [--password T] [--username U]");
    process.exit(2);
  }
  const options = { host, port: Number(port), stringNumbers: true, maxRetriesPerRequest: 0,
    enableOfflineQueue: true, retryStrategy: () => null, commandTimeout: 20000 };
  if (opt.ca)
    options.tls = { ca: fs.readFileSync(opt.ca), servername: "localhost" };
  if (opt.password)
    options.password = opt.password;
  if (opt.username)
    options.username = opt.username;
  const redis = new Redis(options);
  redis.on("error", () => {});	// the failed command says what went wrong
  const t0 = Date.now();
  const p = redis.pipeline();
  for (let i = 0; i < n; i++)
    p.call("ID");
  p.ping();
  const res = await p.exec();
  const ms = Date.now() - t0;
  redis.disconnect();
  if (res.length !== n + 1)
    throw new Error(`${res.length} replies for ${n + 1} commands`);
  const got = [];
  let failed = 0, first = null;
  for (let i = 0; i < n; i++) {
    const [err, id] = res[i];
    if (err || typeof id !== "string" || !/^[1-9][0-9]{0,18}$/.test(id)) {
      failed++;
      first = first || `reply ${i}: ${err ? String(err) : JSON.stringify(id)}`;
      continue;
    }
    got.push(id);
  }
  if (res[n][0] || res[n][1] !== "PONG") {
    failed++;
    first = first || `PING: ${String(res[n][0] || res[n][1])}`;
  }
  if (failed > 0)
    throw new Error(`${failed} of ${n + 1} replies wrong, the first: ${first}`);
  if (new Set(got).size !== got.length)
    throw new Error("a repeated ID");
  fs.appendFileSync(dump, got.map((id) => id + " 1\n").join(""));
  console.log(`ioredis pipeline${opt.ca ? " over TLS" : ""}${opt.username ? " as " + opt.username :
    opt.password ? " with password only" : ""}: ${n} IDs and PONG in ${ms} ms, every reply checked`);
}

main().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
