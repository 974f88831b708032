// A service or stateful job's endpoints, live: each instance placed on a host, its address with
// each named port, and whether it takes traffic (or why not). Read from the WatchEndpoints
// stream of the JSON gateway (one JSON list a line, sent at once and on every change); a dropped
// stream is opened again after a backoff (1 s doubling to 15 s), and the table says it is stale
// meanwhile.
import { useEffect, useState } from "preact/hooks";
import { JobEndpoints, readJsonLines } from "../api";
import { token } from "../auth";
import { ErrorBox } from "./ui";

function useEndpoints(jobId: number): { data: JobEndpoints | null; error: string | null; live: boolean } {
  const [data, setData] = useState<JobEndpoints | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [live, setLive] = useState(false);
  useEffect(() => {
    setData(null);
    const controller = new AbortController();
    let timer: number | undefined;
    let stopped = false;
    const connect = async (backoff: number) => {
      try {
        const res = await fetch(`/api/v1/JobService/WatchEndpoints?job_id=${jobId}`, {
          headers: { Authorization: `Bearer ${token() ?? ""}` },
          signal: controller.signal,
        });
        if (!res.ok || !res.body) {
          const body = (await res.json().catch(() => ({}))) as { code?: string; message?: string };
          throw new Error(body.message ? `${body.code}: ${body.message}` : `endpoints: HTTP ${res.status}`);
        }
        await readJsonLines<JobEndpoints & { code?: string; message?: string }>(res.body, (e) => {
          if (e.code !== undefined) throw new Error(`${e.code}: ${e.message ?? ""}`);
          backoff = 1000;
          setData(e);
          setError(null);
          setLive(true);
          if (e.deleted) stopped = true;
        });
      } catch (e) {
        if (controller.signal.aborted) return;
        setError(String(e instanceof Error ? e.message : e));
      }
      setLive(false);
      if (stopped || controller.signal.aborted) return;
      timer = window.setTimeout(() => void connect(Math.min(backoff * 2, 15000)), backoff);
    };
    void connect(1000);
    return () => {
      controller.abort();
      window.clearTimeout(timer);
    };
  }, [jobId]);
  return { data, error, live };
}

export function Endpoints({ jobId }: { jobId: number }) {
  const { data, error, live } = useEndpoints(jobId);
  const list = data?.endpoints ?? [];
  const ready = list.filter((e) => e.ready).length;
  return (
    <div class="endpoints" role="group" aria-label="endpoints">
      <h2>Endpoints</h2>
      <ErrorBox error={error} />
      {data && (
        <p class="facts" data-dns-name>
          {ready} of {list.length} ready ·{" "}
          {data.dns_name ? (
            <>
              DNS name <code>{data.dns_name}</code>
            </>
          ) : (
            <>no DNS name: {data.dns_name_note}</>
          )}
          {!live && " · not live: reconnecting"}
        </p>
      )}
      {data && list.length === 0 && <p class="hint">No instance has a host.</p>}
      {list.length > 0 && (
        <table class="endpoints-table">
          <thead>
            <tr>
              <th class="num">instance</th>
              <th>address</th>
              <th>ready</th>
            </tr>
          </thead>
          <tbody>
            {list.slice(0, 1000).map((e) => (
              <tr key={e.instance} data-endpoint={e.instance} data-ready={e.ready ? "yes" : "no"}>
                <td class="num">{e.instance}</td>
                <td class="address">
                  {Object.entries(e.ports ?? {})
                    .sort(([a], [b]) => a.localeCompare(b))
                    .map(([name, port]) => (
                      <div key={name}>
                        {name}: <code>{`${e.address || e.host}:${port}`}</code>
                      </div>
                    ))}
                  {Object.keys(e.ports ?? {}).length === 0 && <code>{e.address || e.host}</code>}
                </td>
                <td>{e.ready ? <span class="badge ep-ready">ready</span> : <span class="why">{e.why_not_ready}</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
