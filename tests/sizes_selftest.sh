#!/usr/bin/env bash
# The size check must fail, naming the class and the rule, when a class of a capped folder has
# more entry points than the cap once its friends' public member functions are counted, and when
# its member function definitions, spread over several .cc files, are longer than the cap
# together though each file is short. Runs scripts/check-sizes.py on a small tree made for the
# purpose.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/core" "$tmp/src/tools"
# Core: 3 public member functions, and a friend with 3 more: 6 entry points.
cat > "$tmp/src/core/core.h" <<'H'
class Core {
 public:
  void Aa();
  void Bb();
  int Cc() const;
 private:
  friend class CoreView;
  int x_ = 0;
};
class CoreView {
 public:
  void Dd();
  void Ee();
  void Ff();
};
// Small: 2 entry points, no friend.
class Small {
 public:
  void Gg();
  void Hh();
};
H
# Core's definitions: 3 + 4 lines in core.cc, 5 more in core_more.cc: 12.
cat > "$tmp/src/core/core.cc" <<'CC'
#include "core/core.h"
void Core::Aa() {
  x_ = 1;
}
void Core::Bb() {
  x_ = 2;
  Aa();
}
void Small::Gg() {}
CC
cat > "$tmp/src/core/core_more.cc" <<'CC'
#include "core/core.h"
int Core::Cc() const {
  int y = x_;
  Core::Aa();
  return y;
}
CC
# Outside the capped folders: not counted (6 public member functions).
printf 'class Wide {\n public:\n  void Aa();\n  void Bb();\n  void Cc();\n  void Dd();\n  void Ee();\n  void Ff();\n};\n' \
  > "$tmp/src/tools/wide.h"
check() {
  set +e
  out=$(python3 "$repo/scripts/check-sizes.py" --src "$tmp/src" --classes-in core "$@")
  code=$?
  set -e
  echo "$out"
}
check --max-public 5 --max-class-lines 11
[[ $code -eq 1 ]] || { echo "expected exit 1, got $code"; exit 1; }
grep -q 'src/core/core.h: class Core has 6 entry points with its friends CoreView (at most 5)' <<<"$out"
grep -q 'src/core/core.h: class Core has 12 lines of member function definitions (at most 11): src/core/core.cc 7, src/core/core_more.cc 5' <<<"$out"
! grep -q 'Small\|Wide\|CoreView' <<<"$(grep -v 'class Core has 6' <<<"$out")"
check --max-public 6 --max-class-lines 12
[[ $code -eq 0 ]] || { echo "expected exit 0, got $code"; exit 1; }
echo "the size check counts a class's friends and its definitions in every file"
