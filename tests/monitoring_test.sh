#!/usr/bin/env bash
# deploy/prometheus/ (docs/operations.md "Monitoring"): the scrape configuration as deployed
# (its files under a scratch directory) passes `promtool check config`, which also checks the
# rules file it loads and the masters' targets file; the rules pass `promtool check rules` and
# their unit tests `promtool test rules`; and scripts/check-monitoring.py finds no alert,
# recording rule or dashboard query that names a metric the master does not export, and no
# dashboard query that PromQL does not parse. promtool comes with Debian's prometheus
# (scripts/install-deps.sh).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
deploy="$repo/deploy/prometheus"
if ! command -v promtool >/dev/null 2>&1; then
  echo "promtool not found: install Debian's prometheus (scripts/install-deps.sh does)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# /etc/prometheus as docs/operations.md lays it out, under $tmp.
mkdir -p "$tmp/etc/paceline" "$tmp/etc/rules"
sed "s|/etc/prometheus/paceline/|$tmp/etc/paceline/|g" "$deploy/prometheus.yml" \
  > "$tmp/etc/prometheus.yml"
if grep -v '^ *#' "$tmp/etc/prometheus.yml" | grep -q '/etc/prometheus/'; then
  echo "prometheus.yml names a file outside /etc/prometheus/paceline/ besides its rules" >&2
  exit 1
fi
cp "$deploy/rules/paceline.rules.yml" "$tmp/etc/rules/"
cp "$deploy/targets/masters.yml" "$tmp/etc/paceline/masters.yml"
cp "$deploy/targets/agents.yml" "$tmp/etc/paceline/agents.yml"
printf '' > "$tmp/etc/paceline/prometheus.pem"
printf '' > "$tmp/etc/paceline/prometheus.key"
printf '' > "$tmp/etc/paceline/ca.pem"
promtool check config "$tmp/etc/prometheus.yml"

promtool check rules "$deploy/rules/paceline.rules.yml"
(cd "$deploy/rules" && promtool test rules paceline.rules.test.yml)

/usr/bin/python3 "$repo/scripts/check-monitoring.py" \
  --metrics-source "$repo/src/api/metrics.cc" \
  --metrics-source "$repo/src/agentd/agent_metrics.cc" \
  --rules "$deploy/rules/paceline.rules.yml" \
  --rule-tests "$deploy/rules/paceline.rules.test.yml" \
  --dashboard "$deploy/grafana/paceline.json" \
  --dashboard-rules-out "$tmp/dashboard.rules.yml"
promtool check rules "$tmp/dashboard.rules.yml"
echo "monitoring: ok"
