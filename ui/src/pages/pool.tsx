// A pool: its resources (reservation, limit, share, entitlement, allocation, demand), their
// history over the last hour (one resource at a time, chosen in the URL), its usage by hour over
// the last days, its queue with why each waiting gang waits, and its jobs (the jobs list
// filtered by the pool).
import { Link } from "wouter-preact";
import { useEffect, useState } from "preact/hooks";
import { JobSummary, PoolInfo, QueuedGang, Resources, call, num } from "../api";
import { TimeChart } from "../components/chart";
import { DimensionCells } from "../components/pool_dimension";
import { PoolUsage } from "../components/pool_usage";
import { Badge, ErrorBox } from "../components/ui";
import { YamlView } from "../components/yaml_view";
import { amount, time } from "../format";
import { seconds, useHistory } from "../history";
import { useQueryState } from "../url_state";

const RESOURCES = { cpu: "cpu_milli", memory: "memory_bytes", disk: "disk_bytes", gpu: "gpu_milli" } as const;
type Resource = keyof typeof RESOURCES;

// Entitlement, allocation and demand of one resource over the last hour.
function PoolHistory({ path }: { path: string }) {
  const [q, set] = useQueryState(`/pools${path}`);
  const r = (q.get("resource") ?? "cpu") as Resource;
  const key = RESOURCES[r] ?? "cpu_milli";
  const { history, error } = useHistory(path);
  const points = history?.pool ?? [];
  const of = (v: Resources | undefined) => num(v?.[key]);
  return (
    <>
      <h2>History</h2>
      <ErrorBox error={error} />
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          resource
          <select name="resource" value={r} onChange={(e) => set("resource", (e.target as HTMLSelectElement).value)}>
            {Object.keys(RESOURCES).map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <span class="hint">
          one point every {num(history?.period_ms) / 1000 || 10} s over the last hour, as this master saw it
        </span>
      </form>
      <TimeChart
        label={`${r} entitlement, allocation and demand of ${path} over the last hour`}
        times={points.map(seconds)}
        format={(v) => amount(r, v)}
        series={[
          { label: "entitlement", values: points.map((p) => of(p.entitlement)), color: "--accent" },
          { label: "allocation", values: points.map((p) => of(p.allocation)), color: "--bar" },
          { label: "demand", values: points.map((p) => of(p.demand)), color: "--warn", dash: true },
        ]}
      />
    </>
  );
}

interface Data {
  pool: PoolInfo;
  queue: QueuedGang[];
  jobs: JobSummary[];
  more: boolean;
}

export function Pool({ path }: { path: string }) {
  const [data, setData] = useState<Data | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const load = async () => {
      try {
        const [p, j] = await Promise.all([
          call<{ pool: PoolInfo; queue?: QueuedGang[] }>("PoolService", "GetPool", { path }),
          call<{ jobs?: JobSummary[]; next_page_token: string }>("JobService", "QueryJobs", {
            pool: path,
            page_size: 20,
          }),
        ]);
        setData({ pool: p.pool, queue: p.queue ?? [], jobs: j.jobs ?? [], more: !!j.next_page_token });
        setError(null);
      } catch (e) {
        setError((e as Error).message);
      }
    };
    void load();
    const t = window.setInterval(load, 3000);
    return () => window.clearInterval(t);
  }, [path]);
  return (
    <section>
      <h1>Pool {path}</h1>
      <ErrorBox error={error} />
      {data && (
        <>
          <table class="dims">
            <thead>
              <tr>
                <th>resource</th>
                <th class="wide">allocation vs entitlement</th>
                <th class="num">allocation</th>
                <th class="num">entitlement</th>
                <th class="num">reservation</th>
                <th class="num">limit</th>
                <th class="num">demand</th>
                <th class="num">share</th>
              </tr>
            </thead>
            <tbody>
              {(data.pool.dimensions ?? []).map((d) => (
                <tr key={d.name}>
                  <th scope="row">{d.name}</th>
                  <DimensionCells pool={path} d={d} />
                </tr>
              ))}
            </tbody>
          </table>
          <PoolHistory path={path} />
          <PoolUsage path={path} />
          <h2>Waiting ({data.queue.length})</h2>
          <table aria-label="queue">
            <thead>
              <tr>
                <th class="num">position</th>
                <th>job</th>
                <th class="num">priority</th>
                <th>class</th>
                <th class="num">tasks</th>
                <th>why it waits</th>
              </tr>
            </thead>
            <tbody>
              {data.queue.map((g) => (
                <tr key={`${num(g.job_id)}-${g.position}`}>
                  <td class="num">{g.position}</td>
                  <td>
                    <Link href={`/jobs/${num(g.job_id)}`}>{num(g.job_id)}</Link>
                  </td>
                  <td class="num">{g.priority}</td>
                  <td>{g.sla}</td>
                  <td class="num">{g.tasks}</td>
                  <td>{g.reason}</td>
                </tr>
              ))}
              {data.queue.length === 0 && (
                <tr>
                  <td colSpan={6}>nothing waits for admission</td>
                </tr>
              )}
            </tbody>
          </table>
          <h2>Jobs</h2>
          <table>
            <thead>
              <tr>
                <th class="num">id</th>
                <th>name</th>
                <th>type</th>
                <th>state</th>
                <th>created</th>
              </tr>
            </thead>
            <tbody>
              {data.jobs.map((j) => (
                <tr key={String(j.id)}>
                  <td class="num">
                    <Link href={`/jobs/${num(j.id)}`}>{num(j.id)}</Link>
                  </td>
                  <td>{j.name}</td>
                  <td>{j.type}</td>
                  <td>
                    <Badge state={j.state} />
                  </td>
                  <td>{time(j.created_at_unix_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p>
            <Link href={`/jobs?pool=${encodeURIComponent(path)}`}>
              {data.more ? "All its jobs, with filters →" : "Its jobs, with filters →"}
            </Link>
          </p>
          <details>
            <summary>Spec</summary>
            <YamlView text={data.pool.spec_yaml} label={`spec of pool ${path}`} />
          </details>
        </>
      )}
    </section>
  );
}
