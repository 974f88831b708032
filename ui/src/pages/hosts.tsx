// Hosts: capacity, allocation, state (up, draining, down, lost, reconnecting), labels, tasks;
// drain, down and up, each after a confirmation. 100 per page, filtered by name and state (in
// the URL); the list is read again every 2 s.
import { useEffect, useState } from "preact/hooks";
import { ApiError, HostInfo, call, num } from "../api";
import { Badge, Bar, Confirm, ErrorBox } from "../components/ui";
import { ago, bytes, cores } from "../format";
import { useQueryState } from "../url_state";

type Action = "DrainHost" | "DownHost" | "UpHost";
const VERB: Record<Action, string> = { DrainHost: "Drain", DownHost: "Down", UpHost: "Up" };
const WHAT: Record<Action, string> = {
  DrainHost: "No new task is placed on it; its tasks are moved off as their jobs allow.",
  DownHost: "Its tasks are killed and it takes no work until it is brought up.",
  UpHost: "It takes work again.",
};

const PAGE = 100;

export function Hosts() {
  const [q, set] = useQueryState("/hosts");
  const name = q.get("name") ?? "";
  const stateFilter = q.get("state") ?? "";
  const page = Math.max(0, Number(q.get("page") ?? 0) || 0);
  const [hosts, setHosts] = useState<HostInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<{ host: string; action: Action } | null>(null);
  const load = () =>
    call<{ hosts?: HostInfo[] }>("HostService", "ListHosts").then(
      (r) => {
        setHosts(r.hosts ?? []);
      },
      (e) => setError(e.message),
    );
  useEffect(() => {
    void load();
    const t = window.setInterval(load, 2000);
    return () => window.clearInterval(t);
  }, []);
  const act = async () => {
    if (!pending) return;
    const { host, action } = pending;
    setPending(null);
    try {
      await call("HostService", action, { host });
      setError(null);
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
    }
  };
  const matching = (hosts ?? []).filter(
    (h) => h.name.includes(name) && (!stateFilter || h.state === stateFilter),
  );
  const shown = matching.slice(page * PAGE, (page + 1) * PAGE);
  const states = [...new Set((hosts ?? []).map((h) => h.state))].sort();
  return (
    <section>
      <h1>Hosts</h1>
      <ErrorBox error={error} />
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          name
          <input
            name="name"
            value={name}
            placeholder="part of the name"
            onChange={(e) => set("name", (e.target as HTMLInputElement).value.trim())}
          />
        </label>
        <label>
          state
          <select
            name="state"
            value={stateFilter}
            onChange={(e) => set("state", (e.target as HTMLSelectElement).value)}
          >
            <option value="">any</option>
            {states.map((st) => (
              <option key={st}>{st}</option>
            ))}
          </select>
        </label>
      </form>
      <p class="hint">
        {matching.length === 0
          ? "no host matches"
          : `hosts ${page * PAGE + 1}–${page * PAGE + shown.length} of ${matching.length}`}
      </p>
      <table>
        <thead>
          <tr>
            <th>host</th>
            <th>state</th>
            <th class="wide">cpu</th>
            <th class="wide">memory</th>
            <th class="num">gpu</th>
            <th class="num">tasks</th>
            <th>labels</th>
            <th>last seen</th>
            <th>actions</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((h) => (
            <tr key={h.name} data-host={h.name}>
              <th scope="row">{h.name}</th>
              <td>
                <Badge state={h.state} />
                {h.maintenance !== "UP" && h.maintenance !== h.state && (
                  <div class="hint">{h.maintenance}</div>
                )}
              </td>
              <td class="wide">
                <Bar
                  value={num(h.allocated?.cpu_milli)}
                  max={num(h.capacity?.cpu_milli)}
                  label={`cpu ${cores(h.allocated?.cpu_milli ?? 0)} of ${cores(h.capacity?.cpu_milli ?? 0)}`}
                />
                <span class="hint">
                  {cores(h.allocated?.cpu_milli ?? 0)} / {cores(h.capacity?.cpu_milli ?? 0)}
                </span>
              </td>
              <td class="wide">
                <Bar
                  value={num(h.allocated?.memory_bytes)}
                  max={num(h.capacity?.memory_bytes)}
                  label={`memory ${bytes(h.allocated?.memory_bytes ?? 0)} of ${bytes(h.capacity?.memory_bytes ?? 0)}`}
                />
                <span class="hint">
                  {bytes(h.allocated?.memory_bytes ?? 0)} / {bytes(h.capacity?.memory_bytes ?? 0)}
                </span>
              </td>
              <td class="num">{cores(h.capacity?.gpu_milli ?? 0)}</td>
              <td class="num">{h.tasks}</td>
              <td>
                {Object.entries(h.labels ?? {}).map(([k, v]) => (
                  <span class="label" key={k}>
                    {k}={v}
                  </span>
                ))}
              </td>
              <td>{ago(h.last_seen_unix_ms)}</td>
              <td class="actions">
                {(["DrainHost", "DownHost", "UpHost"] as Action[])
                  .filter((a) => (a === "UpHost") === (h.maintenance !== "UP"))
                  .map((a) => (
                    <button key={a} type="button" onClick={() => setPending({ host: h.name, action: a })}>
                      {VERB[a]}
                    </button>
                  ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav class="pager" aria-label="pages">
        {page > 0 && (
          <button type="button" onClick={() => set("page", String(page - 1))}>
            ← Previous
          </button>
        )}
        {(page + 1) * PAGE < matching.length && (
          <button type="button" onClick={() => set("page", String(page + 1))}>
            Next →
          </button>
        )}
      </nav>
      <Confirm
        open={pending !== null}
        title={pending ? `${VERB[pending.action]} ${pending.host}?` : ""}
        action={pending ? VERB[pending.action] : ""}
        onConfirm={act}
        onCancel={() => setPending(null)}
      >
        {pending && WHAT[pending.action]}
      </Confirm>
    </section>
  );
}
