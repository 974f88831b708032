// The master's /metrics (Prometheus text) read as numbers, and a history of a few of them kept
// while the UI is open: one sample every 5 s for the last hour, for the overview's chart.

export type Metrics = Map<string, number>; // "name{labels}" or "name" -> value

export async function fetchMetrics(): Promise<Metrics> {
  const res = await fetch("/metrics");
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

export interface Sample {
  t: number; // unix seconds
  placementsPerSecond: number;
  pending: number; // tasks waiting: PENDING + READY
}

const PERIOD_MS = 5000;
const KEEP = 720; // an hour
const samples: Sample[] = [];
let latestMetrics: Metrics = new Map();
const listeners = new Set<() => void>();
let last: { t: number; placements: number } | null = null;
let timer: number | undefined;

async function sample() {
  try {
    const m = await fetchMetrics();
    latestMetrics = m;
    const t = Date.now() / 1000;
    const placements = m.get("paceline_placements_total") ?? 0;
    const tasks = byLabel(m, "paceline_tasks", "state");
    const rate = last && t > last.t ? Math.max(0, (placements - last.placements) / (t - last.t)) : 0;
    last = { t, placements };
    samples.push({ t, placementsPerSecond: rate, pending: (tasks.PENDING ?? 0) + (tasks.READY ?? 0) });
    if (samples.length > KEEP) samples.shift();
    listeners.forEach((f) => f());
  } catch {
    // a gap in the chart
  }
}

// Starts sampling (once), and calls `f` after each sample; returns the unsubscribe.
export function onSample(f: () => void): () => void {
  if (timer === undefined) {
    void sample();
    timer = window.setInterval(sample, PERIOD_MS);
  }
  listeners.add(f);
  return () => listeners.delete(f);
}

export function history(): readonly Sample[] {
  return samples;
}

// The metrics as of the last sample.
export function latest(): Metrics {
  return latestMetrics;
}
