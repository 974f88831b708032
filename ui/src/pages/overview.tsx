// The cluster at a glance: capacity and allocation per resource (from the hosts), tasks by
// state and jobs by state (from /metrics), hosts by state, the master's role, placements/s
// and waiting tasks over time, and recent task events, live.
import { Link } from "wouter-preact";
import { useEffect, useState } from "preact/hooks";
import { ClusterInfo, HostInfo, TaskEvent, call, num } from "../api";
import { ActivityChart } from "../components/chart";
import { Badge, Bar, ErrorBox, Stale } from "../components/ui";
import { JOB_STATES, TASK_STATES, amount, time } from "../format";
import { byLabel, history, latest, onSample } from "../metrics";
import { watch } from "../live";

interface Recent {
  job: number;
  instance: number;
  event: TaskEvent;
}

export function Overview() {
  const [info, setInfo] = useState<ClusterInfo | null>(null);
  const [hosts, setHosts] = useState<HostInfo[]>([]);
  const [metrics, setMetrics] = useState(latest());
  const [recent, setRecent] = useState<Recent[]>([]);
  const [live, setLive] = useState(true);
  const [, setSamples] = useState(history().length); // redraws on each new sample
  const [error, setError] = useState<string | null>(null);
  useEffect(
    () =>
      watch(
        0,
        (e) => {
          if (!e.task) return;
          const r = { job: num(e.job_id), instance: e.task.instance, event: e.task.event };
          setRecent((old) => [r, ...old].slice(0, 15));
        },
        setLive,
      ),
    [],
  );
  useEffect(
    () =>
      onSample(() => {
        setSamples(history().length);
        setMetrics(latest());
      }),
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
  const tasks = byLabel(metrics, "paceline_tasks", "state");
  const jobs = byLabel(metrics, "paceline_jobs", "state");
  const jobCount = Object.values(jobs).reduce((a, b) => a + b, 0);
  return (
    <section>
      <h1>Overview</h1>
      <Stale live={live} />
      <ErrorBox error={error} />
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
            {!TASK_STATES.some((s) => tasks[s]) && <li>no tasks</li>}
          </ul>
          <h2>Jobs by state</h2>
          <ul class="counts" aria-label="jobs by state">
            {JOB_STATES.filter((s) => jobs[s]).map((s) => (
              <li key={s}>
                <Link href={`/jobs?state=${s}`}>
                  <Badge state={s} />
                </Link>{" "}
                <span class="num">{jobs[s]}</span>
              </li>
            ))}
          </ul>
          <p>
            <Link href="/jobs">{jobCount} jobs</Link>
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
      <h2>Placements and waiting tasks</h2>
      <p class="hint">
        Sampled from <code>/metrics</code> every 5 s since this page was opened (up to an hour).
      </p>
      <ActivityChart samples={history()} />
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
