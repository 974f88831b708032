// The cluster at a glance: capacity and allocation per resource (from the hosts), tasks by
// state (from the jobs), hosts by state, the master's role, and recent task events, live.
import { Link } from "wouter-preact";
import { useEffect, useState } from "preact/hooks";
import { ClusterInfo, HostInfo, JobSummary, TaskEvent, call, num } from "../api";
import { Badge, Bar, ErrorBox, Stale } from "../components/ui";
import { TASK_STATES, amount, time } from "../format";
import { useLive } from "../live";

interface Recent {
  job: number;
  instance: number;
  event: TaskEvent;
}

async function allJobs(): Promise<JobSummary[]> {
  const jobs: JobSummary[] = [];
  let page_token = "";
  do {
    const r = await call<{ jobs?: JobSummary[]; next_page_token: string }>(
      "JobService",
      "QueryJobs",
      { page_size: 1000, page_token },
    );
    jobs.push(...(r.jobs ?? []));
    page_token = r.next_page_token;
  } while (page_token);
  return jobs;
}

export function Overview() {
  const [info, setInfo] = useState<ClusterInfo | null>(null);
  const [hosts, setHosts] = useState<HostInfo[]>([]);
  const [recent, setRecent] = useState<Recent[]>([]);
  const [error, setError] = useState<string | null>(null);
  const jobs = useLive<Map<number, JobSummary>>(
    0,
    async () => new Map((await allJobs()).map((j) => [num(j.id), j])),
    (m, e) => {
      if (e.task) {
        const r = { job: num(e.job_id), instance: e.task.instance, event: e.task.event };
        setRecent((old) => [r, ...old].slice(0, 15));
      }
      const j = e.job && m.get(num(e.job_id));
      if (!e.job || !j) return m;
      const next = new Map(m);
      next.set(num(e.job_id), { ...j, state: e.job.state, task_counts: e.job.task_counts });
      return next;
    },
    [],
  );
  useEffect(() => {
    const load = () => {
      call<ClusterInfo>("ClusterService", "GetInfo").then(setInfo, (e) => setError(e.message));
      call<{ hosts?: HostInfo[] }>("HostService", "ListHosts").then(
        (r) => setHosts(r.hosts ?? []),
        (e) => setError(e.message),
      );
    };
    load();
    const t = window.setInterval(load, 3000);
    return () => window.clearInterval(t);
  }, []);

  const dims = ["cpu", "memory", "disk", "gpu"] as const;
  const key = { cpu: "cpu_milli", memory: "memory_bytes", disk: "disk_bytes", gpu: "gpu_milli" };
  const capacity: Record<string, number> = {};
  const allocated: Record<string, number> = {};
  for (const d of dims) {
    capacity[d] = 0;
    allocated[d] = 0;
  }
  const hostStates: Record<string, number> = {};
  for (const h of hosts) {
    hostStates[h.state] = (hostStates[h.state] ?? 0) + 1;
    if (!h.connected) continue;
    for (const d of dims) {
      capacity[d] += num((h.capacity as unknown as Record<string, string>)[key[d]]);
      allocated[d] += num((h.allocated as unknown as Record<string, string>)?.[key[d]]);
    }
  }
  const tasks: Record<string, number> = {};
  for (const j of jobs.data?.values() ?? []) {
    for (const [s, n] of Object.entries(j.task_counts ?? {})) tasks[s] = (tasks[s] ?? 0) + n;
  }
  return (
    <section>
      <h1>Overview</h1>
      <Stale live={jobs.live} />
      <ErrorBox error={error ?? jobs.error} />
      {info && (
        <p class="facts">
          Master <strong>{info.role}</strong>
          {num(info.term) > 0 && <> · term {num(info.term)}</>}
          {info.leader && <> · leader {info.leader}</>} · {info.store} · version {info.version}
        </p>
      )}
      <div class="cards">
        <div class="card">
          <h2>Capacity and allocation</h2>
          <table class="dims">
            <tbody>
              {dims.map((d) => (
                <tr key={d}>
                  <th scope="row">{d}</th>
                  <td class="wide">
                    <Bar
                      value={allocated[d]}
                      max={capacity[d]}
                      label={`${d}: ${amount(d, allocated[d])} of ${amount(d, capacity[d])} allocated`}
                    />
                  </td>
                  <td class="num">
                    {amount(d, allocated[d])} / {amount(d, capacity[d])}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div class="card">
          <h2>Tasks by state</h2>
          <ul class="counts" aria-label="tasks by state">
            {TASK_STATES.filter((s) => tasks[s]).map((s) => (
              <li key={s}>
                <Badge state={s} /> <span class="num">{tasks[s]}</span>
              </li>
            ))}
            {Object.keys(tasks).length === 0 && <li>no tasks</li>}
          </ul>
          <p>
            <Link href="/jobs">{jobs.data?.size ?? 0} jobs</Link>
          </p>
        </div>
        <div class="card">
          <h2>Hosts</h2>
          <ul class="counts" aria-label="hosts by state">
            {Object.entries(hostStates).map(([s, n]) => (
              <li key={s}>
                <Badge state={s} /> <span class="num">{n}</span>
              </li>
            ))}
          </ul>
          <p>
            <Link href="/hosts">{hosts.length} hosts</Link>
          </p>
        </div>
      </div>
      <h2>Recent task events</h2>
      <table>
        <thead>
          <tr>
            <th>time</th>
            <th>task</th>
            <th>state</th>
            <th>host</th>
            <th>reason</th>
          </tr>
        </thead>
        <tbody>
          {recent.map((r, i) => (
            <tr key={i}>
              <td>{time(r.event.at_unix_ms)}</td>
              <td>
                <Link href={`/jobs/${r.job}/tasks/${r.instance}`}>
                  {r.job}/{r.instance}
                </Link>
              </td>
              <td>
                <Badge state={r.event.state} />
              </td>
              <td>{r.event.host}</td>
              <td>{r.event.reason}</td>
            </tr>
          ))}
          {recent.length === 0 && (
            <tr>
              <td colSpan={5}>none since this page opened</td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
