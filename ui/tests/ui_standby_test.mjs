// The web UI served by a standby (docs/operations.md "Reads on standbys"), in a real Chromium
// (Debian's, driven by playwright-core): scripts/ha-up.sh starts PostgreSQL, two masters and
// an agent on free loopback ports; a job is created through the leader. On the standby's UI:
// log in; the overview says this master is a standby, with its copy's age and the leader, and
// shows no error; the jobs list and the job's page show the job and its running tasks (from the
// standby's copy of the store); killing it from there is refused, naming the leader, and the
// job keeps running. The only console errors allowed are the refusals of calls a standby does
// not answer (503). Everything started is stopped by PID.
//
// Usage: node ui/tests/ui_standby_test.mjs --paceline PATH [--chromium PATH]
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { start, stopAll, tails, waitFor } from "./processes.mjs";

const { values: args } = parseArgs({
  options: {
    paceline: { type: "string" },
    chromium: { type: "string", default: "/usr/bin/chromium" },
  },
});
assert.ok(args.paceline, "--paceline PATH is required");
const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dir = mkdtempSync(join(tmpdir(), "pl-ui-standby-"));
chmodSync(dir, 0o755); // PostgreSQL and the tasks run as their own users
const data = join(dir, "ha");
let browser = null;
let failed = false;
let cleanup = null; // kills the job, so that its tasks do not outlive the agent

try {
  const ha = start("ha-up", "bash", [join(repo, "scripts/ha-up.sh")], {
    DATA: data,
    MASTERS: "2",
    PACELINE: args.paceline,
  });
  await waitFor("the HA cluster", () => ha.log().includes("Ctrl-C stops everything"), 120000);
  const grpc = [...ha.log().matchAll(/^master \d+: pid \d+, gRPC ([^,]+),/gm)].map((m) => m[1]);
  assert.equal(grpc.length, 2, ha.log());
  const token = readFileSync(join(data, "token"), "utf8").trim();
  const ca = join(data, "tls", "ca.pem");
  const cli = (addr, ...argv) =>
    execFileSync(args.paceline, ["--addr", addr, "--ca", ca, "--token", token, ...argv], {
      encoding: "utf8",
    });
  const roles = grpc.map((a) => JSON.parse(cli(a, "info", "-o", "json")).role);
  const leader = roles.indexOf("leader");
  const standby = roles.indexOf("standby");
  assert.ok(leader >= 0 && standby >= 0, `roles: ${roles}`);
  const http = JSON.parse(readFileSync(join(data, `master${standby}`, "master.json"), "utf8")).http;
  const base = `https://${http}/ui`;

  writeFileSync(join(dir, "pool.yaml"), "resources:\n  cpu: {reservation: 1, limit: 2}\n");
  cli(grpc[leader], "pool", "create", "/web", "-f", join(dir, "pool.yaml"));
  writeFileSync(
    join(dir, "job.yaml"),
    "name: followed\ninstances: 2\ntask:\n  command: 'sleep 600'\n  resources: {cpu: 0.1, memory: 16Mi}\n",
  );
  const jobId = Number(cli(grpc[leader], "job", "create", "-f", join(dir, "job.yaml"), "--pool", "/web").trim());
  cleanup = () => {
    cli(grpc[leader], "job", "kill", String(jobId));
    try {
      cli(grpc[leader], "job", "wait", String(jobId), "--timeout", "30s");
    } catch {
      // a killed job's wait exits non-zero
    }
  };
  await waitFor("the job running", () => {
    const j = JSON.parse(cli(grpc[leader], "job", "get", String(jobId), "-o", "json"));
    return (j.job.task_counts?.RUNNING ?? 0) === 2;
  });

  browser = await chromium.launch({
    executablePath: args.chromium,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  // The masters' certificates are signed by the cluster's own CA.
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const problems = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !/status of 503/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  const step = async (name, f) => {
    process.stdout.write(`- ${name} ... `);
    await f();
    assert.deepEqual(problems, [], `browser errors during "${name}"`);
    console.log("ok");
  };

  await step("log in to the standby; the overview says it is one, and names the leader", async () => {
    await page.goto(`${base}/`);
    await page.getByLabel("API token").fill(token);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const note = page.getByTestId("standby-note");
    await note.waitFor();
    assert.match(await note.innerText(), /standby: its jobs and tasks come from its copy of the store, \d+ ms old/);
    assert.match(await note.innerText(), new RegExp(grpc[leader].replaceAll(".", "\\.")));
    assert.equal(await page.getByRole("alert").count(), 0, "an error shows on the standby's overview");
  });

  await step("the jobs list and the job's page show the job and its running tasks", async () => {
    await page.getByRole("navigation", { name: "main" }).getByRole("link", { name: "Jobs" }).click();
    await page.getByRole("link", { name: "followed" }).waitFor();
    await page.goto(`${base}/jobs/${jobId}`);
    await page.getByRole("heading", { name: new RegExp(`Job ${jobId}: followed`) }).waitFor();
    await waitFor("both tasks RUNNING on the standby's page", async () =>
      (await page.locator("tr[data-instance]").allInnerTexts()).filter((t) => t.includes("RUNNING")).length === 2,
    );
  });

  await step("a kill from the standby's page is refused, naming the leader", async () => {
    await page.getByRole("button", { name: "Kill", exact: true }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Kill" }).click();
    await page.getByRole("alert").filter({ hasText: `leader: ${grpc[leader]}` }).waitFor();
    const j = JSON.parse(cli(grpc[leader], "job", "get", String(jobId), "-o", "json"));
    assert.equal(j.job.task_counts?.RUNNING ?? 0, 2, "the job was killed through a standby");
  });
} catch (e) {
  failed = true;
  console.error(e);
  console.error(tails());
} finally {
  if (cleanup) {
    try {
      cleanup();
    } catch (e) {
      console.error(`cleaning up: ${e.message}`);
    }
  }
  if (browser) await browser.close();
  await stopAll(dir);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
