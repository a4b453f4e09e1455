// HTTP with fetch: read id_str / ids_str. The numbers id / ids are there only
// below 2^53 (ticket IDs); a Snowflake ID comes as a string only.
async function httpIds(base) {
  const one = await (await fetch(`${base}/v1/id`)).json();
  const batch = await (await fetch(`${base}/v1/ids?count=1000`)).json();
  return [one.id_str, ...batch.ids_str];
}

module.exports = { httpIds };
