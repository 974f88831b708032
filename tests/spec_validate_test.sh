#!/usr/bin/env bash
# End-to-end check of `paceline job validate` and `paceline pool validate` on the real binary.
# Usage: spec_validate_test.sh PACELINE_BINARY SPEC_DIR   (SPEC_DIR = tests/specs)
set -uo pipefail

BIN=${1:?usage: spec_validate_test.sh PACELINE_BINARY SPEC_DIR}
SPECS=${2:?usage: spec_validate_test.sh PACELINE_BINARY SPEC_DIR}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run EXPECTED_EXIT ARGS...: runs the binary, keeps stdout/stderr in $TMP/out, $TMP/err.
run() {
  local want=$1
  shift
  "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [[ $got -ne $want ]]; then
    fail "paceline $* exited $got, want $want; stderr: $(cat "$TMP/err")"
  fi
}
expect_out() { grep -qF -- "$1" "$TMP/out" || fail "stdout lacks '$1': $(cat "$TMP/out")"; }
expect_err() { grep -qF -- "$1" "$TMP/err" || fail "stderr lacks '$1': $(cat "$TMP/err")"; }
expect_empty() { [[ ! -s "$TMP/$1" ]] || fail "$1 should be empty: $(cat "$TMP/$1")"; }

# A valid job: the summary on stdout, nothing on stderr.
run 0 job validate -f "$SPECS/valid/job-nightly-etl.yaml"
expect_out "job nightly-etl: batch, 1000 instances, priority 10, per instance cpu=1 memory=2Gi disk=1Gi gpu=0.5"
expect_empty err

# A valid pool.
run 0 pool validate -f "$SPECS/valid/pool-ads-training.yaml"
expect_out "pool: elastic, reservation cpu=20 memory=64Gi disk=0 gpu=0, limit cpu=100"
expect_empty err

# JSON output.
run 0 -o json job validate -f "$SPECS/valid/job-web-service.yaml"
expect_out '"valid": true'
expect_out '"name": "web-frontend"'
expect_out '"instances": 12'
expect_out '"cpu": "0.5"'
run 0 pool validate --file "$SPECS/valid/pool-static.yaml" -o json
expect_out '"type": "static"'
expect_out '"controller_limit_percent": 12.5'

# An invalid job: every error with file:line:column on stderr, exit 1, nothing on stdout.
cat >"$TMP/bad-job.yaml" <<'YAML'
name: etl
instances: many
task:
  command: ./etl
  resources: {cpu: 1, memory: 2GB}
  comand: typo
YAML
run 1 job validate -f "$TMP/bad-job.yaml"
expect_err "$TMP/bad-job.yaml:2:12: instances: 'many' is not a whole number"
expect_err "$TMP/bad-job.yaml:5:31: task.resources.memory: unknown unit 'GB' in '2GB' (did you mean Gi or G?)"
expect_err "$TMP/bad-job.yaml:6:3: task.comand: unknown key 'comand' (did you mean 'command'?)"
expect_err "error: $TMP/bad-job.yaml: the job spec is invalid (3 problems)"
expect_empty out

# The same with -o json: the errors are also in a JSON object on stdout.
run 1 -o json job validate -f "$TMP/bad-job.yaml"
expect_out '"valid": false'
expect_out "unknown key 'comand'"

# An invalid pool from the catalogue.
run 1 pool validate -f "$SPECS/malformed/pool-reservation-above-limit.yaml"
expect_err "pool-reservation-above-limit.yaml:3:22: resources.cpu.reservation: reservation 200 exceeds the limit 100"

# A pool spec given to job validate fails on the unknown keys.
run 1 job validate -f "$SPECS/valid/pool-ads-training.yaml"
expect_err "unknown key 'resources'"

# A missing file and a missing flag.
run 1 job validate -f "$TMP/does-not-exist.yaml"
expect_err "error: cannot read job spec '$TMP/does-not-exist.yaml': no such file"
run 2 pool validate
expect_err "--file is required"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "spec validate: all checks passed"
