// The API token, kept for the browser tab's session (sessionStorage): closing the tab logs out.
const KEY = "paceline.token";
const listeners = new Set<() => void>();

export function token(): string | null {
  return sessionStorage.getItem(KEY);
}

export function setToken(t: string): void {
  sessionStorage.setItem(KEY, t);
  listeners.forEach((f) => f());
}

export function clearToken(): void {
  if (token() === null) return;
  sessionStorage.removeItem(KEY);
  listeners.forEach((f) => f());
}

// Calls `f` when the user logs in or out (or the master refuses the token).
export function onTokenChange(f: () => void): () => void {
  listeners.add(f);
  return () => listeners.delete(f);
}
