// Without a token the UI shows only this form. The token is checked against the master
// (AccessService/WhoAmI, which a standby answers too) before it is kept.
import { useState } from "preact/hooks";
import { ApiError, call } from "../api";
import { setToken } from "../auth";

export function Login() {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  return (
    <main class="login">
      <h1>Paceline</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            await call("AccessService", "WhoAmI", {}, value.trim());
            setToken(value.trim());
          } catch (err) {
            setError(err instanceof ApiError ? `${err.code}: ${err.message}` : String(err));
          }
        }}
      >
        <label>
          API token
          <input
            name="token"
            type="password"
            autocomplete="current-password"
            value={value}
            onInput={(e) => setValue((e.target as HTMLInputElement).value)}
            required
          />
        </label>
        <p class="hint">
          The master's token is in its data directory (<code>data/token</code> for{" "}
          <code>make up</code>).
        </p>
        {error && (
          <div class="error" role="alert">
            {error}
          </div>
        )}
        <button type="submit">Log in</button>
      </form>
    </main>
  );
}
