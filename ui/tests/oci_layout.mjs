// A minimal OCI image layout (https://github.com/opencontainers/image-spec/blob/main/image-layout.md)
// for the web UI's tests: one gzip'd layer holding one file, its config and manifest, and an
// index naming it `ref`; what `paceline image load DIR` imports into an agent's image cache.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

const sha256 = (data) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

// Writes the layout under `dir` (made); returns the manifest's digest.
export function writeOciLayout(dir, ref = "1") {
  const files = join(dir, "rootfs");
  mkdirSync(join(files, "etc"), { recursive: true });
  writeFileSync(join(files, "etc", "hello"), "hello from a test image\n");
  const tarPath = join(dir, "layer.tar");
  execFileSync("tar", ["-C", files, "--owner=0", "--group=0", "-cf", tarPath, "etc"]);
  const tar = readFileSync(tarPath);
  const layer = gzipSync(tar);
  const blobs = join(dir, "layout", "blobs", "sha256");
  mkdirSync(blobs, { recursive: true });
  const put = (data) => {
    const digest = sha256(data);
    writeFileSync(join(blobs, digest.slice("sha256:".length)), data);
    return { digest, size: data.length };
  };
  const layerBlob = put(layer);
  const config = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: { Cmd: ["/bin/sh"] },
      rootfs: { type: "layers", diff_ids: [sha256(tar)] },
    }),
  );
  const configBlob = put(config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", ...configBlob },
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", ...layerBlob }],
    }),
  );
  const manifestBlob = put(manifest);
  const layout = join(dir, "layout");
  writeFileSync(join(layout, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  writeFileSync(
    join(layout, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          ...manifestBlob,
          annotations: { "org.opencontainers.image.ref.name": ref },
        },
      ],
    }),
  );
  return { layout, digest: manifestBlob.digest };
}
