// A YAML spec editor that submits through `submit` and shows the master's answer inline: a
// spec error "NAME:LINE:COLUMN: what" points at the line and column, nothing is created.
import { useState } from "preact/hooks";
import { ApiError } from "../api";

interface Located {
  line: number;
  column: number;
  message: string;
}

// The first "name:LINE:COLUMN: message" of an error message.
export function locate(message: string): Located | null {
  const m = /:(\d+):(\d+): ?(.*)/.exec(message);
  if (!m) return null;
  return { line: Number(m[1]), column: Number(m[2]), message: m[3] };
}

export function YamlForm({
  label,
  initial,
  submitLabel,
  submit,
  children,
}: {
  label: string;
  initial: string;
  submitLabel: string;
  submit: (yaml: string) => Promise<void>;
  children?: preact.ComponentChildren;
}) {
  const [yaml, setYaml] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const where = error ? locate(error) : null;
  const lines = yaml.split("\n");
  return (
    <form
      class="yaml-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          await submit(yaml);
        } catch (err) {
          setError(err instanceof ApiError ? `${err.code}: ${err.message}` : String(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      {children}
      <label>
        {label}
        <textarea
          name="spec"
          spellcheck={false}
          rows={Math.max(12, lines.length + 1)}
          value={yaml}
          onInput={(e) => setYaml((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      {error && (
        <div class="error spec-error" role="alert">
          <div>{error}</div>
          {where && where.line >= 1 && where.line <= lines.length && (
            <pre class="where">
              <span class="lineno">{where.line} | </span>
              {lines[where.line - 1]}
              {"\n"}
              <span class="lineno">{" ".repeat(String(where.line).length)} | </span>
              {" ".repeat(Math.max(0, where.column - 1))}^ {where.message}
            </pre>
          )}
        </div>
      )}
      <button type="submit" disabled={busy}>
        {busy ? "Working…" : submitLabel}
      </button>
    </form>
  );
}
