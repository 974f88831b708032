// A small time-series chart (uPlot): one x axis of unix seconds and a few series, each on the
// left or the right y axis. The overview draws placements/s and waiting tasks with it, a pool's
// page its entitlement, allocation and demand.
import "uplot/dist/uPlot.min.css";
import uPlot from "uplot";
import { useEffect, useRef } from "preact/hooks";

export interface Series {
  label: string;
  values: readonly (number | null)[];
  color: string; // a CSS variable of styles.css, e.g. "--bar"
  right?: boolean; // on the right axis (a second unit)
  dash?: boolean;
}

interface Props {
  times: readonly number[]; // unix seconds, ascending
  series: readonly Series[];
  label: string; // what the chart shows, for screen readers
  format?: (v: number) => string; // the axes' values (default: as they are)
  formatRight?: (v: number) => string;
}

const HEIGHT = 180;

function css(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

export function TimeChart({ times, series, label, format, formatRight }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  // Drawn again when what it shows changes (another resource: other units), not for new points.
  const shape = [label, ...series.map((s) => s.label)].join("|");
  useEffect(() => {
    if (!box.current) return;
    const axis = { stroke: css("--muted", "#888"), grid: { stroke: css("--line", "#ddd") } };
    const values = (f?: (v: number) => string) =>
      f ? (_u: uPlot, splits: number[]) => splits.map((v) => f(v)) : undefined;
    plot.current = new uPlot(
      {
        width: Math.max(280, box.current.clientWidth),
        height: HEIGHT,
        // At least the last minute, so that a few points do not stretch over the width.
        scales: {
          x: {
            time: true,
            range: (_u, min) => {
              const now = Date.now() / 1000;
              return [Math.min(Number.isFinite(min) ? min : now, now - 60), now];
            },
          },
          left: { range: (_u, _min, max) => [0, Math.max(1, max)] },
          right: { range: (_u, _min, max) => [0, Math.max(1, max)] },
        },
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: css(s.color, "#36c"),
            width: 2,
            dash: s.dash ? [6, 4] : undefined,
            scale: s.right ? "right" : "left",
          })),
        ],
        axes: [
          axis,
          { ...axis, scale: "left", size: 70, values: values(format) },
          ...(series.some((s) => s.right)
            ? [{ ...axis, scale: "right", side: 1, size: 70, values: values(formatRight) }]
            : []),
        ],
      },
      [times as number[], ...series.map((s) => s.values as (number | null)[])],
      box.current,
    );
    const resize = () =>
      box.current && plot.current?.setSize({ width: box.current.clientWidth, height: HEIGHT });
    window.addEventListener("resize", resize);
    return () => {
      window.removeEventListener("resize", resize);
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape]);
  useEffect(() => {
    plot.current?.setData([times as number[], ...series.map((s) => s.values as (number | null)[])]);
  }, [times, series]);
  return <div ref={box} class="chart" role="img" aria-label={label} data-points={times.length} />;
}
