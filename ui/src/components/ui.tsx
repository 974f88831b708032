// Small shared pieces: state badges, bars, errors, the stale banner, confirmation, a filter's
// text box.
import { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

export function Badge({ state }: { state: string }) {
  return <span class={`badge s-${state.toLowerCase()}`}>{state}</span>;
}

export function ErrorBox({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <div class="error" role="alert">
      {error}
    </div>
  );
}

export function Stale({ live }: { live: boolean }) {
  if (live) return null;
  return (
    <div class="stale" role="status">
      Not live: reconnecting to the master. What is shown may be out of date.
    </div>
  );
}

// A bar of `value` against `max`, with optional marks (e.g. reservation, entitlement).
export function Bar({
  value,
  max,
  marks = [],
  label,
}: {
  value: number;
  max: number;
  marks?: { at: number; title: string; kind: string }[];
  label: string;
}) {
  const pct = (v: number) => `${max > 0 ? Math.min(100, (v / max) * 100) : 0}%`;
  return (
    <div
      class="bar"
      role="meter"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={max}
      aria-valuenow={value}
      title={label}
    >
      <div class={`fill ${value > max ? "over" : ""}`} style={{ width: pct(value) }} />
      {marks.map((m) => (
        <div key={m.kind} class={`mark ${m.kind}`} style={{ left: pct(m.at) }} title={m.title} />
      ))}
    </div>
  );
}

// A modal confirmation (<dialog>): `onConfirm` runs only after the user says yes.
export function Confirm({
  open,
  title,
  children,
  action,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  action: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} onCancel={onCancel} aria-labelledby="confirm-title">
      <h2 id="confirm-title">{title}</h2>
      <div>{children}</div>
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={onConfirm}>
          {action}
        </button>
      </div>
    </dialog>
  );
}

// A labelled choice filter: "any" (the empty value) or one of `options` (values, or [value,
// text] pairs), committed (`onCommit`) when chosen.
export function FilterSelect({
  name,
  value,
  options,
  onCommit,
}: {
  name: string;
  value: string;
  options: readonly (string | readonly [string, string])[];
  onCommit: (v: string) => void;
}) {
  return (
    <label>
      {name}
      <select name={name} value={value} onChange={(e) => onCommit((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>
        {options.map((o) => {
          const [v, text] = typeof o === "string" ? [o, o] : o;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    </label>
  );
}

// A labelled text filter: what is typed stays while the page redraws (live data), and is
// committed (`onCommit`, trimmed) on Enter or when the box loses focus; a new `value` (the URL
// changed) replaces it.
export function FilterInput({
  name,
  value,
  placeholder,
  onCommit,
}: {
  name: string;
  value: string;
  placeholder?: string;
  onCommit: (v: string) => void;
}) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  return (
    <label>
      {name}
      <input
        name={name}
        value={draft}
        placeholder={placeholder}
        onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
        onChange={(e) => onCommit((e.target as HTMLInputElement).value.trim())}
      />
    </label>
  );
}
