// How the UI writes quantities and times.
import { Int, num } from "./api";

export function cores(milli: Int): string {
  const v = num(milli) / 1000;
  return Number.isInteger(v) ? `${v}` : v.toFixed(v < 10 ? 2 : 1);
}

export function bytes(b: Int): string {
  let v = num(b);
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 || Number.isInteger(v) ? v : v.toFixed(1)} ${units[i]}`;
}

// A resource dimension's amount ("cpu" in millicores, "gpu" in milli-GPUs, the rest bytes).
export function amount(dim: string, v: Int): string {
  if (num(v) >= Number.MAX_SAFE_INTEGER) return "∞";
  if (dim === "cpu" || dim === "gpu") return cores(v);
  return bytes(v);
}

export function time(unixMs: Int): string {
  const ms = num(unixMs);
  if (ms === 0) return "—";
  return new Date(ms).toLocaleString(undefined, { hour12: false });
}

export function ago(unixMs: Int, now = Date.now()): string {
  const ms = num(unixMs);
  if (ms === 0) return "—";
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

// The task states in their order of life, for counts and filters.
export const TASK_STATES = [
  "PENDING",
  "READY",
  "PLACED",
  "LAUNCHING",
  "RUNNING",
  "KILLING",
  "PREEMPTING",
  "SUCCEEDED",
  "FAILED",
  "KILLED",
  "LOST",
];
export const JOB_STATES = ["PENDING", "RUNNING", "SUCCEEDED", "FAILED", "KILLING", "KILLED"];
