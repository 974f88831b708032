#!/usr/bin/env bash
# scripts/gpu-check.sh — the GPU checks on real hardware (docs/agent.md "GPUs",
# docs/containers.md "GPUs"): on a machine with an NVIDIA GPU and its driver, as root, it builds
# Paceline if needed, starts `paceline up` in a scratch directory, and checks
#   discovery   the agent offers every GPU nvidia-smi lists, with its model
#   bare        a task holding one GPU sees only it (`nvidia-smi -L` in the task: the device
#               cgroup fences the others) and opens none of the other GPUs' nodes
#   container   a container task holding one GPU has exactly its node in /dev (the host's CDI
#               spec; one is generated into the scratch directory with nvidia-ctk when the host
#               has none)
#   fractional  two tasks of gpu 0.5 share one device (the same CUDA_VISIBLE_DEVICES)
#   health      an unhealthy-device drill: not available yet (device health is not built)
# then prints a table, and exits 1 on any miss, 2 when the machine has no NVIDIA GPU.
#
# Usage: scripts/gpu-check.sh [BUILD_DIR]      (default build/release; built with make build)
# Record its output in bench/results/gpu-check-DAY.md with the machine's GPUs and driver.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
bin=$build/paceline

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no NVIDIA GPU and driver here (nvidia-smi -L fails): nothing to check" >&2
  exit 2
fi
[[ $(id -u) == 0 ]] || { echo "run as root (the agent fences devices with cgroups)" >&2; exit 1; }
[[ -x $bin ]] || make -C "$root" build
tmp=$(mktemp -d /tmp/pl-gpu-check-XXXXXX)
chmod 755 "$tmp"
source "$root/scripts/stop-lib.sh"
pid=""
cleanup() {
  stop_pid "$pid"
  [[ -n ${KEEP:-} ]] && echo "kept: $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"
pl() { "$bin" "$@"; }

# A CDI spec: the host's, or one generated here.
cdi_args=()
if ! grep -qs 'nvidia.com/gpu' /etc/cdi/* /var/run/cdi/*; then
  if command -v nvidia-ctk >/dev/null; then
    mkdir -p cdi
    nvidia-ctk cdi generate --output="$tmp/cdi/nvidia.yaml" >/dev/null 2>&1 || true
    cdi_args=(--cdi-dir "$tmp/cdi")
  fi
fi

pl up --data-dir data --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --name "gpu-check-$$" \
  "${cdi_args[@]}" \
  >up.log 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  pl host list -o json 2>/dev/null | grep -q '"connected": true' && break
  kill -0 "$pid" 2>/dev/null || { echo "paceline up exited:"; cat up.log; exit 1; }
  sleep 0.2
done

declare -A result detail
miss=0
check() {  # NAME OK? DETAIL (a missed check adds why its task failed, if it did)
  result[$1]=$([[ $2 == 0 ]] && echo ok || echo MISS)
  detail[$1]=$3
  if [[ $2 != 0 && -f task-$1.json ]]; then
    detail[$1]+="; $(grep -o '"message": "[^"]*"' "task-$1.json" | head -1 | cut -c13- | cut -c1-200)"
  fi
  [[ $2 == 0 ]] || miss=1
}
# Runs a one-task job in pool /gpu and waits for its end; prints its stdout.
run() {  # NAME TASK_YAML
  local id
  printf 'name: %s\ninstances: 1\ntask:\n%s\n' "$1" "$2" >"job-$1.yaml"
  id=$(pl job create -f "job-$1.yaml" --pool /gpu -o json |
    sed -nE 's/.*"job_id": *"?([0-9]+).*/\1/p' | head -1)
  for _ in $(seq 1 240); do
    pl job get "$id" -o json >state.json 2>/dev/null || true
    grep -qE '"state": "(SUCCEEDED|FAILED|KILLED)"' state.json && break
    sleep 0.5
  done
  grep -q '"state": "SUCCEEDED"' state.json || pl task get "$id/0" -o json >"task-$1.json" 2>&1 || true
  pl task logs "$id/0" 2>/dev/null || true
  pl task logs "$id/0" --stderr 2>/dev/null | sed 's/^/stderr: /' || true
}

gpus=$(nvidia-smi -L | grep -c '^GPU ')
printf 'description: gpu check\nresources:\n  gpu: {reservation: %s}\n' "$gpus" >pool.yaml
pl pool create /gpu -f pool.yaml >/dev/null

offered=$(pl host list -o json | grep -o '"gpu_milli": *"\?[0-9]*' | head -1 | grep -o '[0-9]*$')
check discovery "$([[ ${offered:-0} == $((gpus * 1000)) ]] && echo 0 || echo 1)" \
  "nvidia-smi: $gpus GPU(s) ($(nvidia-smi --query-gpu=name --format=csv,noheader | sort -u |
    paste -sd, -)); offered: ${offered:-0} milli-GPUs"

out=$(run bare '  command: "nvidia-smi -L; for n in /dev/nvidia[0-9]*; do cat $n >/dev/null 2>&1 && echo opened $n; done; true"
  resources: {cpu: 0.5, memory: 256Mi, gpu: 1}')
seen=$(grep -c '^GPU ' <<<"$out" || true)
check bare "$([[ $seen == 1 ]] && echo 0 || echo 1)" "nvidia-smi -L in the task: $seen GPU(s)"

if [[ -x $root/scripts/make-test-image.sh ]] && [[ -x /bin/busybox ]]; then
  "$root/scripts/make-test-image.sh" image >/dev/null
  pl image load image --work-dir data/agent --tag local/busybox:1 >/dev/null
  out=$(run container '  command: "/bin/busybox ls /dev"
  resources: {cpu: 0.5, memory: 128Mi, gpu: 1}
  container: {image: local/busybox:1, pull: never}')
  nodes=$(grep -cE '^nvidia[0-9]+$' <<<"$out" || true)
  check container "$([[ $nodes == 1 ]] && echo 0 || echo 1)" \
    "GPU nodes in the container's /dev: $nodes ($(grep -E '^nvidia' <<<"$out" | paste -sd, -))"
else
  check container 1 "no busybox-static to build the test image (apt-get install busybox-static)"
fi

half='  command: "echo CVD=$CUDA_VISIBLE_DEVICES; sleep 5"
  resources: {cpu: 0.2, memory: 64Mi, gpu: 0.5}'
run half-a "$half" >half-a.txt &
half_a=$!
b=$(run half-b "$half")
wait "$half_a"
a=$(cat half-a.txt)
a_dev=$(grep -o 'CVD=.*' <<<"$a" | head -1)
b_dev=$(grep -o 'CVD=.*' <<<"$b" | head -1)
check fractional "$([[ -n $a_dev && $a_dev == "$b_dev" ]] && echo 0 || echo 1)" \
  "two gpu 0.5 tasks: $a_dev and $b_dev"
result[health]="n/a"
detail[health]="device health (NVML) is not built yet"

echo
echo "| check | result | detail |"
echo "|---|---|---|"
for c in discovery bare container fractional health; do
  echo "| $c | ${result[$c]} | ${detail[$c]} |"
done
echo
echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)," \
  "Paceline $("$bin" --version)"
exit $miss
