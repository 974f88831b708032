// Jobs: filters in the URL (shareable, the back button works), a page of 50 at a time from
// QueryJobs, counts per task state patched live from the Watch stream.
import { Link } from "wouter-preact";
import { maySubmit, useWhoAmI } from "../access";
import { JobSummary, call, num } from "../api";
import { Badge, ErrorBox, FilterInput, FilterSelect, Stale } from "../components/ui";
import { JOB_STATES, TASK_STATES, time } from "../format";
import { useLive } from "../live";
import { useQueryState } from "../url_state";

const PAGE = 50;
const TYPES = ["batch", "service", "stateful", "daemon"];
// "created within": the URL's value and its length in ms.
const SINCE: Record<string, number> = { "1h": 3600e3, "24h": 86400e3, "7d": 7 * 86400e3 };
interface Page {
  jobs: JobSummary[];
  next: string;
}

export function Jobs() {
  const [q, set] = useQueryState("/jobs");
  const submitter = maySubmit(useWhoAmI(), "");
  const filter = {
    pool: q.get("pool") ?? "",
    state: q.get("state") ?? "",
    owner: q.get("owner") ?? "",
    name: q.get("name") ?? "",
    label: q.get("label") ?? "",
    type: q.get("type") ?? "",
    since: q.get("since") ?? "",
    page: q.get("page") ?? "",
  };
  const jobs = useLive<Page>(
    0,
    async () => {
      const labels: Record<string, string> = {};
      if (filter.label.includes("=")) {
        const [k, ...v] = filter.label.split("=");
        labels[k] = v.join("=");
      }
      const r = await call<{ jobs?: JobSummary[]; next_page_token: string }>(
        "JobService",
        "QueryJobs",
        {
          pool: filter.pool,
          states: filter.state ? [filter.state] : [],
          types: filter.type ? [filter.type] : [],
          created_after_unix_ms: SINCE[filter.since] ? Date.now() - SINCE[filter.since] : 0,
          owner: filter.owner,
          name: filter.name,
          labels,
          page_size: PAGE,
          page_token: filter.page,
        },
      );
      return { jobs: r.jobs ?? [], next: r.next_page_token };
    },
    (p, e) => {
      if (!e.job) return p;
      const id = num(e.job_id);
      if (!p.jobs.some((j) => num(j.id) === id)) return p;
      return {
        ...p,
        jobs: p.jobs.map((j) =>
          num(j.id) === id ? { ...j, state: e.job!.state, task_counts: e.job!.task_counts } : j,
        ),
      };
    },
    [q.toString()],
  );
  return (
    <section>
      <h1>
        Jobs{" "}
        {submitter && (
          <Link href="/jobs/new" class="button">
            Create a job
          </Link>
        )}
      </h1>
      <Stale live={jobs.live} />
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        {(["pool", "owner", "name", "label"] as const).map((k) => (
          <FilterInput
            key={k}
            name={k}
            value={filter[k]}
            placeholder={k === "label" ? "key=value" : k === "pool" ? "/path" : ""}
            onCommit={(v) => set(k, v)}
          />
        ))}
        <FilterSelect name="state" value={filter.state} options={JOB_STATES} onCommit={(v) => set("state", v)} />
        <FilterSelect name="type" value={filter.type} options={TYPES} onCommit={(v) => set("type", v)} />
        <label>
          created
          <select name="since" value={filter.since} onChange={(e) => set("since", (e.target as HTMLSelectElement).value)}>
            <option value="">any time</option>
            {Object.keys(SINCE).map((k) => (
              <option key={k} value={k}>
                within {k}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBox error={jobs.error} />
      <table class="jobs">
        <thead>
          <tr>
            <th class="num">id</th>
            <th>name</th>
            <th>pool</th>
            <th>type</th>
            <th>state</th>
            <th>tasks</th>
            <th>owner</th>
            <th>created</th>
          </tr>
        </thead>
        <tbody>
          {jobs.data?.jobs.map((j) => (
            <tr key={String(j.id)} data-job={String(j.id)}>
              <td class="num">
                <Link href={`/jobs/${num(j.id)}`}>{num(j.id)}</Link>
              </td>
              <td>
                <Link href={`/jobs/${num(j.id)}`}>{j.name}</Link>
              </td>
              <td>{j.pool}</td>
              <td>{j.type}</td>
              <td>
                <Badge state={j.state} />
              </td>
              <td class="task-counts">
                {TASK_STATES.filter((s) => j.task_counts?.[s]).map((s) => (
                  <span key={s} class={`count s-${s.toLowerCase()}`} title={s}>
                    {j.task_counts[s]} {s.toLowerCase()}
                  </span>
                ))}
              </td>
              <td>{j.owner}</td>
              <td>{time(j.created_at_unix_ms)}</td>
            </tr>
          ))}
          {jobs.data && jobs.data.jobs.length === 0 && (
            <tr>
              <td colSpan={8}>no job matches</td>
            </tr>
          )}
        </tbody>
      </table>
      <nav class="pager" aria-label="pages">
        {filter.page && (
          <button type="button" onClick={() => history.back()}>
            ← Previous
          </button>
        )}
        {jobs.data?.next && (
          <button type="button" onClick={() => set("page", jobs.data!.next)}>
            Next →
          </button>
        )}
      </nav>
    </section>
  );
}
