// A pool: its resources (reservation, limit, share, entitlement, allocation, demand), its
// queue with why each waiting gang waits, and its jobs (the jobs list filtered by the pool).
import { Link } from "wouter-preact";
import { useEffect, useState } from "preact/hooks";
import { JobSummary, PoolInfo, QueuedGang, call, num } from "../api";
import { DimensionCells } from "../components/pool_dimension";
import { Badge, ErrorBox } from "../components/ui";
import { time } from "../format";

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
            <pre class="yaml">{data.pool.spec_yaml}</pre>
          </details>
        </>
      )}
    </section>
  );
}
