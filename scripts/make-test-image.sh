#!/usr/bin/env bash
# Builds a small OCI image layout (image-spec "image-layout") from the host's static busybox,
# for benchmarks and manual tests of containers (docs/containers.md, docs/benchmarks.md).
#
# Usage: scripts/make-test-image.sh OUTDIR [--filler-mb N] [--tag TAG]
#
#   layer 1   /bin/busybox (a copy of the host's /bin/busybox: apt-get install busybox-static)
#             with the symlinks /bin/sh, true, echo, sleep; /etc/passwd and /etc/group with
#             root and nobody (65534); /tmp (1777)
#   layer 2   only with --filler-mb N: /filler/random.bin, N MiB of random bytes (they do not
#             compress, so the image is about N MiB to download: the cold-pull benchmark)
#   config    Env PATH=/bin, Cmd ["/bin/sh"], this machine's architecture
#
# OUTDIR/index.json names the image TAG (org.opencontainers.image.ref.name; default "latest"),
# so that `skopeo copy oci:OUTDIR:TAG docker://...` finds it. Load it into an agent's cache
# with `paceline image load OUTDIR --image-dir DIR --tag REGISTRY/REPO:TAG`.
#
# Only tar, gzip -n, sha256sum, stat and printf (and coreutils) are used: no Python. The layers
# are reproducible (sorted names, owner 0, mtime 0), except the random filler.
set -euo pipefail

usage() {
  echo "usage: $0 OUTDIR [--filler-mb N] [--tag TAG]" >&2
  exit 2
}
(($# >= 1)) || usage
out=$1
shift
filler_mb=0
tag=latest
while (($#)); do
  case $1 in
    --filler-mb) (($# >= 2)) || usage; filler_mb=$2; shift 2 ;;
    --tag) (($# >= 2)) || usage; tag=$2; shift 2 ;;
    *) usage ;;
  esac
done
[[ $filler_mb =~ ^[0-9]+$ ]] || { echo "--filler-mb: '$filler_mb' is not a number" >&2; exit 2; }
[[ -x /bin/busybox ]] || { echo "/bin/busybox is missing: apt-get install busybox-static" >&2; exit 1; }
case $(uname -m) in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  armv7l) arch=arm ;;
  *) arch=$(uname -m) ;;
esac

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out/blobs/sha256"

# A blob into OUTDIR/blobs/sha256; prints "sha256:HEX SIZE".
put_blob() {
  local file=$1 hex size
  hex=$(sha256sum "$file" | cut -d' ' -f1)
  size=$(stat -c %s "$file")
  cp "$file" "$out/blobs/sha256/$hex"
  printf 'sha256:%s %s\n' "$hex" "$size"
}

# A gzip layer of the tree ROOT; sets layer_digest, layer_size, diff_id.
make_layer() {
  local root=$1 name=$2
  (cd "$root" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --format=gnu \
    -cf "$stage/$name.tar" -- *)
  diff_id=sha256:$(sha256sum "$stage/$name.tar" | cut -d' ' -f1)
  gzip -n -1 -c "$stage/$name.tar" > "$stage/$name.tar.gz"
  rm -f "$stage/$name.tar"
  read -r layer_digest layer_size < <(put_blob "$stage/$name.tar.gz")
}

base=$stage/base
mkdir -p "$base/bin" "$base/etc" "$base/tmp"
cp /bin/busybox "$base/bin/busybox"
chmod 0755 "$base/bin/busybox"
for tool in sh true echo sleep; do ln -s busybox "$base/bin/$tool"; done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
  > "$base/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$base/etc/group"
chmod 0644 "$base/etc/passwd" "$base/etc/group"
chmod 1777 "$base/tmp"
make_layer "$base" base
diff_ids="\"$diff_id\""
layers=$(printf '{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"%s","size":%s}' \
  "$layer_digest" "$layer_size")

if ((filler_mb > 0)); then
  fill=$stage/filler
  mkdir -p "$fill/filler"
  head -c $((filler_mb * 1024 * 1024)) /dev/urandom > "$fill/filler/random.bin"
  make_layer "$fill" filler
  diff_ids="$diff_ids,\"$diff_id\""
  layers="$layers,$(printf '{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"%s","size":%s}' \
    "$layer_digest" "$layer_size")"
fi

printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/bin"],"Cmd":["/bin/sh"]},"rootfs":{"type":"layers","diff_ids":[%s]}}' \
  "$arch" "$diff_ids" > "$stage/config.json"
read -r config_digest config_size < <(put_blob "$stage/config.json")

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[%s]}' \
  "$config_digest" "$config_size" "$layers" > "$stage/manifest.json"
read -r manifest_digest manifest_size < <(put_blob "$stage/manifest.json")

printf '{"imageLayoutVersion":"1.0.0"}' > "$out/oci-layout"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
  "$manifest_digest" "$manifest_size" "$tag" > "$out/index.json"
echo "wrote $out: manifest $manifest_digest ($(du -sh "$out/blobs" | cut -f1) of blobs), tag $tag"
