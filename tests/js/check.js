// check.js - runs docs/clients.md's JavaScript clients (redis_ids.js, http_ids.js,
// grpc_ids.js) against one idserver and checks every ID they return: a decimal
// string that round-trips through BigInt, in the mode's region (ticket: below
// 2^53, fallback: at or above it), never twice. It sees every HTTP body the
// fetch client received, and checks the numeric members: present and equal in
// ticket mode, absent in fallback. It also runs the unsafe defaults (ioredis
// without stringNumbers, proto-loader with longs: Number) and asserts what they
// do: exact in ticket mode, repeated and inexact IDs in fallback.
//
// With TS_DIR, docs/clients.md's TypeScript clients too (ids.ts as tsc compiled it
// into TS_DIR), checked the same way.
//
// node tests/js/check.js MODE HOST RESP_PORT HTTP_PORT GRPC_PORT ROUNDS OUT [TS_DIR]
// (from the repository root: grpc_ids.js loads proto/idgen.proto). Appends
// "id 1" lines to OUT (for lib.sh's check_unique); prints one line per path.
"use strict";
const fs = require("fs");
const Redis = require("ioredis");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const [mode, host, respPort, httpPort, grpcPort, roundsArg, out, tsDir] = process.argv.slice(2);
const rounds = Number(roundsArg);
const LIMIT = 2n ** 53n;
const fallback = mode === "fallback";
if (!["ticket", "fallback"].includes(mode) || !(rounds > 0) || !out) {
  console.error("usage: check.js ticket|fallback HOST RESP HTTP GRPC ROUNDS OUT");
  process.exit(2);
}

function check(cond, what) {
  if (!cond)
    throw new Error(`${mode}: ${what}`);
}

// An ID as the program got it: a string that BigInt reads back to itself.
function exact(s, path) {
  check(typeof s === "string" && /^[1-9][0-9]{0,18}$/.test(s),
    `${path}: ${JSON.stringify(s)} (${typeof s}) is not a decimal string`);
  const v = BigInt(s);
  check(String(v) === s, `${path}: ${s} does not round-trip`);
  check(fallback ? v >= LIMIT : v < LIMIT,
    `${path}: ${s} is not a ${fallback ? "Snowflake" : "ticket"} ID`);
  return v;
}

// Every HTTP body http_ids.js receives, as the text the server sent.
const bodies = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (...args) => {
  const res = await realFetch(...args);
  bodies.push(await res.clone().text());
  return res;
};

// One rule for a body: the number only below 2^53 (ids: only if every ID is).
function checkBody(text) {
  const d = JSON.parse(text);
  const strs = "ids_str" in d ? d.ids_str : [d.id_str];
  const num = "ids_str" in d ? "ids" : "id";
  const vals = strs.map(BigInt);
  check(Array.isArray(strs) && strs.length > 0, `body without an ID: ${text.slice(0, 80)}`);
  if (vals.every((v) => v < LIMIT)) {
    check(num in d, `${num} missing below 2^53: ${text.slice(0, 80)}`);
    const nums = num === "ids" ? d.ids : [d.id];
    check(nums.length === vals.length && nums.every((n, i) => BigInt(n) === vals[i]),
      `${num} differs from its strings: ${text.slice(0, 80)}`);
  } else
    check(!(num in d), `${num} present above 2^53: ${text.slice(0, 80)}`);
  return num in d;
}

const seen = new Set();
const lines = [];
function collect(path, ids) {
  for (const s of ids) {
    const v = exact(s, path);
    check(!seen.has(v), `${path}: ${s} repeated`);
    seen.add(v);
    lines.push(`${s} 1\n`);
  }
  return ids.length;
}

// The unsafe defaults: integer replies as JS numbers.
async function unsafeRedis() {
  const redis = new Redis({ host, port: Number(respPort) });
  const ids = await redis.call("IDS", 1000);
  redis.disconnect();
  check(ids.length === 1000 && ids.every((n) => typeof n === "number"), "ioredis default: not numbers");
  return { distinct: new Set(ids).size, safe: ids.filter(Number.isSafeInteger).length };
}

async function unsafeGrpc() {
  const def = protoLoader.loadSync("proto/idgen.proto", { keepCase: true, longs: Number });
  const { IdGeneratorService } = grpc.loadPackageDefinition(def).hispeeddesign.idgen.v1;
  const client = new IdGeneratorService(`${host}:${grpcPort}`, grpc.credentials.createInsecure());
  const b = await new Promise((resolve, reject) =>
    client.GenerateIdBatch({ count: 1000 }, (err, res) => (err ? reject(err) : resolve(res))));
  client.close();
  // The same reply's exact strings say which numbers were rounded.
  const wrong = b.ids.filter((n, i) => BigInt(n) !== BigInt(b.ids_str[i])).length;
  return { distinct: new Set(b.ids).size, wrong };
}

async function main() {
  const { redisIds } = require("./redis_ids.js");
  const { httpIds } = require("./http_ids.js");
  const { grpcIds } = require("./grpc_ids.js");
  const ts = tsDir ? require(require("path").resolve(tsDir, "ids.js")) : null;
  const counts = { ioredis: 0, fetch: 0, "grpc-js": 0 };

  if (ts)
    Object.assign(counts, { "TypeScript ioredis": 0, "TypeScript fetch": 0, "TypeScript grpc-js": 0 });
  for (let r = 0; r < rounds; r++) {
    counts.ioredis += collect("ioredis", await redisIds(host, Number(respPort)));
    counts.fetch += collect("fetch", await httpIds(`http://${host}:${httpPort}`));
    counts["grpc-js"] += collect("grpc-js", await grpcIds(`${host}:${grpcPort}`));
    if (!ts)
      continue;
    counts["TypeScript ioredis"] += collect("TypeScript ioredis", await ts.redisIds(host, Number(respPort)));
    counts["TypeScript fetch"] += collect("TypeScript fetch", await ts.httpIds(`http://${host}:${httpPort}`));
    counts["TypeScript grpc-js"] += collect("TypeScript grpc-js", await ts.grpcIds(`${host}:${grpcPort}`));
  }
  check(bodies.length === (ts ? 3 : 2) * rounds, `fetch made ${bodies.length} requests`);
  const numeric = bodies.filter(checkBody).length;
  check(numeric === (fallback ? 0 : bodies.length),
    `${numeric} of ${bodies.length} bodies carry numeric IDs`);
  for (const [path, n] of Object.entries(counts))
    console.log(`${mode} ${path}: ${n} IDs exact and distinct`);
  console.log(`${mode} fetch: ${bodies.length} bodies, numeric id/ids in ${numeric}`);

  const ur = await unsafeRedis();
  const ug = await unsafeGrpc();
  if (fallback) {
    check(ur.safe === 0 && ur.distinct < 1000,
      `ioredis default kept ${ur.distinct} distinct, ${ur.safe} safe of 1000`);
    check(ug.wrong > 0 && ug.distinct < 1000,
      `longs: Number kept ${ug.distinct} distinct, ${ug.wrong} wrong of 1000`);
  } else {
    check(ur.safe === 1000 && ur.distinct === 1000, "ioredis default inexact in ticket mode");
    check(ug.wrong === 0 && ug.distinct === 1000, "longs: Number inexact in ticket mode");
  }
  console.log(`${mode} unsafe defaults, IDS 1000 / GenerateIdBatch 1000: ioredis without ` +
    `stringNumbers ${ur.distinct} distinct values, longs: Number ${ug.distinct} distinct ` +
    `(${ug.wrong} differ from ids_str)`);
  fs.appendFileSync(out, lines.join(""));
}

main().catch((e) => {
  console.error(`FAIL ${e.message}`);
  process.exit(1);
});
