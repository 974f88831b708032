// A page's filters and page number kept in its URL's query, so that a filtered list can be
// shared and the back button undoes a change.
import { useLocation, useSearch } from "wouter-preact";

// The query of the current URL, and a setter that navigates to `path` with `key` set to
// `value` (removed when empty); changing a filter goes back to the first page.
export function useQueryState(path: string): [URLSearchParams, (key: string, value: string) => void] {
  const search = useSearch();
  const [, navigate] = useLocation();
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(search);
    if (value) next.set(key, value);
    else next.delete(key);
    if (key !== "page") next.delete("page");
    const s = next.toString();
    navigate(s ? `${path}?${s}` : path);
  };
  return [new URLSearchParams(search), set];
}
