// The master's /metrics (Prometheus text) read as numbers, sampled every 5 s while a page
// shows them (the overview's counts and capacity). Charts read the master's history instead
// (history.ts).

import { token } from "./auth";

export type Metrics = Map<string, number>; // "name{labels}" or "name" -> value

export async function fetchMetrics(): Promise<Metrics> {
  const res = await fetch("/metrics", { headers: { Authorization: `Bearer ${token() ?? ""}` } });
  if (!res.ok) throw new Error(`/metrics: HTTP ${res.status}`);
  const m: Metrics = new Map();
  for (const line of (await res.text()).split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    m.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return m;
}

// The values of `name` by the value of `label`: paceline_tasks{state="RUNNING"} -> RUNNING.
export function byLabel(m: Metrics, name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  const prefix = `${name}{${label}="`;
  for (const [k, v] of m) {
    if (k.startsWith(prefix)) out[k.slice(prefix.length, k.indexOf('"', prefix.length))] = v;
  }
  return out;
}

const PERIOD_MS = 5000;
let latestMetrics: Metrics = new Map();
const listeners = new Set<() => void>();
let timer: number | undefined;

async function sample() {
  try {
    latestMetrics = await fetchMetrics();
    listeners.forEach((f) => f());
  } catch {
    // keep the previous sample
  }
}

// Starts sampling (once, every 5 s), and calls `f` after each sample; returns the unsubscribe.
export function onSample(f: () => void): () => void {
  if (timer === undefined) {
    void sample();
    timer = window.setInterval(sample, PERIOD_MS);
  }
  listeners.add(f);
  return () => listeners.delete(f);
}

// The metrics as of the last sample.
export function latest(): Metrics {
  return latestMetrics;
}
