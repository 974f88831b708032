// Builds the web UI into OUT_DIR (default: dist/): app-HASH.js and app-HASH.css bundled and
// minified by esbuild from src/main.tsx, and index.html naming them. The master embeds the
// result (src/ui/). Usage: node build.mjs [OUT_DIR]
import * as esbuild from "esbuild";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, "dist"));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await esbuild.build({
  entryPoints: { app: join(here, "src/main.tsx") },
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2020", "chrome100", "firefox100", "safari15"],
  jsx: "automatic",
  jsxImportSource: "preact",
  entryNames: "[name]-[hash]",
  outdir: out,
  metafile: true,
  logLevel: "warning",
  legalComments: "none",
});

const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
const js = outputs.find((f) => f.endsWith(".js"));
const css = outputs.find((f) => f.endsWith(".css"));
if (!js || !css) throw new Error(`esbuild wrote ${outputs.join(", ")}: expected a .js and a .css`);
const page = readFileSync(join(here, "src/index.html"), "utf8")
  .replace("%APP_JS%", js)
  .replace("%APP_CSS%", css);
writeFileSync(join(out, "index.html"), page);
console.log(`web UI: ${outputs.join(", ")}, index.html -> ${out}`);
