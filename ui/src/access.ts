// Who the token acts as (AccessService/WhoAmI, asked once per login) and which actions the UI
// offers it: the rules of the master's permission table (src/access/permissions.cc), so that a
// button the master would refuse is not shown. The master still checks every call; hiding an
// action spares the user a refusal, it protects nothing.
//
// Roles (docs/security.md): admin (everything), pool-admin (its pool subtree: pools strictly
// below its root, every job in it), submitter (submits in its subtree, acts on its own and its
// group's jobs), viewer (reads its subtree).
import { useEffect, useState } from "preact/hooks";
import { call } from "./api";
import { onTokenChange, token } from "./auth";

export interface WhoAmI {
  user: string;
  group: string;
  role: string;
  scope: string;
  token_id: string;
}

let asked: { token: string; answer: Promise<WhoAmI> } | null = null;
onTokenChange(() => (asked = null));

// The caller's identity, asked once for the token in use.
export function whoAmI(): Promise<WhoAmI> {
  const t = token() ?? "";
  if (asked === null || asked.token !== t) {
    const answer = call<WhoAmI>("AccessService", "WhoAmI");
    asked = { token: t, answer };
    // A failed answer is asked again next time.
    answer.catch(() => asked?.answer === answer && (asked = null));
  }
  return asked.answer;
}

// The caller's identity; null until known (or when it cannot be read: nothing is offered then).
export function useWhoAmI(): WhoAmI | null {
  const [who, setWho] = useState<WhoAmI | null>(null);
  useEffect(() => {
    let gone = false;
    whoAmI().then(
      (w) => !gone && setWho(w),
      () => !gone && setWho(null),
    );
    return () => {
      gone = true;
    };
  }, [token()]);
  return who;
}

// Whether `pool` is `scope` or below it ("/" holds every pool).
export function inScope(scope: string, pool: string): boolean {
  if (scope === "/") return pool.startsWith("/");
  return pool === scope || pool.startsWith(`${scope}/`);
}

function holds(who: WhoAmI, pool: string): boolean {
  return who.role === "admin" || inScope(who.scope, pool === "" ? "/" : pool);
}

export function isAdmin(who: WhoAmI | null): boolean {
  return who?.role === "admin";
}

// Create, update or delete the pool `pool`: an admin, or a pool-admin strictly below its root.
export function mayManagePool(who: WhoAmI | null, pool: string): boolean {
  if (who === null) return false;
  if (who.role === "admin") return true;
  return who.role === "pool-admin" && holds(who, pool) && pool !== who.scope;
}

// Submit a job to `pool` (or, with `pool` empty, to some pool: whether to offer the form).
export function maySubmit(who: WhoAmI | null, pool: string): boolean {
  if (who === null) return false;
  if (who.role === "admin") return true;
  if (who.role !== "pool-admin" && who.role !== "submitter") return false;
  return pool === "" || holds(who, pool);
}

// Kill, restart, delete or update a job of `pool` submitted by `owner` (of `ownerGroup`).
export function mayActOnJob(
  who: WhoAmI | null,
  pool: string,
  owner: string,
  ownerGroup = "",
): boolean {
  if (!maySubmit(who, pool) || who === null) return false;
  if (who.role !== "submitter") return true;
  return owner === who.user || (who.group !== "" && ownerGroup === who.group);
}
