// A YAML document, highlighted (highlight.js, its YAML grammar only). highlight.js escapes the
// text it wraps in its spans, so its output is safe to insert as HTML.
import hljs from "highlight.js/lib/core";
import yaml from "highlight.js/lib/languages/yaml";
import { useMemo } from "preact/hooks";

hljs.registerLanguage("yaml", yaml);

export function YamlView({ text, label }: { text: string; label: string }) {
  const html = useMemo(() => hljs.highlight(text, { language: "yaml" }).value, [text]);
  return (
    <pre class="yaml" aria-label={label} tabIndex={0}>
      <code dangerouslySetInnerHTML={{ __html: html }} />
    </pre>
  );
}
