#!/usr/bin/env bash
# scripts/check-monitoring.py must fail, naming the file and the name, when an alert, a
# recording rule or a dashboard panel names a metric neither the master nor the agent exports (a
# typo, a histogram's _bucket of a summary, a recording rule nobody defines), when an alert lacks
# `for:` or an annotation, and when an alert has no test where it fires or none where it does
# not; and pass on deploy/prometheus/ as it is. Runs it on copies of deploy/prometheus/ changed
# one way each.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
deploy="$repo/deploy/prometheus"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# check NAME EXPECTED_MESSAGE: runs the checker on $tmp/{rules,tests}.yml and dashboard.json.
check() {
  local name=$1 expected=$2 out rc
  set +e
  out=$(/usr/bin/python3 "$repo/scripts/check-monitoring.py" \
    --metrics-source "$repo/src/api/metrics.cc" \
    --metrics-source "$repo/src/agentd/agent_metrics.cc" --rules "$tmp/rules.yml" \
    --rule-tests "$tmp/tests.yml" --dashboard "$tmp/dashboard.json" 2>&1)
  rc=$?
  set -e
  if [[ -z $expected ]]; then
    if ((rc != 0)); then
      echo "FAIL $name: the checker refused deploy/prometheus/ as it is:"$'\n'"$out"
      failures=$((failures + 1))
    fi
  elif ((rc == 0)) || [[ $out != *"$expected"* ]]; then
    echo "FAIL $name: expected exit 1 and '$expected', got exit $rc:"$'\n'"$out"
    failures=$((failures + 1))
  else
    echo "ok   $name: $(grep -F -- "$expected" <<<"$out" | head -1)"
  fi
}
reset() {
  cp "$deploy/rules/paceline.rules.yml" "$tmp/rules.yml"
  cp "$deploy/rules/paceline.rules.test.yml" "$tmp/tests.yml"
  cp "$deploy/grafana/paceline.json" "$tmp/dashboard.json"
}

reset
check "as it is" ""

reset
sed -i 's/expr: paceline_master_replication_lag_seconds > 30/expr: paceline_master_replication_lag > 30/' \
  "$tmp/rules.yml"
check "alert with a typo" "rules.yml:"
check "alert with a typo names it" \
  "alert PacelineReplicationLag names paceline_master_replication_lag, a metric that neither the master nor the agent exports"

reset
sed -i 's/expr: rate(paceline_placements_total\[5m\])/expr: rate(paceline_placed_total[5m])/' \
  "$tmp/rules.yml"
check "recording rule with a metric nobody exports" \
  "recording rule paceline:placements:rate5m names paceline_placed_total"

reset
sed -i 's/paceline_pool_queued_gangs{/paceline_pool_queued_jobs{/' "$tmp/dashboard.json"
check "dashboard panel with a metric nobody exports" \
  'panel "Queued gangs" names paceline_pool_queued_jobs, a metric that neither the master nor the agent exports'

reset
sed -i 's/paceline_scheduling_cycle_seconds_max{/paceline_scheduling_cycle_seconds_bucket{/' \
  "$tmp/dashboard.json"
check "a histogram's series of a summary" "names paceline_scheduling_cycle_seconds_bucket"

reset
sed -i 's/paceline:placements:rate5m{/paceline:placements:rate1m{/' "$tmp/dashboard.json"
check "dashboard panel with an undefined recording rule" \
  "names paceline:placements:rate1m, a recording rule that the rules files do not define"

reset
/usr/bin/python3 - "$tmp/rules.yml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("        expr: up{job=\"paceline-master\"} == 0\n        for: 2m\n",
              "        expr: up{job=\"paceline-master\"} == 0\n", 1)
s = s.replace("summary: \"Host {{ $labels.host }} has no agent connected\"", "", 1)
open(p, "w").write(s)
PY
check "alert without for" "alert PacelineMasterDown has no \`for:\`"
check "alert without summary" "alert PacelineHostLost has no \`summary\` annotation"

reset
/usr/bin/python3 - "$tmp/tests.yml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("      - eval_time: 4m\n        alertname: PacelineReplicationLag\n", "", 1)
s = s.replace("        alertname: PacelineHostDiskNearlyFull\n        exp_alerts:",
              "        alertname: PacelineHostDiskNearlyFull\n        exp_alerts_gone:", 1)
open(p, "w").write(s)
PY
check "alert never tested quiet" "alert PacelineReplicationLag has no test in"
check "alert never tested firing" "alert PacelineHostDiskNearlyFull has no test in"

if ((failures > 0)); then
  echo "$failures case(s) failed"
  exit 1
fi
echo "monitoring_selftest: ok"
