// The cluster, through the master's JSON gateway (/api/v1/<Service>/<Method>), with the token
// the user logged in with. Field names and shapes are those of the .proto files (proto3 JSON:
// 64-bit integers arrive as strings; use num()). Errors are ApiError with the gRPC code name.

import { clearToken, token } from "./auth";

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

// A proto3 JSON integer (a number, or a string for 64-bit fields) as a number.
export function num(v: string | number | undefined | null): number {
  if (v === undefined || v === null || v === "") return 0;
  return typeof v === "number" ? v : Number(v);
}

async function failure(res: Response): Promise<ApiError> {
  let code = "UNKNOWN";
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { code?: string; message?: string };
    code = body.code ?? code;
    message = body.message ?? message;
  } catch {
    // not JSON: keep the HTTP status
  }
  if (code === "UNAUTHENTICATED") clearToken();
  return new ApiError(code, message, res.status);
}

// Read-your-writes on a standby (docs/operations.md "Reads on standbys"): every answer a leader
// gives carries the store revision of what it has committed (X-Paceline-Revision); each call
// asks for at least the newest seen, so a page served by a standby reflects this tab's writes
// (the standby waits a little for it, or refuses naming the leader).
let minRevision = -1;

function noteRevision(res: Response): void {
  if (res.headers.get("X-Paceline-Served-By") === "standby") return;
  const rev = Number(res.headers.get("X-Paceline-Revision") ?? "");
  if (Number.isInteger(rev) && rev > minRevision) minRevision = rev;
}

// Calls Service/Method with `body` (POST). `as` overrides the token (the login form's check).
export async function call<T>(
  service: string,
  method: string,
  body: object = {},
  as?: string,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`/api/v1/${service}/${method}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Authorization: `Bearer ${as ?? token() ?? ""}`,
        ...(minRevision >= 0 ? { "X-Paceline-Min-Revision": String(minRevision) } : {}),
      },
      body: JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError("UNAVAILABLE", `cannot reach the master: ${String(e)}`, 0);
  }
  noteRevision(res);
  if (!res.ok) throw await failure(res);
  return (await res.json()) as T;
}

// Reads one of the JSON gateway's streams (a JSON value a line) to its end, calling `onValue`
// with each value; what `onValue` throws ends the read.
export async function readJsonLines<T>(
  body: NonNullable<Response["body"]>,
  onValue: (value: T) => void,
): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (line !== "") onValue(JSON.parse(line) as T);
    }
  }
}

// --- the messages the UI reads (a subset of the .proto files' fields) ---

export type Int = string | number;
export interface Resources {
  cpu_milli: Int;
  memory_bytes: Int;
  disk_bytes: Int;
  gpu_milli: Int;
}
export interface ClusterInfo {
  version: string;
  commit: string;
  store: string;
  cluster_id: string;
  role: string;
  term: Int;
  leader: string;
  started_at_unix_ms: Int;
  replication_lag_ms: Int; // a standby's: its copy of the store's age (-1: none yet)
}
export interface PoolDimension {
  name: string;
  reservation: Int;
  limit: Int;
  share: number;
  entitlement: Int;
  allocation: Int;
  demand: Int;
}
export interface PoolInfo {
  path: string;
  spec_yaml: string;
  dimensions: PoolDimension[];
  queued_gangs: number;
  admitted_gangs: number;
  leaf: boolean;
}
export interface QueuedGang {
  position: number;
  job_id: Int;
  priority: number;
  sla: string;
  tasks: number;
  reason: string;
}
export interface JobSummary {
  id: Int;
  name: string;
  pool: string;
  owner: string;
  type: string;
  state: string;
  version: Int;
  created_at_unix_ms: Int;
  instances: number;
  task_counts: Record<string, number>;
  labels: Record<string, string>;
  priority: number;
  owner_group?: string;
}
export interface UpdateInfo {
  id: Int;
  state: string;
  paused: boolean;
  from_version: Int;
  to_version: Int;
  batch_size: number;
  total: number;
  done: number;
  in_flight: number;
  failed: number;
  failed_instances?: number[];
  started_at_unix_ms: Int;
  finished_at_unix_ms: Int;
  message: string;
}
export interface GetJobResponse {
  job: JobSummary;
  spec_yaml: string;
  pending_reason: string;
  update?: UpdateInfo;
  roles?: JobRole[]; // in order; absent without roles
  gang?: JobGang; // absent when the gang is a single instance
  completion?: string; // batch jobs: "all" or "instance-0"
}
// A role of a job: instances first_instance .. first_instance + instances - 1.
export interface JobRole {
  name: string;
  instances: number;
  first_instance?: number;
}
export interface JobGang {
  size: number;
  rendezvous: string;
  restart: string; // "instance" or "gang"
  max_restarts?: number;
}
export interface TaskInfo {
  job_id: Int;
  instance: number;
  run: number;
  state: string;
  host: string;
  started_at_unix_ms: Int;
  finished_at_unix_ms: Int;
  exit_code: number;
  signal: number;
  reason: string;
  failures: number;
  pending_reason: string;
  health: string;
  role?: string; // the instance's role, when the job has roles
  gang_attempt?: number; // how many times the run's gang restarted together
}
export interface TaskEvent {
  run: number;
  at_unix_ms: Int;
  state: string;
  host: string;
  reason: string;
  message: string;
}
export interface TaskRun {
  run: number;
  host: string;
  started_at_unix_ms: Int;
  finished_at_unix_ms: Int;
  final_state?: string;
  reason: string;
  message: string;
}
export interface GetTaskResponse {
  task: TaskInfo;
  runs: TaskRun[];
}
export interface TaskLogs {
  data: string; // base64
  next_offset: Int;
  finished: boolean;
  run: number;
  host: string;
}
export interface HostInfo {
  name: string;
  state: string;
  connected: boolean;
  capacity: Resources;
  allocated: Resources;
  labels: Record<string, string>;
  tasks: number;
  last_seen_unix_ms: Int;
  isolation: string;
  maintenance: string;
  gpus?: GpuDevice[];
  address?: string; // its agent's --address, else where it connects from; absent while none is
  images?: HostImage[]; // its image cache, as its agent last reported it
}
export interface HostImage {
  config_digest: string;
  refs?: string[];
  size_bytes: Int;
  last_used_unix_ms: Int;
  tasks: number; // running tasks that use it
}
export interface GpuDevice {
  index: number;
  model: string;
  milli_allocated: number;
  holders?: { job_id: Int; instance: number; milli: number }[];
  // Set when its agent found it unhealthy (an XID or ECC error): it takes no new work.
  fault?: { device: number; reason: string; since_unix_ms: Int };
}
export interface ListHostsResponse {
  hosts?: HostInfo[];
  next_page_token: string;
  matching: number;
  offset: number;
  states: Record<string, number>;
}
export interface ClusterPoint {
  at_unix_ms: Int;
  placed: number;
  pending_tasks: number;
  running_tasks: number;
  capacity: Resources;
  allocated: Resources;
}
export interface PoolPoint {
  at_unix_ms: Int;
  entitlement: Resources;
  allocation: Resources;
  demand: Resources;
}
export interface GetHistoryResponse {
  period_ms: Int;
  cluster?: ClusterPoint[];
  pool?: PoolPoint[];
}
export interface WatchEvent {
  job_id?: Int;
  at_unix_ms?: Int;
  started?: boolean;
  job?: { state: string; version: Int; task_counts: Record<string, number> };
  task?: { instance: number; event: TaskEvent };
}
// JobService/GetEndpoints and each line of WatchEndpoints.
export interface Endpoint {
  instance: number;
  run: number;
  host: string;
  address: string;
  ports?: Record<string, number>;
  ready: boolean;
  why_not_ready: string;
}
export interface JobEndpoints {
  job_id: Int;
  dns_name: string;
  dns_name_note: string;
  version: Int;
  endpoints?: Endpoint[];
  deleted: boolean;
}
