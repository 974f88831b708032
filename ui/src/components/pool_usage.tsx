// A pool's usage over the last days (PoolService/GetUsage, by hour): what the runs of its jobs,
// and of the pools below it, held while they ran — cores, memory and GPUs times hours — and how
// many ended, as a chart and a table of the hours, newest first (docs/operations.md, "Usage
// accounting").
import { useEffect, useState } from "preact/hooks";
import { Int, call, num } from "../api";
import { TimeChart } from "./chart";
import { ErrorBox } from "./ui";

const DAYS = 7;
const GIB = 1024 * 1024 * 1024;

interface UsageEntry {
  key: string;
  hour_unix_ms?: Int;
  cpu_seconds?: number;
  memory_byte_seconds?: number;
  gpu_seconds?: number;
  tasks?: Int;
}

interface Hour {
  t: number; // unix seconds of the hour's start
  cpu: number; // core-hours
  memory: number; // GiB-hours
  gpu: number; // GPU-hours
  runs: number;
}

// Hours with a few significant digits: a short run holds a small fraction of one.
function hours(v: number): string {
  if (v === 0) return "0";
  return v < 10 ? v.toPrecision(2) : v.toFixed(1);
}

export function PoolUsage({ path }: { path: string }) {
  const [data, setData] = useState<Hour[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const load = async () => {
      try {
        const r = await call<{ entries?: UsageEntry[] }>("PoolService", "GetUsage", {
          pool: path,
          hourly: true,
          since_unix_ms: Date.now() - DAYS * 86400 * 1000,
        });
        // One point per hour: the pool and the pools below it together.
        const by = new Map<number, Hour>();
        for (const e of r.entries ?? []) {
          const t = num(e.hour_unix_ms) / 1000;
          const h = by.get(t) ?? { t, cpu: 0, memory: 0, gpu: 0, runs: 0 };
          h.cpu += (e.cpu_seconds ?? 0) / 3600;
          h.memory += (e.memory_byte_seconds ?? 0) / GIB / 3600;
          h.gpu += (e.gpu_seconds ?? 0) / 3600;
          h.runs += num(e.tasks);
          by.set(t, h);
        }
        setData([...by.values()].sort((a, b) => a.t - b.t));
        setError(null);
      } catch (e) {
        setError((e as Error).message);
      }
    };
    void load();
    const t = window.setInterval(load, 10000);
    return () => window.clearInterval(t);
  }, [path]);
  const total = (data ?? []).reduce(
    (s, h) => ({ cpu: s.cpu + h.cpu, memory: s.memory + h.memory, gpu: s.gpu + h.gpu, runs: s.runs + h.runs }),
    { cpu: 0, memory: 0, gpu: 0, runs: 0 },
  );
  return (
    <>
      <h2>Usage</h2>
      <ErrorBox error={error} />
      {data && (
        <p class="hint" data-usage-runs={total.runs}>
          last {DAYS} days: {hours(total.cpu)} core-hours, {hours(total.memory)} GiB-hours of memory,{" "}
          {hours(total.gpu)} GPU-hours; {total.runs} runs ended
        </p>
      )}
      {data && data.length > 0 && (
        <>
          <TimeChart
            label={`core-hours and GPU-hours of ${path} per hour over the last ${DAYS} days`}
            times={data.map((h) => h.t)}
            format={hours}
            formatRight={hours}
            series={[
              { label: "core-hours", values: data.map((h) => h.cpu), color: "--bar" },
              { label: "GPU-hours", values: data.map((h) => h.gpu), color: "--accent", right: true },
            ]}
          />
          <table aria-label="usage by hour">
            <thead>
              <tr>
                <th>hour</th>
                <th class="num">core-hours</th>
                <th class="num">memory GiB-hours</th>
                <th class="num">GPU-hours</th>
                <th class="num">runs ended</th>
              </tr>
            </thead>
            <tbody>
              {[...data]
                .reverse()
                .slice(0, 24)
                .map((h) => (
                  <tr key={h.t}>
                    <td>{new Date(h.t * 1000).toLocaleString(undefined, { hour12: false })}</td>
                    <td class="num">{hours(h.cpu)}</td>
                    <td class="num">{hours(h.memory)}</td>
                    <td class="num">{hours(h.gpu)}</td>
                    <td class="num">{h.runs}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </>
      )}
    </>
  );
}
