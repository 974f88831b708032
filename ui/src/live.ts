// The Watch stream (JobService/Watch over the JSON gateway: one JSON event per line), kept
// open: a dropped connection is retried with a backoff (1 s doubling to 15 s), and every
// (re)connection starts with a `started` event, on which a page reloads what it shows so that
// nothing that happened while it was away is missed. `onLive(false)` says the page is stale.
// A page that subscribes once the stream is up loads its data itself (useLive does).
import { useEffect, useRef, useState } from "preact/hooks";
import { readJsonLines, WatchEvent } from "./api";
import { token } from "./auth";

interface Subscriber {
  jobId: number; // 0: every job
  onEvent: (e: WatchEvent) => void;
  onLive: (live: boolean) => void;
}

// One stream per browser tab, of every job, shared by the pages (the master serves a few
// HTTP watches at once): opened by the first subscriber, closed a while after the last leaves
// (so that moving between pages keeps it).
const subscribers = new Set<Subscriber>();
let controller: AbortController | null = null;
let closeTimer: number | undefined;
let retryTimer: number | undefined;
let live = false;

function setLive(v: boolean) {
  live = v;
  subscribers.forEach((s) => s.onLive(v));
}

async function connect(backoff: number): Promise<void> {
  const mine = new AbortController();
  controller = mine;
  try {
    const res = await fetch("/api/v1/JobService/Watch?job_id=0", {
      headers: { Authorization: `Bearer ${token() ?? ""}` },
      signal: mine.signal,
    });
    if (!res.ok || !res.body) throw new Error(`watch: HTTP ${res.status}`);
    await readJsonLines<WatchEvent & { code?: string }>(res.body, (e) => {
      if (e.code !== undefined) throw new Error(`watch: ${e.code}`);
      if (e.started) {
        backoff = 1000;
        setLive(true);
      }
      const job = Number(e.job_id ?? 0);
      subscribers.forEach((s) => {
        if (e.started || s.jobId === 0 || s.jobId === job) s.onEvent(e);
      });
    });
  } catch {
    // retried below, unless closed
  }
  if (controller !== mine) return; // closed, or replaced
  controller = null;
  setLive(false);
  retryTimer = window.setTimeout(() => {
    retryTimer = undefined;
    if (subscribers.size > 0 && controller === null) void connect(Math.min(backoff * 2, 15000));
  }, backoff);
}

// Whether the stream is up (its `started` arrived and it has not dropped since).
export function isLive(): boolean {
  return live && controller !== null;
}

// Calls `onEvent` for the events of `jobId` (0: all) and for every `started` (the stream
// (re)connected: reload), `onLive(false)` while the stream is down. Returns the unsubscribe.
export function watch(
  jobId: number,
  onEvent: (e: WatchEvent) => void,
  onLive: (live: boolean) => void,
): () => void {
  const s = { jobId, onEvent, onLive };
  subscribers.add(s);
  window.clearTimeout(closeTimer);
  if (controller === null && retryTimer === undefined) {
    void connect(1000);
  } else if (live) {
    onLive(true);
  }
  return () => {
    subscribers.delete(s);
    if (subscribers.size > 0) return;
    closeTimer = window.setTimeout(() => {
      if (subscribers.size > 0) return;
      window.clearTimeout(retryTimer);
      retryTimer = undefined;
      const c = controller;
      controller = null;
      live = false;
      c?.abort();
    }, 10000);
  };
}

// A page's data, loaded by `load` now, again on every (re)connection of the watch of `jobId`
// (0: every job), and patched by `apply` for each event in between. `live` is false while the
// stream is down: the page shows it is stale.
export function useLive<T>(
  jobId: number,
  load: () => Promise<T>,
  apply: (data: T, e: WatchEvent) => T,
  deps: unknown[],
): { data: T | null; error: string | null; live: boolean; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [live, setLive] = useState(true);
  const applyRef = useRef(apply);
  applyRef.current = apply;
  const generation = useRef(0);
  const eventSinceLoad = useRef(false);

  // An event that arrives while a load is in flight may be older or newer than what the load
  // reads, and the load's answer replaces the data it patched: load again then (three times in
  // a row at most), so that the page ends on the newest state.
  const reload = (chained = 0) => {
    const g = ++generation.current;
    eventSinceLoad.current = false;
    load().then(
      (d) => {
        if (g !== generation.current) return;
        setData(d);
        setError(null);
        if (eventSinceLoad.current && chained < 3) reload(chained + 1);
      },
      (e: Error) => g === generation.current && setError(e.message),
    );
  };

  useEffect(() => {
    setData(null);
    // With the stream up, what is loaded now misses nothing; otherwise the load waits for the
    // stream's `started` (at most a second: a stream that cannot start must not hide the page).
    let loaded = false;
    const first = () => {
      if (loaded) return;
      loaded = true;
      reload();
    };
    const fallback = window.setTimeout(first, 1000);
    const stop = watch(
      jobId,
      (e) => {
        if (!e.started) {
          eventSinceLoad.current = true;
          return setData((d) => (d === null ? d : applyRef.current(d, e)));
        }
        if (!loaded) return first();
        reload();
      },
      setLive,
    );
    if (isLive()) first();
    return () => {
      window.clearTimeout(fallback);
      stop();
    };
  }, deps);
  return { data, error, live, reload: () => reload() };
}
