#!/usr/bin/env bash
# tests/deb_package_test.sh BUILD_DIR — the Debian package of `make deb`, checked as an operator
# meets it (docs/operations.md, "Install on Debian"):
#   1. built by CPack from BUILD_DIR's install rules into a temporary directory;
#   2. its contents (dpkg-deb -c) and control fields (-f): the binary, both units, both conffiles,
#      the man pages, the completion, the docs; dependencies from the shared libraries;
#   3. lintian: no error and no warning (overrides only in deploy/debian/lintian-overrides);
#   4. unpacked into a scratch root (dpkg -x); its units pass `systemd-analyze verify` with
#      nothing to say, the packaged binary and man pages standing in for the installed ones;
#   5. tests/deb_units_run.sh, in a mount, network and PID namespace of its own, runs the master
#      and an agent with exactly the units' ExecStart lines and the packaged config files.
# Needs root (namespaces, overlay mounts), cpack, dpkg-deb, lintian and systemd-analyze.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/paceline-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. Build.
(cd "$build" && cpack -G DEB -B "$tmp/out" > "$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log"; fail "cpack"; }
deb=$(ls "$tmp"/out/paceline_*_amd64.deb)

# 2. Contents and control fields.
dpkg-deb -c "$deb" | awk '{print $6}' > "$tmp/files"
for f in ./usr/bin/paceline ./usr/bin/paceline-task-wrapper ./lib/systemd/system/paceline-master.service \
  ./lib/systemd/system/paceline-agent.service ./etc/paceline/master.yaml \
  ./etc/paceline/agent.yaml ./usr/share/man/man1/paceline.1.gz \
  ./usr/share/man/man1/paceline-master.1.gz ./usr/share/man/man1/paceline-agent.1.gz \
  ./usr/share/man/man1/paceline-job.1.gz ./usr/share/bash-completion/completions/paceline \
  ./usr/share/doc/paceline/copyright ./usr/share/doc/paceline/changelog.gz; do
  grep -qxF "$f" "$tmp/files" || fail "the package lacks $f"
done
[[ $(dpkg-deb -f "$deb" Package) == paceline ]] || fail "Package"
dpkg-deb -f "$deb" Depends | grep -q 'libgrpc++' || fail "Depends lacks the gRPC library"
dpkg-deb -f "$deb" Depends | grep -q 'adduser' || fail "Depends lacks adduser"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles > "$tmp/conffiles"
diff <(sort "$tmp/conffiles") <(printf '/etc/paceline/agent.yaml\n/etc/paceline/master.yaml\n') ||
  fail "conffiles"

# The completion is bash that loads.
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/bash-completion/completions/paceline |
  bash -c 'source /dev/stdin && complete -p paceline' > /dev/null || fail "the completion"

# 3. lintian (its "running with root privileges" notice is not a finding).
lintian --fail-on error,warning --tag-display-limit 0 "$deb" > "$tmp/lintian.log" 2>&1 ||
  { cat "$tmp/lintian.log"; fail "lintian"; }
if grep -E '^[EW]:' "$tmp/lintian.log"; then fail "lintian"; fi

# 4. Unpack; systemd-analyze verify the units with the packaged binary and man pages in place.
root=$tmp/root
dpkg -x "$deb" "$root"
unshare --mount --fork bash -c "
  set -e
  mount -t overlay overlay -o lowerdir=$root/usr/bin:/usr/bin /usr/bin
  mount -t overlay overlay -o lowerdir=$root/usr/share/man/man1:/usr/share/man/man1 \
    /usr/share/man/man1
  systemd-analyze verify $root/lib/systemd/system/paceline-master.service \
    $root/lib/systemd/system/paceline-agent.service" > "$tmp/verify.log" 2>&1 ||
  { cat "$tmp/verify.log"; fail "systemd-analyze verify"; }
[[ ! -s $tmp/verify.log ]] || { cat "$tmp/verify.log"; fail "systemd-analyze verify warned"; }

# 5. Run the units' command lines.
unshare --mount --net --pid --mount-proc --fork "$src/tests/deb_units_run.sh" "$root" "$tmp/run" ||
  fail "the packaged units did not run a task"
echo "deb package: ok ($(basename "$deb"))"
