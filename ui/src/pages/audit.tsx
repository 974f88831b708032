// The audit log (AccessService/ListAudit, admins only): every mutation and every refusal, newest
// first, filtered by user, pool (and below), verb and refusals only; the filters are in the URL.
// The master filters by user and pool; the verb (a part of the action, e.g. "KillJob" or
// "JobService") and "refusals only" (an outcome other than OK) are applied here to the pages the
// master returns: the page reads on (up to 10 pages of 500 entries at a time) until it has 100
// matching entries or the log ends, and "Older" continues from where it stopped.
import { useEffect, useState } from "preact/hooks";
import { ApiError, Int, call } from "../api";
import { Badge, ErrorBox, FilterInput } from "../components/ui";
import { time } from "../format";
import { useQueryState } from "../url_state";

export interface AuditEntry {
  seq: Int;
  at_unix_ms: Int;
  user: string;
  source: string;
  action: string;
  pool: string;
  target: string;
  outcome: string;
  message: string;
  request_id: string;
}
interface ListAuditResponse {
  entries?: AuditEntry[];
  next_page_token: string;
}

const SHOWN = 100; // matching entries per page
const READ = 500; // entries asked of the master at a time
const READS = 10; // at most this many reads per page

interface Found {
  entries: AuditEntry[];
  read: number; // entries read from the master for this page
  next: string; // where the next page starts; "" at the log's end
}

export function Audit() {
  const [q, set] = useQueryState("/audit");
  const user = q.get("user") ?? "";
  const pool = q.get("pool") ?? "";
  const verb = q.get("verb") ?? "";
  const refused = q.get("refused") === "1";
  const from = q.get("page") ?? "";
  const [found, setFound] = useState<Found | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let gone = false;
    setFound(null);
    const matches = (e: AuditEntry) =>
      (!refused || e.outcome !== "OK") &&
      (verb === "" || e.action.toLowerCase().includes(verb.toLowerCase()));
    (async () => {
      const entries: AuditEntry[] = [];
      let token = from;
      let read = 0;
      for (let i = 0; i < READS && entries.length < SHOWN; i++) {
        const r = await call<ListAuditResponse>("AccessService", "ListAudit", {
          user,
          pool,
          page_size: READ,
          page_token: token,
        });
        const page = r.entries ?? [];
        read += page.length;
        for (const e of page) if (matches(e)) entries.push(e);
        token = r.next_page_token;
        if (!token) break;
      }
      // More than a page matched: the next page starts after the last entry shown.
      if (entries.length > SHOWN) {
        entries.length = SHOWN;
        token = String(entries[SHOWN - 1].seq);
      }
      if (!gone) setFound({ entries, read, next: token });
    })().then(
      () => !gone && setError(null),
      (e) => !gone && setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e)),
    );
    return () => {
      gone = true;
    };
  }, [user, pool, verb, refused, from]);
  return (
    <section>
      <h1>Audit log</h1>
      <ErrorBox error={error} />
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <FilterInput name="user" value={user} placeholder="exactly this user" onCommit={(v) => set("user", v)} />
        <FilterInput name="pool" value={pool} placeholder="/team (and below)" onCommit={(v) => set("pool", v)} />
        <FilterInput name="verb" value={verb} placeholder="e.g. KillJob" onCommit={(v) => set("verb", v)} />
        <label>
          <input
            type="checkbox"
            name="refused"
            checked={refused}
            onChange={(e) => set("refused", (e.target as HTMLInputElement).checked ? "1" : "")}
          />{" "}
          refusals only
        </label>
      </form>
      <p class="hint" data-audit-summary>
        {found === null
          ? "loading…"
          : `${found.entries.length} ${found.entries.length === 1 ? "entry" : "entries"} shown of ${found.read} read${found.next ? "" : " · the log's beginning"}`}
      </p>
      <table class="audit">
        <thead>
          <tr>
            <th class="num">seq</th>
            <th>time</th>
            <th>user</th>
            <th>source</th>
            <th>action</th>
            <th>pool</th>
            <th>target</th>
            <th>outcome</th>
            <th>message</th>
          </tr>
        </thead>
        <tbody>
          {(found?.entries ?? []).map((e) => (
            <tr key={String(e.seq)} data-audit={String(e.seq)} data-outcome={e.outcome}>
              <td class="num">{String(e.seq)}</td>
              <td>{time(e.at_unix_ms)}</td>
              <td class="user">{e.user}</td>
              <td>{e.source}</td>
              <td class="action">{e.action}</td>
              <td class="pool">{e.pool}</td>
              <td>{e.target}</td>
              <td class="outcome">
                {e.outcome === "OK" ? "OK" : <Badge state={e.outcome} />}
              </td>
              <td>{e.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav class="pager" aria-label="pages">
        {from && (
          <button type="button" onClick={() => set("page", "")}>
            ⇤ Newest
          </button>
        )}
        {found?.next && (
          <button type="button" onClick={() => set("page", found.next)}>
            Older →
          </button>
        )}
      </nav>
    </section>
  );
}
