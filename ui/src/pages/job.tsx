// A job: its state and counts, its roles and gang, why its waiting instances wait, its spec, its
// update's progress (pause, resume, abort, roll back), a service's endpoints, and the instance
// table (filtered by state; each instance's role and gang attempt), all live; every action after
// a confirmation.
import { useEffect, useRef, useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import { ApiError, GetJobResponse, JobGang, JobRole, TaskInfo, UpdateInfo, call, num } from "../api";
import { mayActOnJob, useWhoAmI } from "../access";
import { Endpoints } from "../components/endpoints";
import { Badge, Bar, Confirm, ErrorBox, Stale } from "../components/ui";
import { YamlView } from "../components/yaml_view";
import { TASK_STATES, time } from "../format";
import { useLive } from "../live";

interface Data {
  job: GetJobResponse;
  tasks: TaskInfo[];
  version: number; // the job's version in the last event: a new one (an update) reads again
}

type Action = "KillJob" | "RestartJob" | "DeleteJob" | "PauseUpdate" | "ResumeUpdate" | "AbortUpdate" | "RollbackJob";
const VERB: Record<Action, string> = {
  KillJob: "Kill",
  RestartJob: "Restart",
  DeleteJob: "Delete",
  PauseUpdate: "Pause update",
  ResumeUpdate: "Resume update",
  AbortUpdate: "Abort update",
  RollbackJob: "Roll back",
};

const TERMINAL = new Set(["SUCCEEDED", "FAILED", "KILLED", "LOST"]);
const UPDATE_ENDED = new Set(["SUCCEEDED", "ABORTED", "FAILED", "ROLLED_BACK"]);

// A job's latest update: its state, how far it got, what failed.
function UpdateProgress({ u }: { u: UpdateInfo }) {
  const total = Math.max(u.total, 1);
  return (
    <div class="update" role="group" aria-label={`update ${num(u.id)}`}>
      <p class="facts">
        Update {num(u.id)}: <Badge state={u.state} /> {u.paused && <Badge state="PAUSED" />} version{" "}
        {num(u.from_version)} → {num(u.to_version)} · batches of {u.batch_size} · started{" "}
        {time(u.started_at_unix_ms)}
        {num(u.finished_at_unix_ms) > 0 && <> · finished {time(u.finished_at_unix_ms)}</>}
      </p>
      <Bar value={u.done} max={total} label={`update: ${u.done} of ${u.total} instances done`} />
      <p class="hint" data-update-progress>
        {u.done} of {u.total} instances done · {u.in_flight} in flight · {u.failed} failed
        {(u.failed_instances ?? []).length > 0 && <> (instances {(u.failed_instances ?? []).join(", ")})</>}
        {u.message && <> · {u.message}</>}
      </p>
    </div>
  );
}

// "instance 0" or "instances 1–4".
function instanceRange(r: JobRole): string {
  const first = r.first_instance ?? 0;
  return r.instances === 1 ? `instance ${first}` : `instances ${first}–${first + r.instances - 1}`;
}

// A job's roles and how its gang meets, restarts and completes.
function Shape({ roles, gang, completion }: { roles: JobRole[]; gang?: JobGang; completion?: string }) {
  return (
    <>
      {roles.length > 0 && (
        <p class="facts" data-roles>
          Roles:{" "}
          {roles.map((r, k) => (
            <span key={r.name}>
              {k > 0 && " · "}
              <strong>{r.name}</strong> ({instanceRange(r)})
            </span>
          ))}
        </p>
      )}
      {(gang || completion === "instance-0") && (
        <p class="facts" data-gang>
          {gang && (
            <>
              Gang of {gang.size} · rendezvous {gang.rendezvous} ·{" "}
              {gang.restart === "gang"
                ? `restarts together, at most ${gang.max_restarts ?? 0} times`
                : "each member restarts alone"}
            </>
          )}
          {gang && completion === "instance-0" && " · "}
          {completion === "instance-0" && "done when instance 0 is done"}
        </p>
      )}
    </>
  );
}

export function Job({ id }: { id: number }) {
  const [, navigate] = useLocation();
  const [stateFilter, setStateFilter] = useState("");
  const [pending, setPending] = useState<Action | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const who = useWhoAmI();
  const live = useLive<Data>(
    id,
    async () => {
      const [job, tasks] = await Promise.all([
        call<GetJobResponse>("JobService", "GetJob", { job_id: id }),
        call<{ tasks?: TaskInfo[] }>("TaskService", "ListTasks", { job_id: id }),
      ]);
      return { job, tasks: tasks.tasks ?? [], version: num(job.job.version) };
    },
    (d, e) => {
      if (e.job) {
        return {
          ...d,
          job: {
            ...d.job,
            job: { ...d.job.job, state: e.job.state, task_counts: e.job.task_counts },
          },
          version: num(e.job.version),
        };
      }
      if (e.task) {
        const { instance, event } = e.task;
        return {
          ...d,
          tasks: d.tasks.map((t) =>
            t.instance === instance && event.run >= t.run
              ? {
                  ...t,
                  state: event.state,
                  run: event.run,
                  host: event.host || t.host,
                  reason: event.reason,
                  started_at_unix_ms: event.state === "RUNNING" ? event.at_unix_ms : t.started_at_unix_ms,
                  finished_at_unix_ms: TERMINAL.has(event.state) ? event.at_unix_ms : 0,
                }
              : t,
          ),
        };
      }
      return d;
    },
    [id],
  );
  // Why-pending comes from the scheduler's latest cycle, not from the event stream: ask again
  // while instances wait.
  // So does an update's progress; a new version (an update started) is read at once.
  const newVersion = !!live.data && live.data.version !== num(live.data.job.job.version);
  useEffect(() => {
    if (newVersion) live.reload();
  }, [newVersion]);
  const waiting = live.data?.tasks.some((t) => t.state === "PENDING" || t.state === "READY");
  const updating = !!live.data?.job.update && !UPDATE_ENDED.has(live.data.job.update.state);
  useEffect(() => {
    if (!waiting && !updating) return;
    const t = window.setInterval(live.reload, 2000);
    return () => window.clearInterval(t);
  }, [waiting, updating, id]);
  const act = async () => {
    const a = pending;
    setPending(null);
    if (!a) return;
    try {
      await call("JobService", a, { job_id: id });
      setActionError(null);
      if (a === "DeleteJob") return navigate("/jobs");
      live.reload();
    } catch (e) {
      setActionError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
    }
  };
  // Exit codes are not in the events: once the job has ended, read its instances again.
  const jobEnded = live.data ? TERMINAL.has(live.data.job.job.state) : false;
  const sawLive = useRef(false);
  useEffect(() => {
    if (live.data && !jobEnded) sawLive.current = true;
    if (jobEnded && sawLive.current) {
      sawLive.current = false;
      live.reload();
    }
  }, [jobEnded, live.data !== null]);
  const d = live.data;
  if (!d) {
    return (
      <section>
        <h1>Job {id}</h1>
        <ErrorBox error={live.error} />
        {live.error && (
          <p data-archive-link>
            A job that ended is retired from the live store after its pool's retention:{" "}
            <Link href={`/archive/${id}`}>job {id} in the archive</Link>.
          </p>
        )}
      </section>
    );
  }
  const j = d.job.job;
  const ended = jobEnded;
  const update = updating ? d.job.update : undefined;
  const shown = stateFilter ? d.tasks.filter((t) => t.state === stateFilter) : d.tasks;
  const roles = d.job.roles ?? [];
  const gangRestarts = d.job.gang?.restart === "gang";
  // Actions only for a caller the master would let act on the job (a viewer sees none).
  const mayAct = mayActOnJob(who, j.pool, j.owner, j.owner_group ?? "");
  return (
    <section>
      <h1>
        Job {id}: {j.name} <Badge state={j.state} />
      </h1>
      <Stale live={live.live} />
      <ErrorBox error={live.error ?? actionError} />
      <p class="facts">
        {j.type} · pool <Link href={j.pool === "/" ? "/pools" : `/pools${j.pool}`}>{j.pool}</Link> ·{" "}
        {j.instances} instances · version {num(j.version)} · priority {j.priority} · owner{" "}
        {j.owner || "—"} · created {time(j.created_at_unix_ms)}
      </p>
      {mayAct && (
      <div class="actions">
        {!ended && <button type="button" class="danger" onClick={() => setPending("KillJob")}>Kill</button>}
        <button type="button" onClick={() => setPending("RestartJob")}>Restart</button>
        {ended && <button type="button" class="danger" onClick={() => setPending("DeleteJob")}>Delete</button>}
        {update && !update.paused && (
          <button type="button" onClick={() => setPending("PauseUpdate")}>Pause update</button>
        )}
        {update?.paused && (
          <button type="button" onClick={() => setPending("ResumeUpdate")}>Resume update</button>
        )}
        {update && (
          <button type="button" class="danger" onClick={() => setPending("AbortUpdate")}>Abort update</button>
        )}
        {j.type !== "batch" && num(j.version) > 1 && (
          <button type="button" onClick={() => setPending("RollbackJob")}>Roll back</button>
        )}
      </div>
      )}
      <Shape roles={roles} gang={d.job.gang} completion={d.job.completion} />
      {d.job.pending_reason && (
        <div class="pending-reason" role="note">
          <strong>Why waiting:</strong> {d.job.pending_reason}
        </div>
      )}
      {d.job.update && <UpdateProgress u={d.job.update} />}
      <ul class="counts" aria-label="instances by state">
        {TASK_STATES.filter((s) => j.task_counts?.[s]).map((s) => (
          <li key={s}>
            <button
              type="button"
              class={`linklike ${stateFilter === s ? "active" : ""}`}
              aria-pressed={stateFilter === s}
              onClick={() => setStateFilter(stateFilter === s ? "" : s)}
            >
              <Badge state={s} /> <span class="num" data-state={s}>{j.task_counts[s]}</span>
            </button>
          </li>
        ))}
      </ul>
      {(j.type === "service" || j.type === "stateful") && <Endpoints jobId={id} />}
      <details>
        <summary>Spec (version {num(j.version)})</summary>
        <YamlView text={d.job.spec_yaml} label={`spec of job ${id}`} />
      </details>
      <h2>Instances {stateFilter && <>({stateFilter})</>}</h2>
      <table class="tasks">
        <thead>
          <tr>
            <th class="num">instance</th>
            {roles.length > 0 && <th>role</th>}
            <th>state</th>
            <th class="num">run</th>
            {gangRestarts && <th class="num" title="how many times its gang restarted together">gang attempt</th>}
            <th>host</th>
            <th>started</th>
            <th>finished</th>
            <th class="num">exit</th>
            <th>reason</th>
          </tr>
        </thead>
        <tbody>
          {shown.slice(0, 1000).map((t) => (
            <tr key={t.instance} data-instance={t.instance}>
              <td class="num">
                <Link href={`/jobs/${id}/tasks/${t.instance}`}>{t.instance}</Link>
              </td>
              {roles.length > 0 && <td class="role">{t.role}</td>}
              <td>
                <Badge state={t.state} />
              </td>
              <td class="num">{t.run}</td>
              {gangRestarts && <td class="num attempt">{t.gang_attempt ?? 0}</td>}
              <td>{t.host}</td>
              <td>{time(t.started_at_unix_ms)}</td>
              <td>{time(t.finished_at_unix_ms)}</td>
              <td class="num exit">{t.exit_code >= 0 ? t.exit_code : t.signal ? `sig ${t.signal}` : ""}</td>
              <td>{t.pending_reason || t.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {shown.length > 1000 && <p class="hint">The first 1,000 of {shown.length} shown; filter by state.</p>}
      <Confirm
        open={pending !== null}
        title={pending ? `${VERB[pending]} job ${id}?` : ""}
        action={pending ? VERB[pending] : ""}
        onConfirm={act}
        onCancel={() => setPending(null)}
      >
        {pending === "KillJob" && "Every live instance is killed; the job ends KILLED."}
        {pending === "RestartJob" && "Every instance starts a new run; live runs are killed first."}
        {pending === "DeleteJob" && "The job and its history are forgotten."}
        {pending === "PauseUpdate" && "No new batch starts until the update is resumed."}
        {pending === "ResumeUpdate" && "The update goes on with its next batch."}
        {pending === "AbortUpdate" && "The update stops where it is; changed instances keep the new version."}
        {pending === "RollbackJob" && "An update to the previous version starts."}
      </Confirm>
    </section>
  );
}
