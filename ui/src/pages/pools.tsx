// The pool tree: per pool and resource, allocation against entitlement, with reservation and
// limit marked, so that borrowing (allocation above reservation) and preemption pressure
// (allocation above entitlement) show at a glance. Creating a pool takes its YAML spec (offered to
// an admin and to a pool-admin, who creates pools below its scope's root).
import { useEffect, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { isAdmin, useWhoAmI } from "../access";
import { PoolInfo, call, num } from "../api";
import { DimensionCells } from "../components/pool_dimension";
import { ErrorBox } from "../components/ui";
import { YamlForm } from "../components/yaml_form";

const POOL_EXAMPLE = `resources:
  cpu: {reservation: 2, limit: 8, share: 1}
  memory: {reservation: 2Gi, limit: 16Gi, share: 1}
`;

export function Pools() {
  const [pools, setPools] = useState<PoolInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [path, setPath] = useState("/");
  const who = useWhoAmI();
  const mayCreate = isAdmin(who) || who?.role === "pool-admin";
  const load = () =>
    call<{ pools?: PoolInfo[] }>("PoolService", "ListPools").then(
      (r) => {
        setPools(r.pools ?? []);
        setError(null);
      },
      (e) => setError(e.message),
    );
  useEffect(() => {
    void load();
    const t = window.setInterval(load, 3000);
    return () => window.clearInterval(t);
  }, []);
  return (
    <section>
      <h1>Pools</h1>
      <ErrorBox error={error} />
      <table class="pools">
        <thead>
          <tr>
            <th>pool</th>
            <th>resource</th>
            <th class="wide">allocation (bar) vs entitlement · reservation ▏ limit ▕</th>
            <th class="num">allocation</th>
            <th class="num">entitlement</th>
            <th class="num">reservation</th>
            <th class="num">limit</th>
            <th class="num">demand</th>
            <th class="num">share</th>
          </tr>
        </thead>
        <tbody>
          {(pools ?? []).flatMap((p) => {
            const depth = p.path === "/" ? 0 : p.path.split("/").length - 1;
            const dims = (p.dimensions ?? []).filter(
              (d) => num(d.allocation) > 0 || num(d.reservation) > 0 || d.name !== "gpu",
            );
            return dims.map((d, i) => (
              <tr key={`${p.path}/${d.name}`} class={i === 0 ? "first" : ""}>
                {i === 0 && (
                  <th scope="rowgroup" rowSpan={dims.length} style={{ paddingLeft: `${depth}em` }}>
                    {p.path === "/" ? "/" : <Link href={`/pools${p.path}`}>{p.path}</Link>}
                    {p.queued_gangs > 0 && <div class="hint">{p.queued_gangs} waiting</div>}
                  </th>
                )}
                <td>{d.name}</td>
                <DimensionCells pool={p.path} d={d} />
              </tr>
            ));
          })}
        </tbody>
      </table>
      {mayCreate && (
      <details class="create">
        <summary>Create a pool</summary>
        <YamlForm
          label="Pool spec (YAML)"
          initial={POOL_EXAMPLE}
          submitLabel="Create pool"
          submit={async (yaml) => {
            await call("PoolService", "CreatePool", {
              path,
              spec_yaml: yaml,
              spec_name: "pool.yaml",
            });
            await load();
          }}
        >
          <label>
            Path
            <input
              name="path"
              value={path}
              onInput={(e) => setPath((e.target as HTMLInputElement).value)}
            />
          </label>
        </YamlForm>
      </details>
      )}
    </section>
  );
}
