// openapi_client.mts - a typed client of the served OpenAPI document, as a user
// would build one: openapi-typescript generates ./api.d.ts from
// /v1/openapi.json, openapi-fetch calls through it, and tsc --strict compiles
// this file against it (tests/integration/test_openapi_client.sh). The table
// `calls` is typed { [K in keyof operations]: ... }: tsc refuses it unless it
// calls every operation the document defines, and nothing else. Each answer is
// checked: its status, every ID a decimal string (the JSON number beside it
// only below 2^53, and equal to it), every ID of the mode (ticket: below 2^53,
// fallback: above), no ID twice. The IDs go to OUT as "first count" lines.
//
// node openapi_client.mjs MODE BASE_URL OUT   (MODE: ticket or fallback)
import fs from "node:fs";
import createClient from "openapi-fetch";
import type { operations, paths } from "./api.js";

const [mode, base, out] = process.argv.slice(2);
if ((mode !== "ticket" && mode !== "fallback") || !base || !out) {
  console.error("usage: openapi_client.mjs ticket|fallback BASE_URL OUT");
  process.exit(2);
}
// The ID API answers JSON or, by Accept, text/plain: both media types are in its
// 200 replies, so openapi-fetch's data is their union unless the client names the
// one it reads (openapi-fetch's Media parameter); the text form is asked for with
// parseAs: "text" and typed string.
const client = createClient<paths, "application/json">({ baseUrl: base });
const LIMIT = 2n ** 53n;
const DEC = /^[1-9][0-9]{0,18}$/;
const TEXT = { Accept: "text/plain" } as const;
const seen = new Set<bigint>();
const ranges: string[] = [];
let one = "";		// an ID of ours, for /v1/decode and /v1/b58
let b58 = "";		// its base58 form

function check(cond: boolean, what: string): asserts cond {
  if (!cond)
    throw new Error(`${mode}: ${what}`);
}

// The status an operation answered, and its Content-Type's media type.
function answered(op: string, res: Response, want: number, type?: string): void {
  check(res.status === want, `${op}: status ${res.status}, expected ${want}`);
  const got = (res.headers.get("content-type") ?? "").split(";")[0];
  check(type === undefined || got === type, `${op}: Content-Type ${got}, expected ${type}`);
}

// n IDs from first on, as an answer gave them: exact, of the mode, new.
function take(op: string, s: string, num: number | undefined, n = 1): void {
  check(DEC.test(s), `${op}: ID ${JSON.stringify(s)} is not a decimal string`);
  const first = BigInt(s);
  check(String(first) === s, `${op}: ${s} is not canonical`);
  check((first < LIMIT) === (mode === "ticket"), `${op}: ${s} is not a ${mode} ID`);
  check((num !== undefined) === (first < LIMIT), `${op}: numeric member ${num} beside ${s}`);
  check(num === undefined || (Number.isSafeInteger(num) && BigInt(num) === first),
    `${op}: numeric member ${num} differs from ${s}`);
  for (let i = 0n; i < BigInt(n); i++) {
    check(!seen.has(first + i), `${op}: ID ${first + i} received twice`);
    seen.add(first + i);
  }
  ranges.push(`${s} ${n}\n`);
  one ||= s;
}

// The text form of /v1/id and /v1/ids: one decimal ID per line.
function takeLines(op: string, body: string, n: number): void {
  const lines = body.split("\n");
  check(lines.pop() === "" && lines.length === n, `${op}: ${JSON.stringify(body)}`);
  for (const l of lines)
    take(op, l, BigInt(l) < LIMIT ? Number(l) : undefined);
}

// OPTIONS: 204, the path's methods in Allow.
function options(op: string, res: Response, methods: string): void {
  answered(op, res, 204);
  check(res.headers.get("allow") === methods, `${op}: Allow ${res.headers.get("allow")}, expected ${methods}`);
}

// HEAD: 200 and no body (on /v1/id, /v1/ids, /v1/block: no ID taken).
async function head(op: string, res: Response, type: string): Promise<void> {
  answered(op, res, 200, type);
  check((await res.text()) === "", `${op}: a body`);
}

const ID_METHODS = "GET, HEAD, POST, OPTIONS";
const PAGE_METHODS = "GET, HEAD, OPTIONS";

const calls: { [K in keyof operations]: () => Promise<void> } = {
  async getId() {
    const { data, response } = await client.GET("/v1/id");
    answered("getId", response, 200, "application/json");
    check(data !== undefined, "getId: no body");
    take("getId", data.id_str, data.id);
    const t = await client.GET("/v1/id", { params: { header: TEXT }, parseAs: "text" });
    answered("getId text", t.response, 200, "text/plain");
    takeLines("getId text", t.data ?? "", 1);
    // A refusal, typed as the document's Error: a namespace name outside the grammar.
    const bad = await client.GET("/v1/id", { params: { query: { ns: "a-b" } } });
    answered("getId ns=a-b", bad.response, 400, "application/json");
    check(bad.error?.error.code === "BADREQ", `getId ns=a-b: ${JSON.stringify(bad.error)}`);
  },
  async headId() {
    const { response } = await client.HEAD("/v1/id");
    await head("headId", response, "application/json");
  },
  async postId() {
    const { data, response } = await client.POST("/v1/id", { body: {} });
    answered("postId", response, 200, "application/json");
    check(data !== undefined, "postId: no body");
    take("postId", data.id_str, data.id);
  },
  async optionsId() {
    options("optionsId", (await client.OPTIONS("/v1/id")).response, ID_METHODS);
  },
  async getIds() {
    const { data, response } = await client.GET("/v1/ids", { params: { query: { count: 100 } } });
    answered("getIds", response, 200, "application/json");
    check(data !== undefined && data.ids_str.length === 100, "getIds: not 100 IDs");
    check((data.ids !== undefined) === (mode === "ticket"), `getIds: ids ${data.ids === undefined ? "absent" : "present"}`);
    data.ids_str.forEach((s, i) => take("getIds", s, data.ids?.[i]));
    const t = await client.GET("/v1/ids", { params: { query: { count: 10 }, header: TEXT }, parseAs: "text" });
    answered("getIds text", t.response, 200, "text/plain");
    takeLines("getIds text", t.data ?? "", 10);
  },
  async headIds() {
    const { response } = await client.HEAD("/v1/ids", { params: { query: { count: 1000 } } });
    await head("headIds", response, "application/json");
  },
  async postIds() {
    const { data, response } = await client.POST("/v1/ids", { body: { count: 50 } });
    answered("postIds", response, 200, "application/json");
    check(data !== undefined && data.ids_str.length === 50, "postIds: not 50 IDs");
    data.ids_str.forEach((s, i) => take("postIds", s, data.ids?.[i]));
  },
  async optionsIds() {
    options("optionsIds", (await client.OPTIONS("/v1/ids")).response, ID_METHODS);
  },
  async getBlock() {
    const { data, response } = await client.GET("/v1/block", { params: { query: { count: 64 } } });
    answered("getBlock", response, 200, "application/json");
    check(data !== undefined && data.count === 64, "getBlock: not 64 IDs");
    take("getBlock", data.first_str, data.first, data.count);
  },
  async headBlock() {
    const { response } = await client.HEAD("/v1/block", { params: { query: { count: 4096 } } });
    await head("headBlock", response, "application/json");
  },
  async postBlock() {
    const { data, response } = await client.POST("/v1/block", { params: { query: { count: 32 } } });
    answered("postBlock", response, 200, "application/json");
    check(data !== undefined && data.count === 32, "postBlock: not 32 IDs");
    take("postBlock", data.first_str, data.first, data.count);
  },
  async optionsBlock() {
    options("optionsBlock", (await client.OPTIONS("/v1/block")).response, ID_METHODS);
  },
  async getB58() {
    const { data, response } = await client.GET("/v1/b58/{id}", { params: { path: { id: one } } });
    answered("getB58", response, 200, "application/json");
    check(data !== undefined && data.id_str === one && /^[1-9A-HJ-NP-Za-km-z]{11}$/.test(data.b58),
      `getB58: ${JSON.stringify(data)}`);
    b58 = data.b58;
  },
  async headB58() {
    const { response } = await client.HEAD("/v1/b58/{id}", { params: { path: { id: one } } });
    await head("headB58", response, "application/json");
  },
  async postB58() {
    const { data, response } = await client.POST("/v1/b58/{id}", { params: { path: { id: one } }, body: {} });
    answered("postB58", response, 200, "application/json");
    check(data?.b58 === b58, `postB58: ${JSON.stringify(data)}`);
  },
  async optionsB58() {
    const { response } = await client.OPTIONS("/v1/b58/{id}", { params: { path: { id: one } } });
    options("optionsB58", response, ID_METHODS);
  },
  async getDecode() {
    for (const id of [one, b58]) {
      const { data, response } = await client.GET("/v1/decode/{id}", { params: { path: { id } } });
      answered("getDecode", response, 200, "application/json");
      check(data !== undefined && data.id_str === one && data.b58 === b58 &&
        data.source === (mode === "ticket" ? "ticket" : "snowflake"), `getDecode ${id}: ${JSON.stringify(data)}`);
    }
  },
  async headDecode() {
    const { response } = await client.HEAD("/v1/decode/{id}", { params: { path: { id: b58 } } });
    await head("headDecode", response, "application/json");
  },
  async postDecode() {
    const { data, response } = await client.POST("/v1/decode/{id}", { params: { path: { id: one } } });
    answered("postDecode", response, 200, "application/json");
    check(data?.id_str === one && data.b58 === b58, `postDecode: ${JSON.stringify(data)}`);
  },
  async optionsDecode() {
    const { response } = await client.OPTIONS("/v1/decode/{id}", { params: { path: { id: one } } });
    options("optionsDecode", response, ID_METHODS);
  },
  async getHealth() {
    const { data, response } = await client.GET("/health");
    answered("getHealth", response, 200, "application/json");
    check(data?.ok === true && data.mode === mode, `getHealth: ${JSON.stringify(data)}`);
  },
  async headHealth() {
    await head("headHealth", (await client.HEAD("/health")).response, "application/json");
  },
  async optionsHealth() {
    options("optionsHealth", (await client.OPTIONS("/health")).response, PAGE_METHODS);
  },
  async getStats() {
    const { data, response } = await client.GET("/stats");
    answered("getStats", response, 200, "application/json");
    check(data !== undefined && data.mode === mode && typeof data.requests === "number",
      `getStats: mode ${data?.mode}, requests ${data?.requests}`);
  },
  async headStats() {
    await head("headStats", (await client.HEAD("/stats")).response, "application/json");
  },
  async optionsStats() {
    options("optionsStats", (await client.OPTIONS("/stats")).response, PAGE_METHODS);
  },
  async getMetrics() {
    const { data, response } = await client.GET("/metrics", { parseAs: "text" });
    answered("getMetrics", response, 200, "text/plain");
    check(data !== undefined && /^# (HELP|TYPE) idgen_/m.test(data), "getMetrics: not the exposition format");
  },
  async headMetrics() {
    await head("headMetrics", (await client.HEAD("/metrics")).response, "text/plain");
  },
  async optionsMetrics() {
    options("optionsMetrics", (await client.OPTIONS("/metrics")).response, PAGE_METHODS);
  },
  async getOpenApi() {
    const { data, response } = await client.GET("/v1/openapi.json");
    answered("getOpenApi", response, 200, "application/json");
    check(data !== undefined && typeof data.openapi === "string", "getOpenApi: no openapi member");
    // The operations the served document defines are the ones this table calls.
    const ops = Object.values(data.paths as Record<string, Record<string, { operationId?: string }>>)
      .flatMap((item) => Object.values(item).map((op) => op.operationId))
      .filter((id): id is string => typeof id === "string").sort();
    check(JSON.stringify(ops) === JSON.stringify(Object.keys(calls).sort()),
      `getOpenApi: the document's operations are not the ones called: ${ops}`);
  },
  async headOpenApi() {
    await head("headOpenApi", (await client.HEAD("/v1/openapi.json")).response, "application/json");
  },
  async optionsOpenApi() {
    options("optionsOpenApi", (await client.OPTIONS("/v1/openapi.json")).response, PAGE_METHODS);
  },
};

for (const op of Object.keys(calls) as (keyof operations)[])
  await calls[op]();
fs.appendFileSync(out, ranges.join(""));
console.log(`${mode}: ${Object.keys(calls).length} operations called through openapi-fetch, ` +
  `${seen.size} IDs, each a decimal string, no duplicate`);
