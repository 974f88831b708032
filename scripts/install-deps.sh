#!/usr/bin/env bash
# Installs the Debian 12 packages Paceline needs to build, test and run.
# Idempotent: installs only what is missing; does nothing when everything is present.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build g++ clang clang-format libclang-rt-14-dev pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libsqlite3-dev libyaml-cpp-dev libyaml-dev libcli11-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev libcpp-httplib-dev libboost-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # The binary's allocator (src/main/CMakeLists.txt).
  libjemalloc-dev
  # make bench-flame: perf samples the master under load.
  linux-perf
  curl procps gnuplot-nox ccache
  postgresql-15 libpq-dev
  # PostgreSQL replicated for the highly available tests (scripts/patroni-up.sh): Patroni over
  # an etcd cluster.
  patroni etcd-server
  # db_failover_e2e_test cuts a master off from the database with an iptables rule on loopback.
  iptables
  nodejs chromium fonts-dejavu-core
  # The Python client (clients/python): installed with pip into a venv that sees these, offline.
  python3-venv python3-pip python3-grpcio python3-protobuf python3-yaml mypy
  # Containers (docs/containers.md): images pulled with libcurl, layers read with libarchive,
  # run by crun; the tests push a busybox-static image to Debian's registry (htpasswd from
  # apache2-utils for its basic auth); the container benchmark pushes its image with skopeo.
  libcurl4-openssl-dev libarchive-dev crun docker-registry busybox-static apache2-utils skopeo
  # Real frameworks across hosts (docs/frameworks.md): network namespaces on a bridge for the
  # multi-host test bed, PyTorch (DDP over gloo), Dask, OpenMPI with mpi4py.
  iproute2 python3-torch python3-numpy python3-distributed python3-dask openmpi-bin
  python3-mpi4py
  # Services found by name (docs/services.md): DNS messages with ldns; the load balancers of
  # examples/ (HAProxy in haproxy_e2e_test, nginx), the load (wrk), dig, and dnsperf for the
  # DNS benchmark; dnspython for the readiness-to-DNS latency script.
  libldns-dev haproxy nginx-light wrk bind9-dnsutils dnsperf python3-dnspython
  # Cron jobs' time zones (docs/specs.md "Cron jobs"): absl::LoadTimeZone reads
  # /usr/share/zoneinfo.
  tzdata
  # Monitoring (docs/operations.md "Monitoring"): promtool, from Debian's prometheus, checks
  # deploy/prometheus/ and runs its alerts' unit tests.
  prometheus
  # The Debian package (docs/operations.md "Install on Debian"): `make deb` builds it with CPack
  # (dpkg-shlibdeps, from dpkg-dev, finds its dependencies); its test checks it with lintian.
  dpkg-dev lintian
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# The web UI's build and browser tests (ui/): npm comes with some Node.js packages and is a
# package of its own in Debian's.
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "installing: ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
