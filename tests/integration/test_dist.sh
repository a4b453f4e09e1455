#!/usr/bin/env bash
# What dist/ ships for monitoring: the Prometheus alert rules pass `promtool check
# rules` and their unit tests (`promtool test rules`: each alert fires on its series
# and stays quiet otherwise), the Grafana dashboard is valid JSON, and every metric
# the rules and the dashboard name is one a live idserver's /metrics exposes.
. "$(dirname "$0")/lib.sh"

D=$ROOT/dist
out=$(promtool check rules "$D/prometheus/idgen-alerts.yml" 2>&1) || fail "promtool check rules: $out"
out=$(cd "$D/prometheus" && promtool test rules idgen-alerts.test.yml 2>&1) || fail "promtool test rules: $out"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["panels"], "no panel"' \
	"$D/grafana/idgen-dashboard.json" || fail "the dashboard is not valid JSON with panels"
log "alert rules checked and unit-tested; dashboard JSON valid"

pair_up
HP=$((SVC_PORT + 1))
idserver_start svc "$SVC_PORT" --http_port "$HP"
curl -sf "http://127.0.0.1:$HP/metrics" >"$T_DIR/metrics.txt" || fail "/metrics"
python3 - "$T_DIR/metrics.txt" "$D/prometheus/idgen-alerts.yml" "$D/grafana/idgen-dashboard.json" <<'PY' ||
import re, sys
have = set()
for line in open(sys.argv[1]):
    m = re.match(r"# TYPE (\S+) (\S+)", line)
    if m:
        have.add(m.group(1))
        if m.group(2) == "histogram":
            have.update(m.group(1) + s for s in ("_bucket", "_sum", "_count"))
missing = {}
for path in sys.argv[2:]:
    for name in re.findall(r"\bidgen_[a-z0-9_]+", open(path).read()):
        if name not in have:
            missing.setdefault(name, path)
if missing:
    sys.exit("not in /metrics: " + ", ".join("%s (%s)" % kv for kv in sorted(missing.items())))
print(len(have))
PY
	fail "a metric the rules or the dashboard name is not exposed"
log "every metric the rules and the dashboard name is exposed by /metrics"
log ok
