// Hosts: address, capacity, allocation, GPU devices and who shares them, the images cached
// (container images, as the agent reported them), state (up, draining, down, lost,
// reconnecting), labels, tasks; drain, down and up, each after a confirmation. The
// master filters (by name and state) and pages (100 by name): the filters and the page are in
// the URL. The page is read again every 2 s. Only an admin is offered the actions.
import { useEffect, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { isAdmin, useWhoAmI } from "../access";
import { ApiError, HostInfo, ListHostsResponse, call, num } from "../api";
import { Badge, Bar, Confirm, ErrorBox, FilterInput, FilterSelect } from "../components/ui";
import { ago, bytes, cores, time } from "../format";
import { useQueryState } from "../url_state";

type Action = "DrainHost" | "DownHost" | "UpHost";
const VERB: Record<Action, string> = { DrainHost: "Drain", DownHost: "Down", UpHost: "Up" };
const WHAT: Record<Action, string> = {
  DrainHost: "No new task is placed on it; its tasks are moved off as their jobs allow.",
  DownHost: "Its tasks are killed and it takes no work until it is brought up.",
  UpHost: "It takes work again.",
};

const PAGE = 100;
const STATES = ["UP", "DRAINING", "DRAINED", "DOWN", "LOST", "RECONNECTING"];

// A host's GPU devices: one small bar each, titled with the tasks that share it.
function Gpus({ host }: { host: HostInfo }) {
  const gpus = host.gpus ?? [];
  if (gpus.length === 0) return <span class="hint">—</span>;
  return (
    <ul class="gpus" aria-label={`GPU devices of ${host.name}`}>
      {gpus.map((g) => {
        const holders = (g.holders ?? []).map((h) => ({
          task: `${num(h.job_id)}/${h.instance}`,
          share: h.milli / 1000,
        }));
        const label =
          `GPU ${g.index} (${g.model}): ${g.milli_allocated / 1000} allocated` +
          (holders.length ? ` to ${holders.map((h) => `${h.task} (${h.share})`).join(", ")}` : "") +
          (g.fault ? `; unhealthy: ${g.fault.reason}` : "");
        return (
          <li key={g.index} data-gpu={g.index} data-unhealthy={g.fault ? "true" : undefined}>
            <Bar value={g.milli_allocated} max={1000} label={label} />
            <span class="hint">
              {g.index}: {g.model}{" "}
              {g.fault && (
                <span class="bad" title={`since ${time(g.fault.since_unix_ms)}`}>
                  unhealthy: {g.fault.reason}{" "}
                </span>
              )}
              {holders.map((h, i) => (
                <span key={h.task}>
                  {i > 0 && ", "}
                  <Link href={`/jobs/${h.task.split("/")[0]}/tasks/${h.task.split("/")[1]}`}>{h.task}</Link>
                  {h.share < 1 && <> ×{h.share}</>}
                </span>
              ))}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

// A host's image cache: how many images, and each one's references, size, the running tasks
// that use it and when it was last used.
function Images({ host }: { host: HostInfo }) {
  const images = host.images ?? [];
  if (images.length === 0) return <span class="hint">—</span>;
  return (
    <details class="images">
      <summary>
        {images.length} {images.length === 1 ? "image" : "images"},{" "}
        {bytes(images.reduce((n, i) => n + num(i.size_bytes), 0))}
      </summary>
      <ul aria-label={`images cached on ${host.name}`}>
        {images.map((i) => (
          <li key={i.config_digest} data-image={i.config_digest}>
            <span class="refs">{(i.refs ?? []).join(", ") || i.config_digest.slice(0, 19)}</span>
            <span class="hint">
              {" "}
              {bytes(i.size_bytes)} · {i.tasks} running {i.tasks === 1 ? "task" : "tasks"} · used{" "}
              {ago(i.last_used_unix_ms)}
            </span>
          </li>
        ))}
      </ul>
    </details>
  );
}

export function Hosts() {
  const [q, set] = useQueryState("/hosts");
  const name = q.get("name") ?? "";
  const stateFilter = q.get("state") ?? "";
  const after = q.get("page") ?? ""; // the last host of the previous page
  const [resp, setResp] = useState<ListHostsResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<{ host: string; action: Action } | null>(null);
  const admin = isAdmin(useWhoAmI());
  const load = () =>
    call<ListHostsResponse>("HostService", "ListHosts", {
      name_contains: name,
      state: stateFilter,
      page_size: PAGE,
      page_token: after,
    }).then(
      (r) => {
        setResp(r);
        setError(null);
      },
      (e) => setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e)),
    );
  useEffect(() => {
    void load();
    const t = window.setInterval(load, 2000);
    return () => window.clearInterval(t);
  }, [name, stateFilter, after]);
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
  const shown = resp?.hosts ?? [];
  const matching = resp?.matching ?? 0;
  const offset = resp?.offset ?? 0;
  return (
    <section>
      <h1>Hosts</h1>
      <ErrorBox error={error} />
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <FilterInput name="name" value={name} placeholder="part of the name" onCommit={(v) => set("name", v)} />
        <FilterSelect
          name="state"
          value={stateFilter}
          options={STATES.map((st) => [st, `${st} (${resp?.states[st] ?? 0})`] as const)}
          onCommit={(v) => set("state", v)}
        />
      </form>
      <p class="hint">
        {resp === null
          ? "loading…"
          : matching === 0
            ? "no host matches"
            : `hosts ${offset + 1}–${offset + shown.length} of ${matching}`}
      </p>
      <table>
        <thead>
          <tr>
            <th>host</th>
            <th>address</th>
            <th>state</th>
            <th class="wide">cpu</th>
            <th class="wide">memory</th>
            <th>gpus</th>
            <th class="num">tasks</th>
            <th>images</th>
            <th>labels</th>
            <th>last seen</th>
            {admin && <th>actions</th>}
          </tr>
        </thead>
        <tbody>
          {shown.map((h) => (
            <tr key={h.name} data-host={h.name}>
              <th scope="row">{h.name}</th>
              <td class="address">{h.address || <span class="hint">—</span>}</td>
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
              <td class="gpu-cell">
                <Gpus host={h} />
              </td>
              <td class="num">{h.tasks}</td>
              <td class="images-cell">
                <Images host={h} />
              </td>
              <td>
                {Object.entries(h.labels ?? {}).map(([k, v]) => (
                  <span class="label" key={k}>
                    {k}={v}
                  </span>
                ))}
              </td>
              <td>{ago(h.last_seen_unix_ms)}</td>
              {admin && (
                <td class="actions">
                  {(["DrainHost", "DownHost", "UpHost"] as Action[])
                    .filter((a) => (a === "UpHost") === (h.maintenance !== "UP"))
                    .map((a) => (
                      <button key={a} type="button" onClick={() => setPending({ host: h.name, action: a })}>
                        {VERB[a]}
                      </button>
                    ))}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <nav class="pager" aria-label="pages">
        {after && (
          <button type="button" onClick={() => set("page", "")}>
            ⇤ First
          </button>
        )}
        {resp?.next_page_token && (
          <button type="button" onClick={() => set("page", resp.next_page_token)}>
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
