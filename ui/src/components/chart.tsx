// A small time-series chart (uPlot) of the overview's samples: placements/s and waiting tasks.
import "uplot/dist/uPlot.min.css";
import uPlot from "uplot";
import { useEffect, useRef } from "preact/hooks";
import { Sample } from "../metrics";

function data(samples: readonly Sample[]): uPlot.AlignedData {
  return [
    samples.map((s) => s.t),
    samples.map((s) => s.placementsPerSecond),
    samples.map((s) => s.pending),
  ];
}

export function ActivityChart({ samples }: { samples: readonly Sample[] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    if (!box.current) return;
    const style = getComputedStyle(document.documentElement);
    const fg = style.getPropertyValue("--muted").trim() || "#888";
    const axis = { stroke: fg, grid: { stroke: style.getPropertyValue("--line").trim() || "#ddd" } };
    plot.current = new uPlot(
      {
        width: Math.max(300, box.current.clientWidth),
        height: 180,
        // At least the last five minutes, so that a few samples do not stretch over years.
        scales: {
          x: {
            time: true,
            range: (_u, min) => {
              const now = Date.now() / 1000;
              return [Math.min(Number.isFinite(min) ? min : now, now - 300), now];
            },
          },
        },
        series: [
          {},
          { label: "placements/s", stroke: style.getPropertyValue("--bar").trim(), width: 2, scale: "rate" },
          { label: "waiting tasks", stroke: style.getPropertyValue("--warn").trim(), width: 2, scale: "n" },
        ],
        axes: [axis, { ...axis, scale: "rate" }, { ...axis, scale: "n", side: 1 }],
      },
      data(samples),
      box.current,
    );
    const resize = () => box.current && plot.current?.setSize({ width: box.current.clientWidth, height: 180 });
    window.addEventListener("resize", resize);
    return () => {
      window.removeEventListener("resize", resize);
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);
  useEffect(() => plot.current?.setData(data(samples)), [samples, samples.length]);
  return <div ref={box} class="chart" role="img" aria-label="placements per second and waiting tasks over time" />;
}
