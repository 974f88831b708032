#!/usr/bin/env bash
# scripts/gen-reference.sh PACELINE CHANGELOG OUT — what the Debian package ships that is made
# from the binary (cmake/packaging.cmake): OUT/man1/*.1.gz (`paceline man`), OUT/completions/
# paceline (`paceline completion bash`) and OUT/changelog.gz, gzip'd without timestamps.
set -euo pipefail
bin=$1 changelog=$2 out=$3
rm -rf "$out"
mkdir -p "$out/man1" "$out/completions"
"$bin" man "$out/man1"
gzip -9n "$out"/man1/*.1
"$bin" completion bash > "$out/completions/paceline"
gzip -9nc "$changelog" > "$out/changelog.gz"
touch "$out/stamp"
