// A task: its runs, every event with its reason (live), and its logs — stdout or stderr of a
// run, followed while the run goes on (polled from the agent through the master); kill or
// restart the instance after a confirmation.
import { useEffect, useRef, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { mayActOnJob, useWhoAmI } from "../access";
import { ApiError, GetJobResponse, GetTaskResponse, TaskEvent, TaskLogs, call, num } from "../api";
import { Badge, Confirm, ErrorBox, Stale } from "../components/ui";
import { time } from "../format";
import { useLive } from "../live";

const TERMINAL = new Set(["SUCCEEDED", "FAILED", "KILLED", "LOST"]);

interface Data {
  task: GetTaskResponse;
  events: TaskEvent[];
  job: GetJobResponse["job"]; // its pool and owner: whether the caller may act on it
}

function decode(b64: string): string {
  const raw = atob(b64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

function Logs({ job, instance, run }: { job: number; instance: number; run: number }) {
  const [stderr, setStderr] = useState(false);
  const [follow, setFollow] = useState(true);
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [finished, setFinished] = useState(false);
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    let offset = 0;
    let stopped = false;
    let timer: number | undefined;
    setText("");
    setFinished(false);
    const poll = async () => {
      try {
        const r = await call<TaskLogs>("TaskService", "GetTaskLogs", {
          job_id: job,
          instance,
          run,
          stderr,
          offset,
        });
        if (stopped) return;
        if (r.data) setText((t) => t + decode(r.data));
        offset = num(r.next_offset);
        setError(null);
        setFinished(r.finished);
        if (r.finished || !follow) return;
      } catch (e) {
        if (stopped) return;
        setError((e as Error).message);
      }
      timer = window.setTimeout(poll, 1000);
    };
    void poll();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [job, instance, run, stderr, follow]);
  useEffect(() => {
    if (follow && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [text, follow]);
  return (
    <div class="logs">
      <div class="toolbar">
        <label>
          <input type="checkbox" checked={stderr} onChange={() => setStderr(!stderr)} /> stderr
        </label>
        <label>
          <input type="checkbox" checked={follow} onChange={() => setFollow(!follow)} /> follow
        </label>
        <span class="hint">
          run {run}
          {finished ? " · ended" : follow ? " · following" : ""}
        </span>
      </div>
      <ErrorBox error={error} />
      <pre ref={pre} class="log" aria-label={stderr ? "stderr" : "stdout"} tabIndex={0}>
        {text}
      </pre>
    </div>
  );
}

// The run whose logs the page shows: the current one once it is placed on a host, else the
// newest earlier run that was; 0 while the task was never placed (a pending task has a run
// number before it has a host, and asking for its logs is refused: nothing is polled then).
function logsRun(t: GetTaskResponse): number {
  if (t.task.host) return t.task.run;
  const placed = (t.runs ?? []).filter((r) => !!r.host);
  return placed.length > 0 ? placed[placed.length - 1].run : 0;
}

export function Task({ job, instance }: { job: number; instance: number }) {
  const live = useLive<Data>(
    job,
    async () => {
      const [task, j, events] = await Promise.all([
        call<GetTaskResponse>("TaskService", "GetTask", { job_id: job, instance }),
        call<GetJobResponse>("JobService", "GetJob", { job_id: job }),
        call<{ events?: TaskEvent[] }>("TaskService", "ListTaskEvents", {
          job_id: job,
          instance,
          limit: 500,
        }),
      ]);
      return { task, events: events.events ?? [], job: j.job };
    },
    (d, e) => {
      if (!e.task || e.task.instance !== instance) return d;
      const ev = e.task.event;
      return {
        ...d,
        task: { ...d.task, task: { ...d.task.task, state: ev.state, run: ev.run, host: ev.host || d.task.task.host } },
        events: [...d.events, ev],
      };
    },
    [job, instance],
  );
  const [pending, setPending] = useState<"kill" | "restart" | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const who = useWhoAmI();
  const act = async () => {
    const a = pending;
    setPending(null);
    try {
      if (a === "kill") await call("TaskService", "KillTask", { job_id: job, instance });
      if (a === "restart") {
        await call("JobService", "RestartJob", { job_id: job, ranges: [{ first: instance, last: instance }] });
      }
      setActionError(null);
      live.reload();
    } catch (e) {
      setActionError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
    }
  };
  const d = live.data;
  const ended = d ? TERMINAL.has(d.task.task.state) : true;
  const mayAct = !!d && mayActOnJob(who, d.job.pool, d.job.owner, d.job.owner_group ?? "");
  return (
    <section>
      <h1>
        Task <Link href={`/jobs/${job}`}>{job}</Link>/{instance}{" "}
        {d && <Badge state={d.task.task.state} />}
      </h1>
      <Stale live={live.live} />
      <ErrorBox error={live.error ?? actionError} />
      {d && (
        <>
          {mayAct && (
          <div class="actions">
            {!ended && (
              <button type="button" class="danger" onClick={() => setPending("kill")}>
                Kill instance
              </button>
            )}
            <button type="button" onClick={() => setPending("restart")}>
              Restart instance
            </button>
          </div>
          )}
          <p class="facts">
            {d.task.task.role && <>role {d.task.task.role} · </>}
            run {d.task.task.run}
            {(d.task.task.gang_attempt ?? 0) > 0 && <> · gang attempt {d.task.task.gang_attempt}</>} · host{" "}
            {d.task.task.host || "—"} · failures {d.task.task.failures}
            {d.task.task.health && <> · health {d.task.task.health}</>}
          </p>
          {d.task.task.pending_reason && (
            <div class="pending-reason" role="note">
              <strong>Why waiting:</strong> {d.task.task.pending_reason}
            </div>
          )}
          <h2>Logs</h2>
          {logsRun(d.task) > 0 ? (
            <Logs job={job} instance={instance} run={logsRun(d.task)} />
          ) : (
            <p class="hint" data-no-run>
              No run yet: the task has not been placed on a host, so it has no logs.
            </p>
          )}
          <h2>Runs</h2>
          <table>
            <thead>
              <tr>
                <th class="num">run</th>
                <th>host</th>
                <th>started</th>
                <th>finished</th>
                <th>final state</th>
                <th>reason</th>
              </tr>
            </thead>
            <tbody>
              {(d.task.runs ?? []).map((r) => (
                <tr key={r.run}>
                  <td class="num">{r.run}</td>
                  <td>{r.host}</td>
                  <td>{time(r.started_at_unix_ms)}</td>
                  <td>{time(r.finished_at_unix_ms)}</td>
                  <td>
                    {r.final_state && r.final_state !== "STATE_UNSPECIFIED" ? (
                      <Badge state={r.final_state} />
                    ) : (
                      "live"
                    )}
                  </td>
                  <td>
                    {r.reason} {r.message}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Events</h2>
          <table class="events">
            <thead>
              <tr>
                <th>time</th>
                <th class="num">run</th>
                <th>state</th>
                <th>host</th>
                <th>reason</th>
                <th>message</th>
              </tr>
            </thead>
            <tbody>
              {d.events.map((e, i) => (
                <tr key={i}>
                  <td>{time(e.at_unix_ms)}</td>
                  <td class="num">{e.run}</td>
                  <td>
                    <Badge state={e.state} />
                  </td>
                  <td>{e.host}</td>
                  <td>{e.reason}</td>
                  <td>{e.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <Confirm
        open={pending !== null}
        title={pending === "kill" ? `Kill instance ${job}/${instance}?` : `Restart instance ${job}/${instance}?`}
        action={pending === "kill" ? "Kill" : "Restart"}
        onConfirm={act}
        onCancel={() => setPending(null)}
      >
        {pending === "kill" && "Its run is stopped and it stays KILLED until it is restarted."}
        {pending === "restart" && "It starts a new run; a live run is killed first."}
      </Confirm>
    </section>
  );
}
