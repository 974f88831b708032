// What the web UI's tests share: starting `paceline` processes (their output kept for a
// failure's report), waiting for a condition, and stopping every process they started by PID
// (SIGTERM, then SIGKILL after 15 s), then whatever still runs in the test's directory.
import { spawn } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";

const started = [];

// Starts `binary argv...` (with `env` added to this process's environment); the returned
// child has name and log() (everything it printed).
export function start(name, binary, argv, env = {}) {
  const p = spawn(binary, argv, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let log = "";
  p.stdout.on("data", (d) => (log += d));
  p.stderr.on("data", (d) => (log += d));
  p.log = () => log;
  p.name = name;
  started.push(p);
  return p;
}

// Polls `f` every 200 ms until it returns something truthy, which it returns.
export async function waitFor(what, f, timeoutMs = 30000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// The last lines of every started process, for a failure's report.
export function tails(lines = 20) {
  return started
    .map((p) => `--- ${p.name} (last lines) ---\n${p.log().split("\n").slice(-lines).join("\n")}`)
    .join("\n");
}

// Stops every started process, the last started first; then, with `dir`, kills (SIGKILL, by
// PID) every process whose working directory is in it: the tasks of an agent that was killed
// before their job was (tasks outlive their agent by design), and their supervisors.
export async function stopAll(dir) {
  for (const p of started.reverse()) {
    if (p.exitCode !== null || p.signalCode !== null) continue;
    p.kill("SIGTERM");
    await new Promise((resolve) => {
      const t = setTimeout(() => {
        p.kill("SIGKILL");
        resolve();
      }, 15000);
      p.on("exit", () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
  if (!dir) return;
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let cwd;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue;
    }
    if (cwd === dir || cwd.startsWith(`${dir}/`)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  }
}
