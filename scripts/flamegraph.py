#!/usr/bin/env python3
"""A flame graph (SVG) from `perf script` output, for the master's profile under load.

Usage:
  perf record -F 99 --call-graph dwarf -o perf.data -- paceline bench scale ...
  perf script -i perf.data -F comm,tid,ip,sym | scripts/flamegraph.py --title T > flame.svg

Each sample's stack becomes one path from its thread's role (the thread name: pl-loop,
pl-store-writer, pl-fleet, gRPC's threads...) to the function it was in; the width of a box is
the share of samples under it. Frames are kept as perf names them, with C++ templates and
argument lists shortened so that they fit. Hovering a box shows its full name and share.
"""
import argparse
import html
import re
import sys
from collections import defaultdict

WIDTH = 1800
ROW = 16
FONT = 11


def shorten(sym):
    sym = re.sub(r"\(anonymous namespace\)::", "", sym)
    # Drop template arguments and parameter lists, innermost first.
    for _ in range(8):
        new = re.sub(r"<[^<>]*>", "", sym)
        new = re.sub(r"\([^()]*\)", "", new)
        if new == sym:
            break
        sym = new
    sym = sym.replace("absl::debian3::", "absl::").replace("std::__cxx11::", "std::")
    return sym.strip() or "?"


def read_stacks(lines):
    """Yields (comm, [frames root first]) per sample of `perf script -F comm,tid,ip,sym`."""
    comm, frames = None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if comm is not None:
                yield comm, list(reversed(frames))
            comm, frames = None, []
            continue
        if not line.startswith((" ", "\t")):
            comm, frames = line.split()[0], []
            continue
        parts = line.strip().split(None, 1)
        sym = parts[1] if len(parts) > 1 else "?"
        sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        if sym.startswith("[unknown]"):
            sym = "?"
        frames.append(shorten(sym))
    if comm is not None:
        yield comm, list(reversed(frames))


def build_tree(stacks):
    root = {"n": 0, "kids": defaultdict(lambda: None)}

    def child(node, name):
        k = node["kids"].get(name)
        if k is None:
            k = {"n": 0, "kids": {}}
            node["kids"][name] = k
        return k

    for comm, frames in stacks:
        root["n"] += 1
        node = child(root, comm)
        node["n"] += 1
        for f in frames:
            if f in ("?", "clone3", "start_thread", "[unknown]"):
                continue
            node = child(node, f)
            node["n"] += 1
    return root


def color(name):
    h = sum(ord(c) for c in name) % 60
    if name.startswith("paceline::"):
        return f"rgb({220 + h % 30},{120 + h},{50})"
    if name.startswith(("sqlite3", "Sqlite")):
        return f"rgb({80},{150 + h},{200})"
    return f"rgb({200 + h % 50},{170 + h % 60},{90})"


def render(root, title):
    total = max(1, root["n"])
    boxes = []
    depth_max = [0]

    def walk(node, name, x, depth):
        w = node["n"] / total * WIDTH
        if w < 0.3:
            return
        depth_max[0] = max(depth_max[0], depth)
        boxes.append((x, depth, w, name, node["n"]))
        cx = x
        for kname, k in sorted(node["kids"].items(), key=lambda kv: -kv[1]["n"]):
            walk(k, kname, cx, depth + 1)
            cx += k["n"] / total * WIDTH

    cx = 0.0
    for kname, k in sorted(root["kids"].items(), key=lambda kv: -kv[1]["n"]):
        walk(k, kname, cx, 0)
        cx += k["n"] / total * WIDTH
    height = (depth_max[0] + 3) * ROW + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'font-family="monospace" font-size="{FONT}">',
           f'<text x="4" y="16" font-size="14">{html.escape(title)} — {total} samples</text>']
    for x, depth, w, name, n in boxes:
        y = height - (depth + 1) * ROW - 4
        label = name if len(name) * FONT * 0.6 < w - 4 else name[: max(0, int((w - 4) / (FONT * 0.6)) - 2)] + ".."
        pct = 100.0 * n / total
        out.append(f'<g><title>{html.escape(name)} — {n} samples, {pct:.2f} %</title>'
                   f'<rect x="{x:.1f}" y="{y}" width="{max(w - 0.5, 0.1):.1f}" height="{ROW - 1}" '
                   f'fill="{color(name)}"/>')
        if w > 20:
            out.append(f'<text x="{x + 2:.1f}" y="{y + ROW - 4}">{html.escape(label)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--title", default="flame graph")
    args = ap.parse_args()
    print(render(build_tree(read_stacks(sys.stdin)), args.title))


if __name__ == "__main__":
    main()
