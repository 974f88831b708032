// Archived jobs (JobService/QueryArchive and GetArchivedJob): the jobs retired from the live
// store after their pool's retention (docs/operations.md "Retention and archive"), read from the
// master's archive files. The list: jobs that finished in a window (the last day, week, month or
// year), in a pool and below, oldest first, 100 a page; the filters and the page are in the URL.
// A page starts at the finish time of the previous page's last job and leaves out the jobs of
// that instant it already showed (`skip`). One job: what it was, its spec, each instance's last
// run and every event.
import { useEffect, useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import { ApiError, call } from "../api";
import { Badge, ErrorBox, FilterInput } from "../components/ui";
import { YamlView } from "../components/yaml_view";
import { time } from "../format";
import { useQueryState } from "../url_state";

// A job's line of the archive (the fields the pages read).
interface ArchivedTask {
  instance: number;
  run: number;
  state: string;
  host: string;
  started_at: string;
  finished_at: string;
  exit_code: number;
  signal: number;
  reason: string;
  message: string;
}
interface ArchivedEvent {
  instance: number;
  run: number;
  at: string;
  state: string;
  host: string;
  reason: string;
  message: string;
}
interface ArchivedJob {
  job_id: number;
  pool: string;
  name: string;
  type: string;
  state: string;
  owner: string;
  created_at: string;
  finished_at: string;
  archived_at: string;
  version: number;
  instances: number;
  spec?: string;
  tasks?: ArchivedTask[];
  events?: ArchivedEvent[];
}

const PAGE = 100;
const WINDOWS: Record<string, number> = { "1d": 1, "7d": 7, "30d": 30, "365d": 365 };
const DAY_MS = 86400 * 1000;
// An RFC 3339 time of the archive as Unix milliseconds (0 when absent).
const ms = (t: string | undefined) => (t ? Date.parse(t) || 0 : 0);

function message(e: unknown): string {
  return e instanceof ApiError ? `${e.code}: ${e.message}` : String(e);
}

export function Archive() {
  const [q] = useQueryState("/archive");
  const [, navigate] = useLocation();
  // A new filter starts again from the first page.
  const set = (key: string, value: string) => {
    const n = new URLSearchParams(q);
    n.delete("from");
    n.delete("skip");
    if (value) n.set(key, value);
    else n.delete(key);
    navigate(n.toString() ? `/archive?${n.toString()}` : "/archive");
  };
  const pool = q.get("pool") ?? "";
  const span = q.get("since") ?? "7d";
  const from = Number(q.get("from") ?? 0); // a page after the first: where it starts
  const skip = q.get("skip") ?? ""; // job ids finished at `from` shown on the previous page
  const [page, setPage] = useState<{ jobs: ArchivedJob[]; truncated: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let gone = false;
    setPage(null);
    const since = from || Date.now() - (WINDOWS[span] ?? 7) * DAY_MS;
    const shown = new Set(skip.split(",").filter((s) => s !== ""));
    call<{ jobs?: string[]; truncated: boolean }>("JobService", "QueryArchive", {
      since_unix_ms: since,
      pool,
      limit: PAGE + shown.size,
    }).then(
      (r) => {
        if (gone) return;
        const jobs = (r.jobs ?? [])
          .map((line) => JSON.parse(line) as ArchivedJob)
          .filter((j) => !(ms(j.finished_at) === from && shown.has(String(j.job_id))));
        setPage({ jobs, truncated: r.truncated });
        setError(null);
      },
      (e) => !gone && setError(message(e)),
    );
    return () => {
      gone = true;
    };
  }, [pool, span, from, skip]);
  const jobs = page?.jobs ?? [];
  const next = () => {
    const last = ms(jobs[jobs.length - 1].finished_at);
    const same = jobs.filter((j) => ms(j.finished_at) === last).map((j) => j.job_id);
    const n = new URLSearchParams(q);
    n.set("from", String(last));
    n.set("skip", same.join(","));
    navigate(`/archive?${n.toString()}`);
  };
  return (
    <section>
      <h1>History</h1>
      <p class="hint">
        Jobs retired from the live store after their pool's retention, from the master's archive.
      </p>
      <ErrorBox error={error} />
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <FilterInput name="pool" value={pool} placeholder="/team (and below)" onCommit={(v) => set("pool", v)} />
        <label>
          finished in the last
          <select name="since" value={span} onChange={(e) => set("since", (e.target as HTMLSelectElement).value)}>
            <option value="1d">day</option>
            <option value="7d">week</option>
            <option value="30d">month</option>
            <option value="365d">year</option>
          </select>
        </label>
      </form>
      <p class="hint">
        {page === null ? "loading…" : jobs.length === 0 ? "no archived job" : `${jobs.length} archived ${jobs.length === 1 ? "job" : "jobs"}, by finish time`}
      </p>
      <table class="archive">
        <thead>
          <tr>
            <th class="num">id</th>
            <th>name</th>
            <th>type</th>
            <th>pool</th>
            <th>state</th>
            <th class="num">instances</th>
            <th>owner</th>
            <th>finished</th>
            <th>archived</th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((j) => (
            <tr key={j.job_id} data-archived-job={j.job_id}>
              <td class="num">
                <Link href={`/archive/${j.job_id}`}>{j.job_id}</Link>
              </td>
              <td>{j.name}</td>
              <td>{j.type}</td>
              <td>{j.pool}</td>
              <td>
                <Badge state={j.state} />
              </td>
              <td class="num">{j.instances}</td>
              <td>{j.owner}</td>
              <td>{time(ms(j.finished_at))}</td>
              <td>{time(ms(j.archived_at))}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav class="pager" aria-label="pages">
        {from > 0 && (
          <button type="button" onClick={() => history.back()}>
            ← Back
          </button>
        )}
        {page?.truncated && jobs.length > 0 && (
          <button type="button" onClick={next}>
            Later →
          </button>
        )}
      </nav>
    </section>
  );
}

export function ArchivedJobPage({ id }: { id: number }) {
  const [job, setJob] = useState<ArchivedJob | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let gone = false;
    call<{ json: string }>("JobService", "GetArchivedJob", { job_id: id }).then(
      (r) => !gone && setJob(JSON.parse(r.json) as ArchivedJob),
      (e) => !gone && setError(message(e)),
    );
    return () => {
      gone = true;
    };
  }, [id]);
  if (!job) {
    return (
      <section>
        <h1>Archived job {id}</h1>
        <ErrorBox error={error} />
        {error && (
          <p>
            <Link href={`/jobs/${id}`}>Job {id} in the live store</Link>
          </p>
        )}
      </section>
    );
  }
  const events = job.events ?? [];
  return (
    <section>
      <h1>
        Archived job {id}: {job.name} <Badge state={job.state} />
      </h1>
      <p class="facts">
        {job.type} · pool {job.pool} · {job.instances} instances · version {job.version} · owner{" "}
        {job.owner || "—"} · created {time(ms(job.created_at))} · finished {time(ms(job.finished_at))} ·
        archived {time(ms(job.archived_at))}
      </p>
      {job.spec && (
        <details>
          <summary>Spec (version {job.version})</summary>
          <YamlView text={job.spec} label={`spec of archived job ${id}`} />
        </details>
      )}
      <h2>Instances</h2>
      <table class="tasks">
        <thead>
          <tr>
            <th class="num">instance</th>
            <th class="num">run</th>
            <th>state</th>
            <th>host</th>
            <th>started</th>
            <th>finished</th>
            <th class="num">exit</th>
            <th>reason</th>
          </tr>
        </thead>
        <tbody>
          {(job.tasks ?? []).map((t) => (
            <tr key={t.instance} data-instance={t.instance}>
              <td class="num">{t.instance}</td>
              <td class="num">{t.run}</td>
              <td>
                <Badge state={t.state} />
              </td>
              <td>{t.host}</td>
              <td>{time(ms(t.started_at))}</td>
              <td>{time(ms(t.finished_at))}</td>
              <td class="num exit">{t.signal ? `signal ${t.signal}` : t.exit_code}</td>
              <td>
                {t.reason} {t.message}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <details>
        <summary>Events ({events.length})</summary>
        <table class="events">
          <thead>
            <tr>
              <th>time</th>
              <th class="num">instance</th>
              <th class="num">run</th>
              <th>state</th>
              <th>host</th>
              <th>reason</th>
              <th>message</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e, i) => (
              <tr key={i}>
                <td>{time(ms(e.at))}</td>
                <td class="num">{e.instance}</td>
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
      </details>
    </section>
  );
}
