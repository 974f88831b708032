#!/usr/bin/env bash
# Fails (and lists the files) when a checked-in C++ file is not clang-formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=()
while IFS= read -r f; do
  [[ -f $f ]] || continue
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done < <(git ls-files '*.h' '*.cc')
if ((${#bad[@]})); then
  echo "not clang-formatted (run 'make format'):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "all C++ files are clang-formatted"
