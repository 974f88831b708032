// The master's recent history (ClusterService/GetHistory): one point per period (10 s by
// default) over the last hour, kept by the master since it started leading — so that a chart
// has its hour at once, not only what happened since the page was opened. Read again every
// period while a page shows it.
import { useEffect, useState } from "preact/hooks";
import { GetHistoryResponse, call, num } from "./api";

export function useHistory(pool = ""): { history: GetHistoryResponse | null; error: string | null } {
  const [history, setHistory] = useState<GetHistoryResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let timer: number | undefined;
    let stopped = false;
    const load = async () => {
      let period = 10000;
      try {
        const h = await call<GetHistoryResponse>("ClusterService", "GetHistory", { pool });
        if (stopped) return;
        setHistory(h);
        setError(null);
        period = Math.max(1000, num(h.period_ms));
      } catch (e) {
        if (!stopped) setError(`history: ${(e as Error).message}`);
      }
      if (!stopped) timer = window.setTimeout(load, period);
    };
    void load();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [pool]);
  return { history, error };
}

// A point's time in unix seconds (the charts' x axis).
export const seconds = (p: { at_unix_ms: string | number }) => num(p.at_unix_ms) / 1000;
