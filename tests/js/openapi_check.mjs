// openapi_check.mjs - docs/openapi.json against a real validator and the real
// server: the document is valid OpenAPI (@seriousme/openapi-schema-validator),
// /v1/openapi.json serves it byte for byte, and every operation in it is called
// (GET, HEAD, POST, OPTIONS of every path) along with the documented refusals;
// every reply's status must be one the document lists for that operation, its
// Content-Type one of the response's media types, and its body valid against
// the schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses). HEAD and 204
// replies have no body. Every ID received is appended to OUT ("first count").
//
// node tests/js/openapi_check.mjs MODE BASE_URL DOC OUT
// MODE: ticket or fallback (the service serves IDs: every operation, the
// refusals), or down (no ID can be served: every operation documenting 503),
// or auth (a service with auth_tokens_file and auth_open_metrics = 0, its
// tokens in OPENAPI_TOKEN and OPENAPI_RO_TOKEN: every operation documenting
// 401 called without a token and with a wrong one, every one documenting 403
// with the read-only token, and each once with the token).
import fs from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";

const [mode, base, docPath, out] = process.argv.slice(2);
if (!["ticket", "fallback", "down", "auth"].includes(mode) || !base || !docPath || !out) {
  console.error("usage: openapi_check.mjs ticket|fallback|down|auth BASE_URL DOC OUT");
  process.exit(2);
}
const LIMIT = 2n ** 53n;
const text = fs.readFileSync(docPath, "utf8");
const doc = JSON.parse(text);
const ids = [];

function check(cond, what) {
  if (!cond)
    throw new Error(`${mode}: ${what}`);
}

// 1. A valid OpenAPI document, and the one the server serves.
const res = await new Validator().validate(structuredClone(doc));
check(res.valid, `docs/openapi.json is not valid OpenAPI ${doc.openapi}: ` +
  String(JSON.stringify(res.errors)).slice(0, 600));
const served = await fetch(`${base}/v1/openapi.json`);
check(served.status === 200 && (await served.text()) === text,
  "/v1/openapi.json is not docs/openapi.json byte for byte");

// Schemas are compiled by their JSON pointer into the document, so its $refs resolve.
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(doc, "doc");
const ptr = (parts) => "doc#/" + parts.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
function deref(obj, parts) {
  while (obj.$ref) {
    parts = obj.$ref.slice(2).split("/").map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
    obj = parts.reduce((o, k) => o[k], doc);
  }
  return [obj, parts];
}

const METHODS = ["get", "head", "post", "options"];
const seen = new Map();	// "method path" -> Set of statuses
for (const [path, item] of Object.entries(doc.paths))
  for (const m of METHODS)
    if (item[m])
      seen.set(`${m} ${path}`, new Set());

// An ID as a decimal string: exact, in the mode's region, collected.
function idOf(s, n, what) {
  check(typeof s === "string" && /^[1-9][0-9]{0,18}$/.test(s), `${what}: ${s}`);
  const v = BigInt(s);
  check(mode === "fallback" ? v >= LIMIT : mode === "auth" || v < LIMIT, `${what}: ${s} not a ${mode} ID`);
  ids.push(`${s} ${n}`);
  return v;
}

// The IDs of an ID API body, and the numeric members only where exact.
function collect(path, type, body) {
  if (path === "/v1/id" || path === "/v1/ids" || path === "/v1/block") {
    if (type === "text") {
      const lines = body.split("\n").slice(0, -1);
      if (path === "/v1/block") {
        const [f, n] = lines[0].split(" ");
        check(lines.length === 1, `block text: ${body}`);
        idOf(f, Number(n), `${path} text`);
      } else
        lines.forEach((s) => idOf(s, 1, `${path} text`));
      return;
    }
    const strs = path === "/v1/id" ? [body.id_str] : path === "/v1/ids" ? body.ids_str : [body.first_str];
    const nums = path === "/v1/id" ? body.id : path === "/v1/ids" ? body.ids : body.first;
    check(mode === "auth" || (nums !== undefined) === (mode === "ticket"),
      `${path}: numeric member ${mode === "ticket" ? "absent" : "present"}`);
    strs.forEach((s, i) => {
      const v = idOf(s, path === "/v1/block" ? body.count : 1, path);
      if (nums !== undefined)
        check(BigInt(Array.isArray(nums) ? nums[i] : nums) === v, `${path}: number != string`);
    });
  }
}

// One request: its status documented for the operation, its body as documented.
async function call(method, template, url, { headers = {}, body, want } = {}) {
  const r = await fetch(base + url, { method: method.toUpperCase(), headers, body });
  const raw = await r.text();
  const where = `${method.toUpperCase()} ${url} -> ${r.status}`;
  check(r.status === want, `${where}, want ${want}: ${raw.slice(0, 200)}`);
  const op = doc.paths[template][method];
  check(op.responses[String(r.status)], `${where}: status not in the document`);
  seen.get(`${method} ${template}`).add(r.status);
  const [resp, parts] = deref(op.responses[String(r.status)],
    ["paths", template, method, "responses", String(r.status)]);
  if (method === "head" || r.status === 204) {
    check(raw === "", `${where}: a body`);
    return null;
  }
  if (!resp.content)
    return null;
  const ctype = r.headers.get("content-type");
  const key = Object.keys(resp.content).find((k) => k === ctype || k === ctype.split(";")[0]);
  check(key, `${where}: Content-Type ${ctype} not documented (${Object.keys(resp.content)})`);
  const json = key === "application/json";
  const value = json ? JSON.parse(raw) : raw;
  const validate = ajv.getSchema(ptr([...parts, "content", key, "schema"])) ||
    ajv.compile({ $ref: ptr([...parts, "content", key, "schema"]) });
  if (!validate(value))
    check(false, `${where}: body ${raw.slice(0, 200)} does not match the schema: ` +
      JSON.stringify(validate.errors).slice(0, 400));
  for (const [h, spec] of Object.entries(resp.headers || {}))
    if (!h.startsWith("Access-Control"))
      check(r.headers.get(h) !== null, `${where}: no ${h} header`);
  if (r.status === 200)
    collect(template, json ? "json" : "text", value);
  return value;
}

const JSON_CT = { "Content-Type": "application/json" };
const TEXT = { Accept: "text/plain" };
// 401 and 403 need a service with tokens: mode auth exercises them, the others skip them.
const AUTH_CODES = ["401", "403"];
if (mode === "auth") {
  const tok = process.env.OPENAPI_TOKEN, ro = process.env.OPENAPI_RO_TOKEN;
  check(tok && ro, "auth: set OPENAPI_TOKEN and OPENAPI_RO_TOKEN");
  const bearer = (t) => ({ Authorization: `Bearer ${t}` });
  const one = await call("get", "/v1/id", "/v1/id", { headers: bearer(tok), want: 200 });
  for (const [path, item] of Object.entries(doc.paths))
    for (const m of ["get", "head", "post"]) {
      if (!item[m])
        continue;
      const url = path.replace("{id}", one.id_str).replace(/\/v1\/(ids|block)$/, "/v1/$1?count=2");
      if (item[m].responses["401"])
        for (const h of [{}, TEXT, bearer("wrong-token-0123456789")])
          await call(m, path, url, { headers: h, want: 401 });
      if (item[m].responses["403"])
        for (const h of [{}, TEXT])
          await call(m, path, url, { headers: { ...h, ...bearer(ro) }, want: 403 });
      await call(m, path, url, { headers: bearer(item[m].responses["403"] ? tok : ro), want: 200 });
    }
  for (const [key, statuses] of seen) {
    const [m, path] = key.split(" ");
    for (const s of AUTH_CODES)
      check(!doc.paths[path][m].responses[s] || statuses.has(Number(s)),
        `${key}: documented status ${s} never exercised`);
  }
} else if (mode === "down") {
  // Every operation that documents 503, and /health's 503.
  for (const [path, item] of Object.entries(doc.paths))
    for (const m of METHODS) {
      if (!item[m] || !item[m].responses["503"])
        continue;
      const url = path.replace("{id}", "1").replace(/\/v1\/(ids|block)$/, "/v1/$1?count=2");
      await call(m, path, url, { want: 503 });
      if (path.startsWith("/v1/"))
        await call(m, path, url, { headers: TEXT, want: 503 });
    }
} else {
  // Every operation, in each form.
  for (const m of ["get", "head", "post"]) {
    for (const h of [{}, TEXT]) {
      await call(m, "/v1/id", "/v1/id", { headers: h, want: 200 });
      await call(m, "/v1/ids", "/v1/ids?count=5", { headers: h, want: 200 });
      await call(m, "/v1/block", "/v1/block?count=10", { headers: h, want: 200 });
    }
  }
  for (const h of [{}, TEXT]) {
    await call("post", "/v1/ids", "/v1/ids", { headers: { ...JSON_CT, ...h }, body: '{"count":7}', want: 200 });
    await call("post", "/v1/block", "/v1/block", { headers: { ...JSON_CT, ...h }, body: '{"count":20}', want: 200 });
    await call("post", "/v1/id", "/v1/id", { headers: { ...JSON_CT, ...h }, body: "{}", want: 200 });
  }
  const one = await call("get", "/v1/id", "/v1/id", { want: 200 });
  const b = (await call("get", "/v1/b58/{id}", `/v1/b58/${one.id_str}`, { want: 200 })).b58;
  for (const m of ["get", "head", "post"])
    for (const arg of [one.id_str, b])
      for (const h of [{}, TEXT]) {
        await call(m, "/v1/decode/{id}", `/v1/decode/${arg}`, { headers: h, want: 200 });
        if (arg === one.id_str)
          await call(m, "/v1/b58/{id}", `/v1/b58/${arg}`, { headers: h, want: 200 });
      }
  const dec = await call("get", "/v1/decode/{id}", `/v1/decode/${b}`, { want: 200 });
  check(dec.id_str === one.id_str && dec.source === (mode === "ticket" ? "ticket" : "snowflake"),
    `decode: ${JSON.stringify(dec)}`);
  const dtext = await call("get", "/v1/decode/{id}", `/v1/decode/${b}`, { headers: TEXT, want: 200 });
  check(dtext.startsWith(mode === "ticket" ? "ticket block=" : "snowflake time=") &&
    dtext.endsWith(` id=${one.id_str}\n`), `decode text: ${dtext}`);
  for (const path of ["/health", "/stats", "/metrics", "/v1/openapi.json"])
    for (const m of ["get", "head"])
      await call(m, path, path, { want: 200 });
  for (const [path, item] of Object.entries(doc.paths))
    await call("options", path, path.replace("{id}", one.id_str), { want: 204 });

  // The refusals the document lists.
  for (const h of [{}, TEXT]) {
    await call("get", "/v1/id", "/v1/id?ns=a-b", { headers: h, want: 400 });
    await call("get", "/v1/ids", "/v1/ids?count=5000", { headers: h, want: 400 });
    await call("head", "/v1/ids", "/v1/ids", { headers: h, want: 400 });
    await call("get", "/v1/block", "/v1/block?count=x", { headers: h, want: 400 });
    await call("head", "/v1/block", "/v1/block?count=0", { headers: h, want: 400 });
    await call("get", "/v1/decode/{id}", "/v1/decode/0", { headers: h, want: 400 });
    await call("head", "/v1/decode/{id}", "/v1/decode/0", { headers: h, want: 400 });
    await call("get", "/v1/b58/{id}", "/v1/b58/x", { headers: h, want: 400 });
    await call("head", "/v1/b58/{id}", "/v1/b58/x", { headers: h, want: 400 });
    for (const [path, body] of [["/v1/ids", '{"count":5'], ["/v1/block", '{"count":"5"}'],
      ["/v1/id", '{"count":1}'], ["/v1/decode/{id}", '{"x":1}'], ["/v1/b58/{id}", "[]"]]) {
      const url = path.replace("{id}", one.id_str);
      await call("post", path, url, { headers: { ...JSON_CT, ...h }, body, want: 400 });
      await call("post", path, url, { headers: h, body: "count=5", want: 415 });
      await call("post", path, url, { headers: JSON_CT, body: " ".repeat(8192), want: 413 });
    }
    await call("post", "/v1/ids", "/v1/ids?count=2", { headers: { ...JSON_CT, ...h }, body: '{"count":2}', want: 400 });
    await call("post", "/v1/ids", "/v1/ids", { headers: { ...JSON_CT, ...h }, body: '{"count":1001}', want: 400 });
  }
  // Every operation called, every status it documents seen (503: mode down).
  for (const [key, statuses] of seen) {
    const [m, path] = key.split(" ");
    for (const s of Object.keys(doc.paths[path][m].responses))
      check(s === "503" || AUTH_CODES.includes(s) || statuses.has(Number(s)),
        `${key}: documented status ${s} never exercised`);
  }
}
fs.appendFileSync(out, ids.length ? ids.join("\n") + "\n" : "");
console.log(`openapi ${mode}: docs/openapi.json valid OpenAPI ${doc.openapi}, served byte for byte; ` +
  `${[...seen.values()].filter((s) => s.size).length} operations called, ` +
  `${[...seen.values()].reduce((n, s) => n + s.size, 0)} (operation, status) pairs checked ` +
  `against their schemas; ${ids.length} ID replies`);
