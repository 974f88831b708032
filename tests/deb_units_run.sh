#!/usr/bin/env bash
# tests/deb_units_run.sh ROOT WORK — the packaged units' command lines, run for real. Started by
# deb_package_test.sh in mount, network and PID namespaces of its own, as root: ROOT is the
# unpacked package, WORK a scratch directory. Here the package is "installed" by overlays seen
# only in this mount namespace (ROOT/usr/bin and ROOT/etc over /usr/bin and /etc, /etc
# writable into a tmpfs, an empty tmpfs on /var/lib for the units' state directories); the
# master's ports (those of master.yaml) are this network namespace's alone, and whatever is
# left when this script ends dies with its PID namespace.
#
# Checks, each against the units' ExecStart lines run verbatim and the packaged config files:
#   - the master without its config file, and with a typo in it, exits non-zero, says which
#     file (and line:column for the typo), and listens on nothing;
#   - the master (as an unprivileged user, as its unit runs it) and an agent (root), set up as
#     docs/operations.md says, run a job to success.
set -euo pipefail
root=$1 work=$2
mkdir -p "$work"
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do [[ -f $f ]] && { echo "--- $f"; tail -20 "$f"; } >&2; done
  exit 1
}

ip link set lo up
mount -t overlay overlay -o "lowerdir=$root/usr/bin:/usr/bin" /usr/bin
mkdir -p "$work/etc-rw"
mount -t tmpfs tmpfs "$work/etc-rw"
mkdir -p "$work/etc-rw/upper" "$work/etc-rw/work"
mount -t overlay overlay \
  -o "lowerdir=$root/etc:/etc,upperdir=$work/etc-rw/upper,workdir=$work/etc-rw/work" /etc
mount -t tmpfs tmpfs /var/lib

exec_of() { sed -n 's/^ExecStart=//p' "$root/lib/systemd/system/$1"; }
master_cmd=$(exec_of paceline-master.service)
agent_cmd=$(exec_of paceline-agent.service)
[[ $master_cmd == "/usr/bin/paceline master --config /etc/paceline/master.yaml" ]] ||
  fail "unexpected ExecStart of the master: $master_cmd"
# The master's unit: User=paceline, StateDirectory=paceline (mode 0750), UMask=0027. The test
# runs it as nobody, the package's user not being made outside dpkg.
mkdir -m 0750 /var/lib/paceline
chown nobody:nogroup /var/lib/paceline
as_master() { (umask 0027 && exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
listening() { ss -Hltn | grep -q .; }

# A unit started without its config: a clear error, nothing started.
mv /etc/paceline/master.yaml /etc/paceline/master.yaml.away
if as_master $master_cmd > "$work/noconfig.log" 2>&1; then fail "the master started without its config"; fi
grep -q '/etc/paceline/master.yaml' "$work/noconfig.log" || fail "no word of the missing file"
listening && fail "something listens after a failed start"
mv /etc/paceline/master.yaml.away /etc/paceline/master.yaml

# A typo: line:column, nothing started, nothing written.
cp /etc/paceline/master.yaml "$work/master.yaml.good"
echo "http-lisen: 127.0.0.1:1" >> /etc/paceline/master.yaml
if as_master $master_cmd > "$work/typo.log" 2>&1; then fail "the master started with a typo"; fi
line=$(wc -l < /etc/paceline/master.yaml)
grep -q "/etc/paceline/master.yaml:$line:1" "$work/typo.log" || fail "no line:column for the typo"
listening && fail "something listens after a refused config"
[[ -z $(ls -A /var/lib/paceline) ]] || fail "a refused config wrote into the data dir"
cp "$work/master.yaml.good" /etc/paceline/master.yaml

# The master, as its unit starts it.
as_master $master_cmd > "$work/master.log" 2>&1 &
master_pid=$!
data=/var/lib/paceline
for _ in $(seq 1 300); do
  [[ -s $data/token && -s $data/agent-token && -s $data/tls/ca.pem ]] && ss -Hltn | grep -q ':5390 ' &&
    break
  kill -0 $master_pid 2> /dev/null || fail "the master exited"
  sleep 0.1
done
cli() { paceline --addr 127.0.0.1:5390 --ca $data/tls/ca.pem --token "$(cat $data/token)" "$@"; }
cli info > "$work/info.log" 2>&1 || fail "the master does not answer"

# An agent, set up as docs/operations.md says: a certificate made on the master's machine, and
# agent.yaml told where the master, the token and the TLS files are.
host="deb-$(basename "$(dirname "$work")" | tr -c 'a-zA-Z0-9\n' '-')"
mkdir -p /etc/paceline/tls
paceline cert agent "$host" --tls-dir $data/tls --out /etc/paceline/tls > /dev/null
cat >> /etc/paceline/agent.yaml <<YAML
master: 127.0.0.1:5390
token-file: $data/agent-token
ca: $data/tls/ca.pem
cert: /etc/paceline/tls/$host.pem
key: /etc/paceline/tls/$host.key
name: $host
cpu: "1"
memory: 1Gi
YAML
mkdir -p /var/lib/paceline-agent  # StateDirectory=paceline-agent
$agent_cmd > "$work/agent.log" 2>&1 &
agent_pid=$!
for _ in $(seq 1 300); do
  cli host list 2> /dev/null | grep -q "$host.*UP" && break
  kill -0 $agent_pid 2> /dev/null || fail "the agent exited"
  sleep 0.1
done
cli host list | grep -q "$host.*UP" || fail "the agent did not register"

printf 'resources:\n  cpu: {reservation: 1}\n  memory: {reservation: 512Mi}\n' > "$work/pool.yaml"
cli pool create /deb -f "$work/pool.yaml" > /dev/null || fail "pool create"
printf 'name: packaged\ntype: batch\ninstances: 1\ntask:\n  command: "echo hello from the package"\n  resources: {cpu: 0.1, memory: 32Mi}\n' \
  > "$work/job.yaml"
job=$(cli job create -f "$work/job.yaml" --pool /deb -o json | sed -n 's/.*"job_id": *"\{0,1\}\([0-9]*\).*/\1/p')
[[ -n $job ]] || fail "job create"
cli job wait "$job" --timeout 60s > "$work/wait.log" 2>&1 || fail "the job did not succeed"
cli task logs "$job/0" 2> /dev/null | grep -q "hello from the package" || fail "no output"

kill -TERM $agent_pid $master_pid
wait $agent_pid $master_pid || true
echo "units ran job $job on $host"
