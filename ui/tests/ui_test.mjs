// The web UI in a real Chromium (Debian's, driven by playwright-core) against a real
// `paceline up` on free loopback ports, started and stopped (by PID) here:
//   log in with a wrong token (refused, nothing changes), then the right one; create a pool
//   and a job from YAML; see the job reach SUCCEEDED without reloading; a job of roles in a
//   gang shows its roles, each instance's role and, after a gang restart, its attempt and the
//   restart's reason in the events; a job with a typo shows its line and column and creates
//   nothing; a job that cannot fit says why it waits, and its task's page that it has no run
//   yet (asking for no logs); a task's
//   logs are followed while it prints; a host shows its address, is drained (after a
//   confirmation) and changes state, then brought up; emulated GPU hosts (`paceline bench
//   fleet`) show their devices and the tasks sharing them; an instance is killed from its
//   page; a service's rolling update
//   shows its progress and is paused, resumed and aborted; a service's endpoints show on its
//   page and follow an instance killed; the master is killed under an open
//   page; the overview's and a pool's charts have the master's history; the jobs list filters
//   by type; the keyboard alone opens a job and a confirmation; a viewer is offered no action
//   (and a submitter only its own jobs'); the audit log is filtered by user, refusals, verb
//   and pool; tokens are listed without secrets and one is revoked; a job retired to the
//   archive is found from its old page and in the history; an image loaded into the agent's
//   cache shows on its host; on a phone's screen no page
//   is wider than the screen. Any console error or page error fails the test, except the
//   refusals a step expects. With --screenshots DIR, each page is saved as DIR/NAME.png.
//
// Usage: node ui/tests/ui_test.mjs --paceline PATH [--chromium PATH] [--screenshots DIR]
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { execFileSync } from "node:child_process";
import { writeOciLayout } from "./oci_layout.mjs";
import { start, stopAll, tails, waitFor } from "./processes.mjs";

const { values: args } = parseArgs({
  options: {
    paceline: { type: "string" },
    chromium: { type: "string", default: "/usr/bin/chromium" },
    screenshots: { type: "string" },
  },
});
assert.ok(args.paceline, "--paceline PATH is required");

const dir = mkdtempSync(join(tmpdir(), "pl-ui-"));
chmodSync(dir, 0o755); // the local agent runs tasks as an unprivileged user
let browser = null;
let failed = false;

// Free loopback ports, so that the cluster can be started again on the same addresses.
async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}
const ports = { grpc: 0, http: 0 };

function startCluster() {
  return start("paceline up", args.paceline, [
    "up",
    "--insecure-loopback", // the emulated GPU hosts (bench fleet) speak plain text
    "--data-dir", join(dir, "data"),
    "--listen", `127.0.0.1:${ports.grpc}`,
    "--http-listen", `127.0.0.1:${ports.http}`,
    "--name", "ui-host",
    "--cpu", "2",
    "--memory", "2Gi",
    "--label", "zone=test",
    "--history-period", "1s",
    "--retention-period", "1s", // a pool's retention of 1s archives its jobs at once
  ]);
}

async function api(http, token, service, method, body = {}) {
  const res = await fetch(`http://${http}/api/v1/${service}/${method}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return res.json();
}

async function main() {
  ports.grpc = await freePort();
  ports.http = await freePort();
  let cluster = startCluster();
  const endpoints = join(dir, "data", "master.json");
  await waitFor("master.json", () => existsSync(endpoints), 60000);
  const { http } = JSON.parse(readFileSync(endpoints, "utf8"));
  const token = readFileSync(join(dir, "data", "token"), "utf8").trim();
  const base = `http://${http}/ui`;
  await waitFor("the local agent", async () => {
    const r = await api(http, token, "HostService", "ListHosts");
    return (r.hosts ?? []).some((h) => h.connected);
  });

  browser = await chromium.launch({
    executablePath: args.chromium,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const problems = [];
  let expected = null; // a refusal the current step expects, as a RegExp
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    if (expected && expected.test(m.text())) return;
    problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  // Which request a "Failed to load resource" console error was about.
  const refused = [];
  page.on("response", (r) => {
    if (r.status() >= 400) refused.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  const shot = async (name) => {
    if (!args.screenshots) return;
    mkdirSync(args.screenshots, { recursive: true });
    await page.screenshot({ path: join(args.screenshots, `${name}.png`), fullPage: true });
  };
  const step = async (name, f) => {
    process.stdout.write(`- ${name} ... `);
    const t0 = Date.now();
    refused.length = 0;
    await f();
    assert.deepEqual(problems, [], `browser errors during "${name}"; refused requests:\n${refused.join("\n")}`);
    console.log(`ok (${Date.now() - t0} ms)`);
  };

  await step("without a token only the login form shows; a wrong token is refused", async () => {
    await page.goto(`${base}/`);
    await page.getByLabel("API token").waitFor();
    await shot("login");
    expected = /status of 401/;
    await page.getByLabel("API token").fill("not-the-token");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("alert").filter({ hasText: "UNAUTHENTICATED" }).waitFor();
    expected = null;
    assert.equal(await page.getByRole("navigation", { name: "main" }).count(), 0);
  });

  await step("log in", async () => {
    await page.getByLabel("API token").fill(token);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    // Who the token acts as, next to Log out.
    await page.locator(".signed-in").getByText("admin · admin").waitFor();
  });

  await step("create a pool from YAML", async () => {
    await page.getByRole("link", { name: "Pools" }).click();
    await page.getByText("Create a pool").click();
    await page.getByLabel("Path").fill("/web");
    await page
      .getByLabel("Pool spec (YAML)")
      .fill("resources:\n  cpu: {reservation: 1, limit: 2, share: 1}\n  memory: {reservation: 512Mi, limit: 2Gi, share: 1}\n");
    await page.getByRole("button", { name: "Create pool" }).click();
    await page.getByRole("rowheader", { name: "/web" }).waitFor();
    const pools = await api(http, token, "PoolService", "ListPools");
    assert.ok(pools.pools.some((p) => p.path === "/web"));
  });

  await step("a spec with a typo shows its line and column inline and creates nothing", async () => {
    await page.goto(`${base}/jobs/new`);
    await page.getByLabel("Pool").fill("/web");
    await page
      .getByLabel(/Job spec/)
      .fill('name: typo\ninstancs: 2\ntask:\n  command: "true"\n  resources: {cpu: 0.1, memory: 16Mi}\n');
    expected = /status of 400/;
    await page.getByRole("button", { name: "Create job" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expected = null;
    const text = await alert.innerText();
    assert.match(text, /INVALID_ARGUMENT/);
    assert.match(text, /:2:1/);
    assert.match(text, /instancs/);
    await shot("job-create-error");
    const jobs = await api(http, token, "JobService", "QueryJobs", {});
    assert.equal((jobs.jobs ?? []).length, 0, "the refused spec created a job");
  });

  let batchId = 0;
  await step("create a job and see it reach SUCCEEDED live", async () => {
    await page
      .getByLabel(/Job spec/)
      .fill('name: hello\ninstances: 3\ntask:\n  command: "echo hello $PACELINE_INSTANCE_ID; sleep 3"\n  resources: {cpu: 0.1, memory: 16Mi}\n');
    await page.getByRole("button", { name: "Create job" }).click();
    await page.waitForURL(/\/ui\/jobs\/\d+$/);
    batchId = Number(page.url().split("/").pop());
    await page.evaluate(() => (window.__notReloaded = true));
    await page.getByRole("heading", { name: /hello/ }).getByText("RUNNING").waitFor({ timeout: 30000 });
    await shot("job-running");
    await page.getByRole("heading", { name: /hello/ }).getByText("SUCCEEDED").waitFor({ timeout: 30000 });
    assert.equal(await page.evaluate(() => window.__notReloaded), true, "the page reloaded");
    assert.equal(await page.locator('[data-state="SUCCEEDED"]').innerText(), "3");
    // Once ended, the instances show their exit codes.
    await waitFor("the exit codes", async () => (await page.locator("tr[data-instance] td.exit").allInnerTexts()).join(",") === "0,0,0");
    // Its spec, highlighted: keys and values in their own elements.
    await page.getByText(/^Spec \(version 1\)/).click();
    const keys = await page.getByLabel(`spec of job ${batchId}`).locator(".hljs-attr").allInnerTexts();
    assert.ok(keys.includes("instances:") && keys.includes("command:"), keys.join(","));
    await shot("job");
  });

  await step("a job of roles in a gang: its roles, each instance's role, its gang restart's attempt and reason", async () => {
    // Instance 2 (a worker) fails its first run: the whole gang restarts together once, and
    // then every member succeeds.
    const r = await api(http, token, "JobService", "CreateJob", {
      pool: "/web",
      spec_yaml: [
        "name: ranks",
        "sla: {min_running_instances: 3}",
        "gang: {restart: gang, max_restarts: 2}",
        "task:",
        '  command: "sleep 3"',
        "  resources: {cpu: 0.1, memory: 16Mi}",
        "  kill_grace: 1s",
        "roles:",
        "  - name: launcher",
        "    instances: 1",
        "  - name: worker",
        "    instances: 2",
        "    task:",
        "      command: |",
        "        run=${PACELINE_RUN_ID##*/}",
        '        if [ "$PACELINE_INSTANCE_ID" = 2 ] && [ "$run" = 1 ]; then sleep 1; exit 3; fi',
        "        sleep 3",
        "",
      ].join("\n"),
    });
    const id = Number(r.job_id);
    await page.goto(`${base}/jobs/${id}`);
    assert.equal(await page.locator("[data-roles]").innerText(), "Roles: launcher (instance 0) · worker (instances 1–2)");
    assert.equal(await page.locator("[data-gang]").innerText(), "Gang of 3 · rendezvous none · restarts together, at most 2 times");
    await page.getByRole("heading", { name: /ranks/ }).getByText("SUCCEEDED").waitFor({ timeout: 60000 });
    assert.deepEqual(await page.locator("tr[data-instance] td.role").allInnerTexts(), ["launcher", "worker", "worker"]);
    await waitFor("every member in gang attempt 1", async () => (await page.locator("tr[data-instance] td.attempt").allInnerTexts()).join(",") === "1,1,1");
    await shot("job-gang");
    // The launcher's page: its role, its attempt, and the gang restart that stopped its first run.
    await page.locator('tr[data-instance="0"]').getByRole("link", { name: "0" }).click();
    await page.getByText(/role launcher · run 2 · gang attempt 1/).waitFor();
    const restart = page.getByRole("row").filter({ hasText: "GANG_RESTART" }).first();
    await restart.waitFor();
    assert.match(await restart.innerText(), /gang restart 1\/2: instance 2 failed/);
  });

  let nowhereId = 0;
  await step("a job that cannot fit says why it waits", async () => {
    await page.goto(`${base}/jobs/new`);
    await page.getByLabel("Pool").fill("/web");
    await page
      .getByLabel(/Job spec/)
      .fill(
        'name: nowhere\ninstances: 1\ntask:\n  command: "true"\n  resources: {cpu: 0.1, memory: 16Mi}\n' +
          "  constraints:\n    - {host_label: zone, op: in, values: [mars]}\n",
      );
    await page.getByRole("button", { name: "Create job" }).click();
    await page.waitForURL(/\/ui\/jobs\/\d+$/);
    const why = page.getByRole("note");
    await why.waitFor({ timeout: 20000 });
    const text = await why.innerText();
    assert.match(text, /Why waiting:/);
    assert.ok(text.length > "Why waiting: ".length + 5, `too short: ${text}`);
    console.log(`\n    why pending: ${text.replace(/\s+/g, " ")}`);
    await shot("job-pending");
    nowhereId = Number(page.url().split("/").pop());
  });

  await step("the page of a task never placed says it has no run yet and asks for no logs", async () => {
    const asked = [];
    const onRequest = (r) => r.url().includes("/GetTaskLogs") && asked.push(r.url());
    page.on("request", onRequest);
    await page.goto(`${base}/jobs/${nowhereId}/tasks/0`);
    await page.getByRole("heading", { name: /Task/ }).getByText(/^(PENDING|READY)$/).waitFor();
    // The logs were polled every second: three seconds would show it (and its refusals).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    page.off("request", onRequest);
    assert.deepEqual(asked, [], "the page asked for the logs of a task that has no host");
    await page.getByText(/No run yet/).waitFor({ timeout: 1000 });
    assert.equal(await page.getByLabel("stdout").count(), 0);
  });

  await step("follow a task's logs while it prints", async () => {
    const r = await api(http, token, "JobService", "CreateJob", {
      pool: "/web",
      spec_yaml:
        'name: printer\ninstances: 1\ntask:\n  command: "for i in $(seq 1 12); do echo line $i; sleep 0.5; done"\n  resources: {cpu: 0.1, memory: 16Mi}\n',
    });
    const id = Number(r.job_id);
    assert.ok(id > 0, JSON.stringify(r));
    await page.goto(`${base}/jobs/${id}/tasks/0`);
    const log = page.getByLabel("stdout");
    await waitFor("line 2", async () => /line 2\b/.test(await log.innerText()));
    const early = await log.innerText();
    assert.doesNotMatch(early, /line 12/, "the task finished before its logs were followed");
    await shot("task");
    await waitFor("line 12", async () => /line 12/.test(await log.innerText()));
    const all = await log.innerText();
    for (let i = 1; i <= 12; i++) assert.match(all, new RegExp(`line ${i}\\b`));
  });

  await step("drain a host after a confirmation, see it change state, bring it up", async () => {
    await page.getByRole("link", { name: "Hosts" }).click();
    const row = page.locator('tr[data-host="ui-host"]');
    await row.waitFor();
    // Its address: the local agent's, as the master has it from its registration.
    const listed = await api(http, token, "HostService", "ListHosts");
    const address = listed.hosts.find((h) => h.name === "ui-host").address;
    assert.match(address, /^\d+\.\d+\.\d+\.\d+$|:/);
    assert.equal((await row.locator("td.address").innerText()).trim(), address);
    await shot("hosts");
    await row.getByRole("button", { name: "Drain" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Drain" }).click();
    await row.getByText(/DRAIN(ING|ED)/).first().waitFor({ timeout: 20000 });
    const hosts = await api(http, token, "HostService", "ListHosts");
    assert.match(hosts.hosts[0].maintenance, /DRAIN/);
    await row.getByRole("button", { name: "Up" }).click();
    await dialog.getByRole("button", { name: "Up" }).click();
    await row.getByText("UP", { exact: true }).first().waitFor({ timeout: 20000 });
  });

  let trainerId = 0;
  await step("GPU devices and the tasks sharing them; the master filters the hosts", async () => {
    const fleet = start("fleet", args.paceline, [
      "--addr", `127.0.0.1:${ports.grpc}`, "--token", token, "bench", "fleet", "--hosts", "2",
      "--cpu", "8", "--memory", "16Gi", "--gpus", "2", "--gpu-model", "A100", "--prefix", "gpu",
    ]);
    await waitFor("the GPU hosts", () => fleet.log().includes("emulated hosts registered"), 60000);
    await api(http, token, "PoolService", "CreatePool", {
      path: "/gpu",
      spec_yaml: "resources:\n  cpu: {reservation: 4, share: 1}\n  memory: {reservation: 4Gi, share: 1}\n  gpu: {reservation: 4, share: 1}\n",
    });
    const r = await api(http, token, "JobService", "CreateJob", {
      pool: "/gpu",
      spec_yaml: 'name: trainer\ninstances: 3\ntask:\n  command: "sleep 3600"\n  resources: {cpu: 0.5, memory: 64Mi, gpu: 0.5}\n',
    });
    trainerId = Number(r.job_id);
    assert.ok(trainerId > 0, JSON.stringify(r));
    await page.goto(`${base}/hosts`);
    await page.getByLabel("name").fill("gpu");
    await page.getByLabel("name").press("Enter");
    await page.waitForURL(/name=gpu/);
    await page.getByText("hosts 1–2 of 2").waitFor();
    assert.equal(await page.locator("tr[data-host]").count(), 2);
    // Three halves of a GPU: every one has a holder link on the page.
    await waitFor("the GPU holders", async () => (await page.locator(".gpus a").count()) === 3);
    const labels = await page.locator(".gpus [role=meter]").evaluateAll((m) => m.map((e) => e.getAttribute("aria-label")));
    assert.equal(labels.length, 4, labels.join("\n"));
    assert.ok(labels.some((l) => / allocated to .*\(0\.5\)/.test(l)), labels.join("\n"));
    await shot("hosts-gpu");
    await page.getByLabel("state").selectOption("LOST");
    await page.getByText("no host matches").waitFor();
  });

  await step("a GPU its agent found unhealthy is marked, with why", async () => {
    const sick = start("sick-fleet", args.paceline, [
      "--addr", `127.0.0.1:${ports.grpc}`, "--token", token, "bench", "fleet", "--hosts", "1",
      "--cpu", "8", "--memory", "16Gi", "--gpus", "2", "--gpu-model", "A100", "--prefix", "sick",
      "--unhealthy-gpu", "1",
    ]);
    await waitFor("the sick host", () => sick.log().includes("emulated hosts registered"), 60000);
    await page.goto(`${base}/hosts?name=sick`);
    const bad = page.locator("li[data-unhealthy=true]");
    await bad.first().waitFor({ timeout: 20000 });
    assert.equal(await bad.count(), 1);
    assert.equal(await bad.getAttribute("data-gpu"), "1");
    await bad.getByText("unhealthy: XID 79: emulated fault").waitFor();
    const label = await bad.locator("[role=meter]").getAttribute("aria-label");
    assert.match(label, /unhealthy: XID 79/);
    await shot("hosts-gpu-unhealthy");
    // Emulated hosts never end their tasks: this one takes no more work (the steps below
    // expect theirs to end).
    await api(http, token, "HostService", "DrainHost", { host: "sick-00000" });
  });

  await step("kill an instance from its page after a confirmation", async () => {
    await api(http, token, "JobService", "KillJob", { job_id: trainerId });
    const r = await api(http, token, "JobService", "CreateJob", {
      pool: "/web",
      // On ui-host, whose agent keeps logs (the emulated GPU hosts answer a log request with
      // an error, which the page would rightly show).
      spec_yaml:
        'name: sleeper\ninstances: 2\ntask:\n  command: "sleep 3600"\n  resources: {cpu: 0.1, memory: 16Mi}\n' +
        "  constraints: [{host_label: hostname, op: in, values: [ui-host]}]\n",
    });
    const id = Number(r.job_id);
    await page.goto(`${base}/jobs/${id}/tasks/0`);
    await page.getByRole("heading", { name: /Task/ }).getByText("RUNNING").waitFor({ timeout: 30000 }).catch(async (e) => {
      const t = await api(http, token, "TaskService", "GetTask", { job_id: id, instance: 0 });
      throw new Error(`${e.message}\nthe task: ${JSON.stringify(t.task)}`);
    });
    await page.getByRole("button", { name: "Kill instance" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Kill" }).click();
    await page.getByRole("heading", { name: /Task/ }).getByText("KILLED").waitFor({ timeout: 30000 });
    const t = await api(http, token, "TaskService", "GetTask", { job_id: id, instance: 1 });
    assert.equal(t.task.state, "RUNNING", "another instance was killed too");
    await api(http, token, "JobService", "KillJob", { job_id: id });
  });

  await step("a rolling update shows its progress; pause, resume and abort it", async () => {
    const r = await api(http, token, "JobService", "CreateJob", {
      pool: "/web",
      spec_yaml: 'name: web\ntype: service\ninstances: 2\ntask:\n  command: "sleep 3600"\n  resources: {cpu: 0.1, memory: 16Mi}\n',
    });
    const id = Number(r.job_id);
    await page.goto(`${base}/jobs/${id}`);
    await page.getByRole("heading", { name: /web/ }).getByText("RUNNING").waitFor({ timeout: 30000 });
    const job = await api(http, token, "JobService", "GetJob", { job_id: id });
    const u = await api(http, token, "JobService", "UpdateJob", {
      job_id: id,
      version: job.job.version,
      spec_yaml: 'name: web\ntype: service\ninstances: 2\ntask:\n  command: "sleep 3601"\n  resources: {cpu: 0.1, memory: 16Mi}\n',
      options: { batch_size: 1, min_healthy_time_ms: 60000 },
    });
    assert.ok(Number(u.update_id) > 0, JSON.stringify(u));
    const progress = page.locator("[data-update-progress]");
    await waitFor("the update's progress", async () => / of 2 instances done/.test(await progress.innerText().catch(() => "")));
    await page.getByRole("button", { name: "Pause update" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Pause update" }).click();
    await page.getByRole("group", { name: /update/ }).getByText("PAUSED", { exact: true }).waitFor();
    await shot("job-update");
    await page.getByRole("button", { name: "Resume update" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Resume update" }).click();
    await page.getByRole("button", { name: "Pause update" }).waitFor();
    await page.getByRole("button", { name: "Abort update" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Abort update" }).click();
    await page.getByRole("group", { name: /update/ }).getByText("ABORTED", { exact: true }).waitFor();
    await api(http, token, "JobService", "KillJob", { job_id: id });
  });

  await step("a service's endpoints show live: address and port per instance, ready or why not", async () => {
    const r = await api(http, token, "JobService", "CreateJob", {
      pool: "/web",
      spec_yaml:
        'name: api\ntype: service\ninstances: 2\ntask:\n  command: "sleep 3600"\n  ports: [http]\n' +
        "  resources: {cpu: 0.1, memory: 16Mi}\n  kill_grace: 1s\n  deregistration_delay: 0s\n" +
        "  constraints: [{host_label: hostname, op: in, values: [ui-host]}]\n",
    });
    const id = Number(r.job_id);
    assert.ok(id > 0, JSON.stringify(r));
    await page.goto(`${base}/jobs/${id}`);
    const rows = page.getByRole("group", { name: "endpoints" }).locator("[data-endpoint]");
    await waitFor("two ready endpoints", async () => (await rows.evaluateAll((els) => els.filter((e) => e.dataset.ready === "yes").length)) === 2);
    const tasks = (await api(http, token, "TaskService", "ListTasks", { job_id: id })).tasks;
    for (const t of tasks) {
      const text = await page.locator(`[data-endpoint="${t.instance}"] .address`).innerText();
      assert.ok(text.includes(`http: 127.0.0.1:${t.ports.http}`), `instance ${t.instance}: ${text}`);
    }
    assert.match(await page.locator("[data-dns-name]").innerText(), /2 of 2 ready/);
    await shot("job-endpoints");
    await api(http, token, "TaskService", "KillTask", { job_id: id, instance: 1 });
    await page.locator('[data-endpoint="1"][data-ready="no"]').getByText("not running").waitFor({ timeout: 30000 });
    assert.equal(await page.locator('[data-endpoint="0"]').getAttribute("data-ready"), "yes");
    await api(http, token, "JobService", "KillJob", { job_id: id });
  });

  await step("a killed master: the page says it is stale, reconnects by itself and catches up", async () => {
    const r = await api(http, token, "JobService", "CreateJob", {
      pool: "/web",
      spec_yaml: 'name: outlives\ninstances: 2\ntask:\n  command: "sleep 4"\n  resources: {cpu: 0.1, memory: 16Mi}\n',
    });
    const id = Number(r.job_id);
    await page.goto(`${base}/jobs/${id}`);
    await page.getByRole("heading", { name: /outlives/ }).getByText("RUNNING").waitFor({ timeout: 30000 });
    // The connection errors while the master is away are what this step expects.
    expected = /ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_CONNECTION_CLOSED|ERR_EMPTY_RESPONSE|ERR_INCOMPLETE_CHUNKED_ENCODING|Failed to fetch|status of 50\d/;
    cluster.kill("SIGKILL");
    await new Promise((resolve) => cluster.on("exit", resolve));
    await page.getByRole("status").filter({ hasText: "Not live" }).waitFor({ timeout: 30000 });
    await shot("stale");
    // The tasks end while the master is away; started again, it learns so from the agent.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    rmSync(endpoints, { force: true });
    cluster = startCluster();
    await waitFor("the master again", () => existsSync(endpoints), 60000);
    await page.getByRole("status").filter({ hasText: "Not live" }).waitFor({ state: "detached", timeout: 60000 });
    expected = null;
    await page.getByRole("heading", { name: /outlives/ }).getByText("SUCCEEDED").waitFor({ timeout: 60000 });
  });

  await step("the overview, pools and jobs pages show the cluster", async () => {
    await page.getByRole("link", { name: "Overview" }).click();
    await page.getByRole("list", { name: "tasks by state" }).getByText("SUCCEEDED").waitFor();
    // The chart has the master's points from before the page was opened.
    await waitFor("the overview's history", async () => Number(await page.locator(".chart").getAttribute("data-points")) >= 1);
    await shot("overview");
    await page.getByRole("link", { name: "Pools" }).click();
    await page.getByRole("rowheader", { name: "/web" }).waitFor();
    await shot("pools");
    // A pool's page: its resources, its queue (the job that cannot be placed was admitted),
    // its jobs.
    await page.getByRole("link", { name: "/web" }).click();
    await page.getByRole("heading", { name: "Pool /web" }).waitFor();
    await page.getByRole("cell", { name: "hello" }).waitFor();
    await waitFor("the pool's history", async () => Number(await page.locator(".chart").first().getAttribute("data-points")) >= 1);
    // Its usage by hour: the runs that ended in it (hello's three at least), in a chart and a
    // table of the hours.
    await waitFor("the pool's usage", async () => Number(await page.locator("[data-usage-runs]").getAttribute("data-usage-runs")) >= 3);
    await page.getByRole("table", { name: "usage by hour" }).getByRole("row").nth(1).waitFor();
    assert.equal(await page.locator(".chart").count(), 2, "the history's and the usage's charts");
    await page.getByLabel("resource").selectOption("memory");
    await page.waitForURL(/resource=memory/);
    await shot("pool");
    await page.getByRole("link", { name: "Pools" }).click();
    await page.getByRole("link", { name: "Jobs" }).click();
    await page.locator(`tr[data-job="${batchId}"]`).getByText("SUCCEEDED", { exact: true }).waitFor();
    await page.locator("select[name=state]").selectOption("SUCCEEDED");
    await page.waitForURL(/state=SUCCEEDED/);
    // hello, ranks, printer, outlives (the unfiltered rows may still show for a moment)
    await waitFor("the succeeded jobs", async () => {
      const states = await page.locator("tr[data-job] td:nth-child(5)").allInnerTexts();
      return states.length === 4 && states.every((s) => s === "SUCCEEDED");
    });
    await page.goBack();
    await page.waitForURL((u) => !u.search.includes("state="));
    await page.locator("select[name=type]").selectOption("service");
    await page.waitForURL(/type=service/);
    // web (the rolling update's) and api (the endpoints')
    await waitFor("the services", async () => {
      const types = await page.locator("tr[data-job] td:nth-child(4)").allInnerTexts();
      return types.length === 2 && types.every((t) => t === "service");
    });
    await page.goBack();
    await page.waitForURL((u) => !u.search.includes("type="));
    await page.locator("tr[data-job]").nth(3).waitFor();
    await shot("jobs");
  });

  await step("the keyboard alone opens a job and a confirmation, and cancels it", async () => {
    await page.goto(`${base}/jobs`);
    await page.locator("tr[data-job]").first().waitFor();
    let onJob = false;
    for (let i = 0; i < 60 && !onJob; i++) {
      await page.keyboard.press("Tab");
      onJob = await page.evaluate(() => !!document.activeElement?.closest("tr[data-job]"));
    }
    assert.ok(onJob, "Tab never reached a job's link");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/ui\/jobs\/\d+$/);
    let onRestart = false;
    for (let i = 0; i < 60 && !onRestart; i++) {
      await page.keyboard.press("Tab");
      onRestart = await page.evaluate(() => document.activeElement?.textContent === "Restart");
    }
    assert.ok(onRestart, "Tab never reached the Restart button");
    await page.keyboard.press("Enter");
    await page.getByRole("dialog").waitFor();
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "hidden" });
  });

  let viewerToken = "";
  let submitterToken = "";
  await step("actions show only for the roles that may take them: none for a viewer", async () => {
    // The admin, for comparison: the ended job offers Restart and Delete, a host Drain.
    await page.goto(`${base}/jobs/${batchId}`);
    await page.getByRole("button", { name: "Restart" }).waitFor();
    const created = async (user, role, scope) => {
      const r = await api(http, token, "AccessService", "CreateToken", { user, role, scope });
      assert.ok(r.token, JSON.stringify(r));
      return r.token;
    };
    const viewer = (viewerToken = await created("vera", "viewer", "/"));
    const submitter = (submitterToken = await created("sam", "submitter", "/web"));
    const own = await api(http, submitter, "JobService", "CreateJob", {
      pool: "/web",
      spec_yaml: 'name: sams\ninstances: 1\ntask:\n  command: "sleep 3600"\n  resources: {cpu: 0.1, memory: 16Mi}\n  kill_grace: 1s\n',
    });
    const ownId = Number(own.job_id);
    assert.ok(ownId > 0, JSON.stringify(own));
    const as = async (t, signedIn) => {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      await ctx.addInitScript((t) => sessionStorage.setItem("paceline.token", t), t);
      const p = await ctx.newPage();
      p.on("console", (m) => m.type() === "error" && problems.push(`${signedIn} console: ${m.text()}`));
      p.on("pageerror", (e) => problems.push(`${signedIn} page error: ${e.message}`));
      // Each page once its caller is known (the buttons wait for it too).
      p.open = async (path, heading) => {
        await p.goto(`${base}${path}`);
        await p.getByRole("heading", { name: heading }).first().waitFor();
        await p.locator(".signed-in").getByText(signedIn).waitFor();
      };
      return [ctx, p];
    };
    const actions = (p) => p.getByRole("button", { name: /^(Kill|Restart|Delete|Drain|Down|Up|Roll back)\b|update$/ });

    const [vctx, v] = await as(viewer, "vera · viewer on /");
    await v.open(`/jobs/${batchId}`, /hello/);
    assert.equal(await actions(v).count(), 0, "a viewer is offered a job's actions");
    await v.open(`/jobs/${ownId}`, /sams/);
    await v.getByRole("heading", { name: /sams/ }).getByText("RUNNING").waitFor({ timeout: 30000 });
    assert.equal(await actions(v).count(), 0, "a viewer is offered a running job's actions");
    await v.open(`/jobs/${ownId}/tasks/0`, /Task/);
    await v.locator("p.facts").getByText(/^run 1/).waitFor();
    assert.equal(await actions(v).count(), 0, "a viewer is offered an instance's actions");
    await v.open("/hosts", "Hosts");
    await v.locator('tr[data-host="ui-host"]').waitFor();
    assert.equal(await actions(v).count(), 0, "a viewer is offered a host's actions");
    assert.equal(await v.getByRole("columnheader", { name: "actions" }).count(), 0);
    await v.open("/pools", "Pools");
    assert.equal(await v.getByText("Create a pool").count(), 0);
    await v.open("/jobs", "Jobs");
    assert.equal(await v.getByRole("link", { name: "Create a job" }).count(), 0);
    assert.equal(await v.getByRole("navigation", { name: "main" }).getByRole("link", { name: /Audit|Tokens/ }).count(), 0);
    await v.open("/jobs/new", "Create a job");
    await v.getByText(/submitting jobs needs the submitter, pool-admin or admin role/).waitFor();
    assert.equal(await v.getByRole("button", { name: "Create job" }).count(), 0);
    await vctx.close();

    // A submitter of /web: its own job's actions, not those of the admin's jobs, nor the hosts'.
    const [sctx, sp] = await as(submitter, "sam · submitter on /web");
    await sp.open(`/jobs/${ownId}`, /sams/);
    await sp.getByRole("button", { name: "Kill" }).waitFor();
    await sp.open(`/jobs/${batchId}`, /hello/);
    assert.equal(await actions(sp).count(), 0, "a submitter is offered the actions of another's job");
    await sp.open("/hosts", "Hosts");
    await sp.locator('tr[data-host="ui-host"]').waitFor();
    assert.equal(await actions(sp).count(), 0, "a submitter is offered a host's actions");
    await sp.open("/jobs", "Jobs");
    await sp.getByRole("link", { name: "Create a job" }).waitFor();
    await sctx.close();
    await api(http, token, "JobService", "KillJob", { job_id: ownId });
  });

  await step("the audit log: newest first, filtered by user, refusals, verb and pool", async () => {
    const refusal = await api(http, viewerToken, "JobService", "KillJob", { job_id: batchId });
    assert.equal(refusal.code, "PERMISSION_DENIED", JSON.stringify(refusal));
    await page.goto(`${base}/`);
    await page.getByRole("navigation", { name: "main" }).getByRole("link", { name: "Audit" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    const rows = page.locator("tr[data-audit]");
    const read = (cls) => rows.locator(`td.${cls}`).allInnerTexts();
    await rows.nth(5).waitFor();
    const seqs = await rows.evaluateAll((es) => es.map((e) => Number(e.dataset.audit)));
    assert.deepEqual(seqs, [...seqs].sort((a, b) => b - a), "not newest first");
    const filter = async (name, value, url) => {
      await page.getByLabel(name, { exact: true }).fill(value);
      await page.getByLabel(name, { exact: true }).press("Enter");
      await page.waitForURL(url);
    };
    // The master filters by user.
    await filter("user", "vera", /user=vera/);
    await waitFor("vera's entries", async () => {
      const users = await read("user");
      return users.length >= 1 && users.every((u) => u === "vera");
    });
    const kill = rows.filter({ hasText: "JobService.KillJob" }).first();
    assert.equal(await kill.getAttribute("data-outcome"), "PERMISSION_DENIED");
    assert.equal((await kill.locator("td.pool").innerText()).trim(), "/web");
    await shot("audit");
    // Refusals only, of anyone.
    await filter("user", "", (u) => !u.search.includes("user="));
    await page.getByLabel("refusals only").check();
    await page.waitForURL(/refused=1/);
    await waitFor("only refusals", async () => {
      const outcomes = await rows.evaluateAll((es) => es.map((e) => e.dataset.outcome));
      return outcomes.includes("PERMISSION_DENIED") && outcomes.every((o) => o !== "OK");
    });
    await page.getByLabel("refusals only").uncheck();
    await page.waitForURL((u) => !u.search.includes("refused="));
    // A verb: a part of the action.
    await filter("verb", "CreatePool", /verb=CreatePool/);
    await waitFor("the pools created", async () => {
      const actions = await read("action");
      const pools = await read("pool");
      return actions.length >= 2 && actions.every((a) => a === "PoolService.CreatePool") && pools.includes("/web") && pools.includes("/gpu");
    });
    // The master filters by pool (and below).
    await filter("verb", "", (u) => !u.search.includes("verb="));
    await filter("pool", "/gpu", /pool=%2Fgpu|pool=\/gpu/);
    await waitFor("the entries of /gpu", async () => {
      const pools = await read("pool");
      return pools.length >= 1 && pools.every((p) => p === "/gpu");
    });
  });

  await step("tokens: listed without their secrets, filtered, one revoked after a confirmation", async () => {
    await page.getByRole("navigation", { name: "main" }).getByRole("link", { name: "Tokens" }).click();
    await page.getByRole("heading", { name: "Tokens" }).waitFor();
    const [, id, secret] = viewerToken.split("_");
    const row = page.locator(`tr[data-token="${id}"]`);
    await row.waitFor();
    assert.equal(await row.locator("td.user").innerText(), "vera");
    assert.equal(await row.locator("td.role").innerText(), "viewer");
    await row.getByText("ACTIVE").waitFor();
    const html = await page.content();
    for (const t of [viewerToken, submitterToken]) {
      assert.ok(!html.includes(t.split("_")[2]), "a token's secret is on the page");
    }
    assert.ok(!html.includes(secret));
    await shot("tokens");
    await row.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await row.getByText("REVOKED").waitFor();
    assert.equal(await row.getByRole("button", { name: "Revoke" }).count(), 0);
    const after = await api(http, viewerToken, "AccessService", "WhoAmI");
    assert.equal(after.code, "UNAUTHENTICATED", JSON.stringify(after));
    await page.getByLabel("user", { exact: true }).fill("sam");
    await page.getByLabel("user", { exact: true }).press("Enter");
    await page.waitForURL(/user=sam/);
    await waitFor("sam's token only", async () => {
      const users = await page.locator("tr[data-token] td.user").allInnerTexts();
      return users.length === 1 && users[0] === "sam";
    });
    await page.getByLabel("state").selectOption("REVOKED");
    await page.getByText("0 of 1 tokens").waitFor();
  });

  await step("history: a job retired to the archive is listed, filtered and shown", async () => {
    await api(http, token, "PoolService", "CreatePool", {
      path: "/old",
      spec_yaml: "resources:\n  cpu: {limit: 1, share: 1}\nretain_terminal: 1s\n",
    });
    const r = await api(http, token, "JobService", "CreateJob", {
      pool: "/old",
      spec_yaml: 'name: retired\ninstances: 2\ntask:\n  command: "true"\n  resources: {cpu: 0.1, memory: 16Mi}\n',
    });
    const id = Number(r.job_id);
    assert.ok(id > 0, JSON.stringify(r));
    await waitFor("the job archived", async () => (await api(http, token, "JobService", "GetJob", { job_id: id })).code === "NOT_FOUND", 60000);
    // Its page in the live store says where it went.
    expected = /status of 404/;
    await page.goto(`${base}/jobs/${id}`);
    await page.locator("[data-archive-link]").getByRole("link").click();
    await page.getByRole("heading", { name: `Archived job ${id}: retired` }).waitFor();
    expected = null;
    await page.getByRole("heading", { name: /Archived job/ }).getByText("SUCCEEDED").waitFor();
    assert.equal((await page.locator("tr[data-instance] td.exit").allInnerTexts()).join(","), "0,0");
    await page.getByText(/^Events \(\d+\)/).click();
    await page.getByRole("cell", { name: "EXITED_ZERO" }).first().waitFor();
    await shot("archived-job");
    await page.getByRole("navigation", { name: "main" }).getByRole("link", { name: "History" }).click();
    const row = page.locator(`tr[data-archived-job="${id}"]`);
    await row.waitFor();
    await page.getByText("1 archived job, by finish time").waitFor();
    assert.match(await row.innerText(), /retired\s+batch\s+\/old\s+SUCCEEDED\s+2/);
    await page.getByLabel("pool").fill("/web");
    await page.getByLabel("pool").press("Enter");
    await page.waitForURL(/pool=/);
    await page.getByText("no archived job").waitFor();
    await page.getByLabel("pool").fill("/old");
    await page.getByLabel("pool").press("Enter");
    await row.waitFor();
    await page.getByLabel("finished in the last").selectOption("1d");
    await page.waitForURL(/since=1d/);
    await row.waitFor();
    await shot("history");
  });

  await step("a host's image cache: each image's references, size and running tasks", async () => {
    const { layout } = writeOciLayout(join(dir, "image"));
    execFileSync(args.paceline, [
      "image", "load", layout, "--work-dir", join(dir, "data", "agent"), "--tag", "example.com/tiny:1",
    ]);
    await page.goto(`${base}/hosts?name=ui-host`);
    const cell = page.locator('tr[data-host="ui-host"] td.images-cell');
    // The agent reports its cache with its next usage report (every 5 s).
    await cell.getByText(/^1 image, /).waitFor({ timeout: 30000 });
    await cell.getByText(/^1 image, /).click();
    const items = cell.getByRole("list", { name: "images cached on ui-host" }).getByRole("listitem");
    assert.equal(await items.count(), 1);
    assert.match(await items.innerText(), /^example\.com\/tiny:1 .*0 running tasks · used/);
    await shot("hosts-images");
  });

  await step("on a phone's screen no page is wider than the screen", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.addInitScript((t) => sessionStorage.setItem("paceline.token", t), token);
    const p = await phone.newPage();
    p.on("console", (m) => m.type() === "error" && problems.push(`phone console: ${m.text()}`));
    p.on("pageerror", (e) => problems.push(`phone page error: ${e.message}`));
    for (const [name, path, ready] of [
      [null, "/", "Overview"],
      ["phone-jobs", "/jobs", "Jobs"],
      [null, "/hosts", "Hosts"],
      [null, `/jobs/${batchId}`, /hello/],
    ]) {
      await p.goto(`${base}${path}`);
      await p.getByRole("heading", { name: ready }).first().waitFor();
      const over = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(over <= 1, `${path} is ${over}px wider than the screen`);
      if (args.screenshots && name) await p.screenshot({ path: join(args.screenshots, `${name}.png`), fullPage: true });
    }
    await phone.close();
  });
}

try {
  await main();
  console.log("web UI: every step passed");
} catch (e) {
  failed = true;
  console.error(`\nFAILED: ${e.stack ?? e}`);
  console.error(tails(30));
} finally {
  if (browser) await browser.close().catch(() => {});
  await stopAll(dir);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
