// The web UI on a large cluster: a real `paceline master` with 1,000 emulated hosts on real
// agent streams (`paceline bench fleet`) and 10,000 jobs created through the JSON gateway;
// then each page is loaded in Chromium (playwright-core) and the time from the start of the
// navigation until its content is drawn is measured with the Performance API, printed, and
// checked against 1 s. Every process is started here on free loopback ports and stopped by PID.
//
// Usage: node ui/tests/ui_load_test.mjs --paceline PATH [--chromium PATH] [--jobs N]
//        [--hosts N] [--report FILE]
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { start as startProcess, stopAll, tails, waitFor } from "./processes.mjs";

const { values: args } = parseArgs({
  options: {
    paceline: { type: "string" },
    chromium: { type: "string", default: "/usr/bin/chromium" },
    jobs: { type: "string", default: "10000" },
    hosts: { type: "string", default: "1000" },
    report: { type: "string" },
  },
});
assert.ok(args.paceline, "--paceline PATH is required");
const JOBS = Number(args.jobs);
const HOSTS = Number(args.hosts);
const BUDGET_MS = 1000;

const dir = mkdtempSync(join(tmpdir(), "pl-ui-load-"));
chmodSync(dir, 0o755);
let browser = null;
const start = (name, argv) => startProcess(name, args.paceline, argv);

async function main() {
  const data = join(dir, "data");
  start("master", [
    "master", "--data-dir", data, "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
    "--insecure-loopback", // the emulated hosts (bench fleet) speak plain text
  ]);
  const endpoints = join(data, "master.json");
  await waitFor("master.json", () => existsSync(endpoints), 60000);
  const { grpc, http } = JSON.parse(readFileSync(endpoints, "utf8"));
  const token = readFileSync(join(data, "token"), "utf8").trim();
  const api = async (service, method, body = {}) => {
    const res = await fetch(`http://${http}/api/v1/${service}/${method}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const j = await res.json();
    if (!res.ok) throw new Error(`${service}/${method}: ${JSON.stringify(j)}`);
    return j;
  };

  let t0 = Date.now();
  const fleet = start("fleet", [
    "--addr", grpc, "--token", token, "bench", "fleet", "--hosts", String(HOSTS),
    "--cpu", "64", "--memory", "256Gi",
  ]);
  await waitFor("the emulated hosts", () => fleet.log().includes("emulated hosts registered"), 120000);
  console.log(`${HOSTS} emulated hosts registered in ${Date.now() - t0} ms`);

  await api("PoolService", "CreatePool", {
    path: "/load",
    spec_yaml: "resources:\n  cpu: {reservation: 1000, share: 1}\n  memory: {reservation: 1Ti, share: 1}\n",
  });
  t0 = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < JOBS) {
      const i = next++;
      await api("JobService", "CreateJob", {
        pool: "/load",
        spec_yaml:
          `name: load-${i}\ninstances: ${1 + (i % 3)}\nlabels: {team: t${i % 20}}\n` +
          `task:\n  command: "sleep 3600"\n  resources: {cpu: 0.5, memory: 256Mi}\n`,
      });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  console.log(`${JOBS} jobs created in ${Date.now() - t0} ms`);
  await waitFor(
    "the tasks to run",
    async () => {
      const m = await (
        await fetch(`http://${http}/metrics`, { headers: { Authorization: `Bearer ${token}` } })
      ).text();
      const running = Number(/paceline_tasks\{state="RUNNING"\} (\d+)/.exec(m)?.[1] ?? 0);
      return running >= JOBS;
    },
    300000,
  );

  browser = await chromium.launch({
    executablePath: args.chromium,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.addInitScript((t) => sessionStorage.setItem("paceline.token", t), token);
  const page = await context.newPage();
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));

  const somejob = Math.floor(JOBS / 2);
  const pages = [
    ["overview", "/ui/", () => page.getByRole("list", { name: "tasks by state" }).getByText("RUNNING").waitFor()],
    ["pools", "/ui/pools", () => page.getByRole("rowheader", { name: "/load" }).waitFor()],
    ["jobs", "/ui/jobs", () => page.locator("tr[data-job]").nth(Math.min(50, JOBS) - 1).waitFor()],
    ["jobs, filtered", "/ui/jobs?label=team%3Dt7&state=RUNNING", () => page.locator("tr[data-job]").nth(Math.min(50, Math.floor(JOBS / 20)) - 1).waitFor()],
    ["a job", `/ui/jobs/${somejob}`, () => page.locator("tr[data-instance]").first().waitFor()],
    ["hosts", "/ui/hosts", () => page.locator("tr[data-host]").nth(Math.min(HOSTS, 100) - 1).waitFor()],
    // The master pages hosts by name: the last page starts after the last host of the one before.
    ["hosts, last page", `/ui/hosts?page=emulated-${String(Math.ceil(HOSTS / 100) * 100 - 101).padStart(5, "0")}`, () => page.locator("tr[data-host]").first().waitFor()],
    ["hosts, filtered", "/ui/hosts?name=emulated-000", () => page.locator("tr[data-host]").nth(Math.min(HOSTS, 10) - 1).waitFor()],
    ["a pool", "/ui/pools/load", () => page.locator(".chart[data-points]").waitFor()],
  ];
  const results = [];
  for (const [name, path, drawn] of pages) {
    const runs = [];
    for (let i = 0; i < 3; i++) {
      await page.goto(`http://${http}${path}`);
      await drawn();
      runs.push(await page.evaluate(() => performance.now()));
    }
    // Where the last load spent its time: the slowest requests it made.
    const slowest = await page.evaluate(() =>
      performance
        .getEntriesByType("resource")
        .map((e) => ({ name: e.name.replace(location.origin, ""), ms: Math.round(e.duration), at: Math.round(e.startTime) }))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 3),
    );
    runs.sort((a, b) => a - b);
    results.push({ page: name, path, ms: runs.map((v) => Math.round(v)), median_ms: Math.round(runs[1]), slowest_requests: slowest });
    console.log(`${name.padEnd(16)} ${String(Math.round(runs[1])).padStart(5)} ms median (${runs.map((v) => Math.round(v)).join(", ")}); slowest: ${slowest.map((r) => `${r.name.split("?")[0]} ${r.ms} ms at ${r.at}`).join(", ")}`);
  }
  assert.deepEqual(problems, [], "browser errors");
  if (args.report) {
    writeFileSync(
      args.report,
      JSON.stringify(
        {
          benchmark: "ui-load",
          jobs: JOBS,
          hosts: HOSTS,
          budget_ms: BUDGET_MS,
          pages: results,
          machine: { cpus: cpus().length, model: cpus()[0]?.model, memory_bytes: totalmem() },
        },
        null,
        2,
      ) + "\n",
    );
  }
  for (const r of results) {
    assert.ok(r.median_ms < BUDGET_MS, `${r.page} took ${r.median_ms} ms (budget ${BUDGET_MS} ms)`);
  }
}

let failed = false;
try {
  await main();
  console.log("web UI under load: every page within budget");
} catch (e) {
  failed = true;
  console.error(`\nFAILED: ${e.stack ?? e}`);
  console.error(tails(15));
} finally {
  if (browser) await browser.close().catch(() => {});
  await stopAll(dir);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
