// One resource of a pool as table cells: a bar of its allocation against its entitlement
// (reservation and a finite limit marked), then allocation (highlighted above the
// entitlement: the pool borrows and may be preempted), entitlement, reservation, limit, demand
// and share. Used by the pool tree and by a pool's page.
import { PoolDimension, num } from "../api";
import { amount } from "../format";
import { Bar } from "./ui";

export function DimensionCells({ pool, d }: { pool: string; d: PoolDimension }) {
  const ent = num(d.entitlement);
  const alloc = num(d.allocation);
  const limit = num(d.limit);
  const finite = limit < Number.MAX_SAFE_INTEGER ? limit : 0;
  const scale = Math.max(ent, alloc, num(d.reservation), num(d.demand), finite, 1) * 1.05;
  return (
    <>
      <td class="wide">
        <Bar
          value={alloc}
          max={scale}
          label={`${pool} ${d.name}: allocation ${amount(d.name, alloc)}, entitlement ${amount(d.name, ent)}`}
          marks={[
            { at: ent, title: "entitlement", kind: "entitlement" },
            { at: num(d.reservation), title: "reservation", kind: "reservation" },
            ...(finite > 0 ? [{ at: finite, title: "limit", kind: "limit" }] : []),
          ]}
        />
      </td>
      <td class={`num ${alloc > ent ? "warn" : ""}`}>{amount(d.name, alloc)}</td>
      <td class="num">{amount(d.name, ent)}</td>
      <td class="num">{amount(d.name, d.reservation)}</td>
      <td class="num">{amount(d.name, d.limit)}</td>
      <td class="num">{amount(d.name, d.demand)}</td>
      <td class="num">{d.share}</td>
    </>
  );
}
