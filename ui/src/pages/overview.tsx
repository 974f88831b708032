// The cluster at a glance: capacity and allocation per resource, tasks by state and jobs by
// state (from /metrics), hosts by state (ListHosts' counts, without the hosts), the master's
// role, placements/s and waiting tasks over the last hour (the master's history), and recent
// task events, live.
import { Link } from "wouter-preact";
import { useEffect, useState } from "preact/hooks";
import { ClusterInfo, ListHostsResponse, TaskEvent, call, num } from "../api";
import { TimeChart } from "../components/chart";
import { Badge, Bar, ErrorBox, Stale } from "../components/ui";
import { JOB_STATES, TASK_STATES, amount, time } from "../format";
import { seconds, useHistory } from "../history";
import { byLabel, latest, onSample } from "../metrics";
import { watch } from "../live";

interface Recent {
  job: number;
  instance: number;
  event: TaskEvent;
}

export function Overview() {
  const [info, setInfo] = useState<ClusterInfo | null>(null);
  const [hostStates, setHostStates] = useState<Record<string, number>>({});
  const [metrics, setMetrics] = useState(latest());
  const [recent, setRecent] = useState<Recent[]>([]);
  const [live, setLive] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const { history, error: historyError } = useHistory();
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
      onSample(() => setMetrics(latest())),
    [],
  );
  useEffect(() => {
    const load = async () => {
      let role = "";
      try {
        const i = await call<ClusterInfo>("ClusterService", "GetInfo");
        setInfo(i);
        role = i.role;
      } catch (e) {
        setError((e as Error).message);
      }
      // A standby knows no host's state (the leader does): the note below says so.
      if (role === "standby") return;
      // One host is enough: the counts by state are over all of them.
      call<ListHostsResponse>("HostService", "ListHosts", { page_size: 1 }).then(
        (r) => setHostStates(r.states ?? {}),
        (e) => setError(e.message),
      );
    };
    void load();
    const t = window.setInterval(() => void load(), 3000);
    return () => window.clearInterval(t);
  }, []);

  const dims = ["cpu", "memory", "disk", "gpu"] as const;
  const capacity = byLabel(metrics, "paceline_cluster_capacity", "resource");
  const allocated = byLabel(metrics, "paceline_cluster_allocated", "resource");
  const hostCount = Object.values(hostStates).reduce((a, b) => a + b, 0);
  const points = history?.cluster ?? [];
  const period = Math.max(1, num(history?.period_ms) / 1000);
  const tasks = byLabel(metrics, "paceline_tasks", "state");
  const jobs = byLabel(metrics, "paceline_jobs", "state");
  const jobCount = Object.values(jobs).reduce((a, b) => a + b, 0);
  return (
    <section>
      <h1>Overview</h1>
      <Stale live={live} />
      <ErrorBox error={error ?? (info?.role === "standby" ? null : historyError)} />
      {info && (
        <p class="facts">
          Master <strong>{info.role}</strong>
          {num(info.term) > 0 && <> · term {num(info.term)}</>}
          {info.leader && <> · leader {info.leader}</>} · {info.store} · version {info.version}
        </p>
      )}
      {info?.role === "standby" && (
        <p class="facts" data-testid="standby-note">
          This master is a standby: its jobs and tasks come from its copy of the store
          {num(info.replication_lag_ms) >= 0 && <>, {num(info.replication_lag_ms)} ms old</>}.
          Changes, pools, hosts and this page's history are the leader's
          {info.leader && <> ({info.leader})</>}.
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
                      value={allocated[d] ?? 0}
                      max={capacity[d] ?? 0}
                      label={`${d}: ${amount(d, allocated[d] ?? 0)} of ${amount(d, capacity[d] ?? 0)} allocated`}
                    />
                  </td>
                  <td class="num">
                    {amount(d, allocated[d] ?? 0)} / {amount(d, capacity[d] ?? 0)}
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
                <Link href={`/hosts?state=${s}`}>
                  <Badge state={s} />
                </Link>{" "}
                <span class="num">{n}</span>
              </li>
            ))}
          </ul>
          <p>
            <Link href="/hosts">{hostCount} hosts</Link>
          </p>
        </div>
      </div>
      <h2>Placements and waiting tasks</h2>
      <p class="hint">
        One point every {period} s over the last hour, as this master saw it since it started
        leading.
      </p>
      <TimeChart
        label="placements per second and waiting tasks over the last hour"
        times={points.map(seconds)}
        series={[
          { label: "placements/s", values: points.map((p) => p.placed / period), color: "--bar" },
          { label: "waiting tasks", values: points.map((p) => p.pending_tasks), color: "--warn", right: true },
          { label: "running tasks", values: points.map((p) => p.running_tasks), color: "--ok", right: true, dash: true },
        ]}
      />
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
