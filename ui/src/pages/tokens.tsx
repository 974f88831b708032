// API tokens (AccessService/ListTokens, admins only): who each acts as, its role and scope, who
// made it and when, when it expires, its state; an active one is revoked after a confirmation
// (its calls are refused from then on). The master keeps only a hash of a token's secret: no
// secret is ever shown here (tokens are made with `paceline token create`, which prints it once).
// Filtered by user and state (in the URL); the tokens in the master's files are not listed.
import { useEffect, useState } from "preact/hooks";
import { ApiError, Int, call } from "../api";
import { Badge, Confirm, ErrorBox, FilterInput, FilterSelect } from "../components/ui";
import { time } from "../format";
import { useQueryState } from "../url_state";

export interface TokenInfo {
  id: string;
  name: string;
  user: string;
  group: string;
  role: string;
  scope: string;
  created_by: string;
  created_at_unix_ms: Int;
  expires_at_unix_ms: Int;
  revoked_at_unix_ms: Int;
  state: string; // ACTIVE, EXPIRED, REVOKED
}

const STATES = ["ACTIVE", "EXPIRED", "REVOKED"];

export function Tokens() {
  const [q, set] = useQueryState("/tokens");
  const user = q.get("user") ?? "";
  const stateFilter = q.get("state") ?? "";
  const [tokens, setTokens] = useState<TokenInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<TokenInfo | null>(null);
  const load = () =>
    call<{ tokens?: TokenInfo[] }>("AccessService", "ListTokens", { user }).then(
      (r) => {
        setTokens(r.tokens ?? []);
        setError(null);
      },
      (e) => setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e)),
    );
  useEffect(() => {
    setTokens(null);
    void load();
  }, [user]);
  const revoke = async () => {
    const t = revoking;
    setRevoking(null);
    if (!t) return;
    try {
      await call("AccessService", "RevokeToken", { id: t.id });
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
    }
  };
  const shown = (tokens ?? []).filter((t) => !stateFilter || t.state === stateFilter);
  return (
    <section>
      <h1>Tokens</h1>
      <ErrorBox error={error} />
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <FilterInput name="user" value={user} placeholder="exactly this user" onCommit={(v) => set("user", v)} />
        <FilterSelect name="state" value={stateFilter} options={STATES} onCommit={(v) => set("state", v)} />
      </form>
      <p class="hint">
        {tokens === null ? "loading…" : `${shown.length} of ${tokens.length} tokens`} · secrets are
        never shown: a new token's is printed once by <code>paceline token create</code>
      </p>
      <table class="tokens">
        <thead>
          <tr>
            <th>id</th>
            <th>name</th>
            <th>user</th>
            <th>group</th>
            <th>role</th>
            <th>scope</th>
            <th>created by</th>
            <th>created</th>
            <th>expires</th>
            <th>state</th>
            <th>actions</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((t) => (
            <tr key={t.id} data-token={t.id}>
              <th scope="row">
                <code>{t.id}</code>
              </th>
              <td>{t.name}</td>
              <td class="user">{t.user}</td>
              <td>{t.group}</td>
              <td class="role">{t.role}</td>
              <td>{t.role === "agent" ? `host ${t.scope}` : t.scope}</td>
              <td>{t.created_by}</td>
              <td>{time(t.created_at_unix_ms)}</td>
              <td>{Number(t.expires_at_unix_ms ?? 0) === 0 ? "never" : time(t.expires_at_unix_ms)}</td>
              <td class="state">
                <Badge state={t.state} />
                {t.state === "REVOKED" && <div class="hint">{time(t.revoked_at_unix_ms)}</div>}
              </td>
              <td class="actions">
                {t.state === "ACTIVE" && (
                  <button type="button" class="danger" onClick={() => setRevoking(t)}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Confirm
        open={revoking !== null}
        title={revoking ? `Revoke token ${revoking.id} (${revoking.user})?` : ""}
        action="Revoke"
        onConfirm={revoke}
        onCancel={() => setRevoking(null)}
      >
        Calls made with it are refused from now on, and its open watches end. This cannot be
        undone: a new token is made with <code>paceline token create</code>.
      </Confirm>
    </section>
  );
}
