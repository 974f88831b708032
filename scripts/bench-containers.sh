#!/usr/bin/env bash
# make bench-containers: the container benchmark (`paceline bench containers`, docs/benchmarks.md
# "Containers") with its recorded report, bench/results/containers-DATE.json (or $BENCH_OUT).
# Needs root (overlay mounts, crun, cgroups).
#
# Usage: scripts/bench-containers.sh BUILD_DIR [more flags for paceline bench containers]
#
# Builds two busybox images (scripts/make-test-image.sh): a small one for the warm and the
# throughput phases, and one with a $FILLER_MB MiB (default 100) random layer for the cold pull.
# When docker-registry, skopeo and openssl are installed (scripts/install-deps.sh), it starts
# Debian's docker-registry on 127.0.0.1 (a free port, TLS with a self-signed certificate made
# here), pushes the big image to it with skopeo, and the cold pull comes from there; otherwise
# from the OCI layout on disk. The registry is stopped by its PID at the end.
set -euo pipefail
build=${1:-build/release}
shift || true
out=${BENCH_OUT:-bench/results}
day=$(date -u +%Y-%m-%d)
bin=$build/paceline
[[ -x $bin ]] || { echo "no $bin: build first (make build)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "the container benchmark needs root" >&2; exit 1; }
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d)
chmod 0755 "$tmp"
registry_pid=""
cleanup() {
  if [[ -n $registry_pid ]]; then
    kill "$registry_pid" 2>/dev/null || true
    wait "$registry_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$here/make-test-image.sh" "$tmp/small"
"$here/make-test-image.sh" "$tmp/big" --filler-mb "${FILLER_MB:-100}"

accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Starts the registry on a free port; sets port and registry_pid.
start_registry() {
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/registry.key" -out "$tmp/registry.crt" \
    2>/dev/null
  mkdir -p "$tmp/certs.d" "$tmp/storage"
  cp "$tmp/registry.crt" "$tmp/certs.d/ca.crt"
  for attempt in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 10000))
    accepts "$port" && continue
    cat > "$tmp/registry.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $tmp/storage
http:
  addr: 127.0.0.1:$port
  secret: paceline-bench
  tls:
    certificate: $tmp/registry.crt
    key: $tmp/registry.key
EOF
    docker-registry serve "$tmp/registry.yml" > "$tmp/registry.log" 2>&1 &
    registry_pid=$!
    for _ in $(seq 300); do
      accepts "$port" && return 0
      kill -0 "$registry_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill "$registry_pid" 2>/dev/null || true
    wait "$registry_pid" 2>/dev/null || true
    registry_pid=""
    echo "registry on port $port did not start (attempt $attempt):" >&2
    cat "$tmp/registry.log" >&2
  done
  return 1
}

cold=(--cold-image-file "$tmp/big")
if command -v docker-registry > /dev/null && command -v skopeo > /dev/null &&
  command -v openssl > /dev/null && start_registry; then
  skopeo copy --quiet --dest-cert-dir "$tmp/certs.d" "oci:$tmp/big:latest" \
    "docker://127.0.0.1:$port/bench/big:1"
  cold=(--registry "127.0.0.1:$port" --registry-ca "$tmp/registry.crt" --cold-image bench/big:1)
  echo "cold pulls from the registry at 127.0.0.1:$port (pid $registry_pid)"
else
  echo "no registry (docker-registry, skopeo, openssl): the cold pull loads the OCI layout"
fi

"$bin" bench containers --image-file "$tmp/small" "${cold[@]}" \
  --report "$out/containers-$day.json" "$@"
echo "wrote $out/containers-$day.json"
