"""Pictures of lumos results (matplotlib), as functions and as a command:

    python -m lumos.plot KIND INPUT -o OUT.png

KIND: ``pareto`` (a variants CSV: time to train against operational carbon, GPU types as
colours, the front outlined and labelled with its layouts), ``heatmap`` (a variants CSV: TP x PP,
each cell annotated with the best tokens/s, infeasible cells hatched and explained),
``utilization`` (a ``lumos place --utilization`` CSV: carbon SCI and tSCI add over oSCI),
``breakdown`` (a ``lumos replay --json`` file: measured and replayed step breakdown), ``stages``
(a ``lumos estimate --json`` file: each pipeline stage's compute, communication and bubble),
``timeline`` (a Chrome trace from ``lumos replay --timeline`` or ``Replay.timeline()``: a Gantt
chart of every CPU thread and GPU stream, forward and backward compute, communication, copies and
CPU operators; replay a ``lumos generate`` folder for a pipeline's), ``gpu-utilization`` (a
``lumos replay --utilization-bin`` CSV: the traced and the replayed GPU busy fraction per bin, as
Lumos's Figure 6).

Every picture has a title, axis labels with units and its legend outside the data; every function
returns the matplotlib Axes it drew on (save with ``bbox_inches="tight"`` so the legend is kept).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any, Dict, List, Optional, Sequence

import matplotlib
import matplotlib.patches
import matplotlib.ticker
import matplotlib.pyplot as plt
import pandas as pd

from . import read_csv

_BREAKDOWN = ["exposed_compute_us", "overlapped_us", "exposed_comm_us", "bubble_us", "other_us"]
_PART_NAMES = {"exposed_compute_us": "compute (not overlapped)",
               "overlapped_us": "compute overlapping communication",
               "exposed_comm_us": "communication (exposed)", "bubble_us": "pipeline bubble",
               "other_us": "other (idle, host, memory)"}
# Axis labels with units for the variants CSV's columns; any other column is shown as named.
LABELS = {"time_to_train_h": "time to train (h)", "operational_kg": "operational carbon (kg CO2e)",
          "embodied_kg": "embodied carbon (kg CO2e)", "sci_kg": "total carbon, SCI (kg CO2e)",
          "gpu_hours": "GPU-hours", "energy_kwh": "energy (kWh)", "step_time_s": "step time (s)",
          "tokens_per_s": "throughput (tokens/s)", "mfu": "MFU (fraction of peak)",
          "memory_gib": "GPU memory (GiB)", "tp": "tensor parallel (TP)",
          "pp": "pipeline parallel (PP)", "dp": "data parallel (DP)", "cp": "context parallel (CP)",
          "gpus": "GPUs", "gpu_power_w": "GPU power (W)"}
# GPU types in a fixed order of colours (tab10), so one GPU has one colour in every picture.
_GPU_ORDER = ["h100", "h200", "b200", "a100", "gb200", "mi300x", "l40s", "v100", "b100", "h800"]
_PALETTE = plt.get_cmap("tab10").colors


def label(column: str) -> str:
    """A column's axis label, with its unit."""
    return LABELS.get(column, column.replace("_", " "))


def eng(value: float, unit: str = "") -> str:
    """A number in engineering notation, 3 significant digits: 1.00 M, 85.3 k, 105."""
    if value is None or value != value:
        return "n/a"
    prefixes = ["", " k", " M", " G", " T", " P"]
    a, i = abs(float(value)), 0
    while a >= 999.5 and i < len(prefixes) - 1:
        a, i = a / 1000.0, i + 1
    digits = 0 if a >= 99.95 else 1 if a >= 9.995 else 2
    text = f"{'-' if value < 0 else ''}{a:.{digits}f}{prefixes[i]}"
    return f"{text} {unit}".rstrip() if unit and not prefixes[i] else f"{text}{unit}"


def gpu_colours(names: Sequence[str]) -> Dict[str, Any]:
    """A colour per GPU type: the known types in a fixed order, others after them."""
    known = [g for g in _GPU_ORDER if g in set(names)]
    others = sorted(set(names) - set(known))
    return {g: _PALETTE[(_GPU_ORDER.index(g) if g in _GPU_ORDER else len(known) + others.index(g))
                        % len(_PALETTE)] for g in set(names)}


def _axes(ax, size=(8, 4.8)):
    if ax is None:
        _, ax = plt.subplots(figsize=size, constrained_layout=True)
    return ax


def legend_outside(ax, **options):
    """The legend to the right of the axes, never over the data."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     fontsize=8, **options)


def layout_text(row: pd.Series) -> str:
    """A variant's complete layout, as ``h100 512 GPUs tp2 cp1 pp4 dp64 mbs1 vpp1``."""
    head = " ".join(str(row[c]) + suffix for c, suffix in (("gpu", ""), ("gpus", " GPUs"))
                    if c in row)
    parts = [f"{short}{row[c]}" for c, short in (("tp", "tp"), ("cp", "cp"), ("pp", "pp"),
                                                 ("dp", "dp"), ("mbs", "mbs"),
                                                 ("interleave", "vpp")) if c in row]
    return head + ("\n" + " ".join(parts) if parts else "")


def _place_labels(ax, points: List[tuple], texts: List[str]) -> List[Any]:
    """Labels beside points that overlap neither each other nor any of the points and stay inside
    the axes (on a white ground, over the other markers): each tries offsets around its point, nearest first, and takes the first that is free; a
    label with no free place is left out. Labels take no part in the figure's layout, so the axes
    do not move under them once placed."""
    fig = ax.figure
    fig.canvas.draw()  # settles the layout (legend outside, colour bar) the labels are placed in
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    offsets = [(6, 6), (6, -6), (-6, 6), (-6, -6), (14, 20), (14, -20), (-14, 20), (-14, -20),
               (28, 0), (-28, 0), (0, 34), (0, -34), (34, 34), (34, -34), (-34, 34), (-34, -34),
               (50, 10), (-50, 10), (50, -10), (-50, -10), (10, 50), (-10, 50), (30, 66),
               (-30, 66)]
    marks = ax.transData.transform([tuple(p) for p in points])
    placed: List[Any] = []
    kept = []
    for (px, py), text in zip(points, texts):
        for dx, dy in offsets:
            a = ax.annotate(text, (px, py), xytext=(dx, dy), textcoords="offset points",
                            fontsize=7, ha="left" if dx >= 0 else "right",
                            va="bottom" if dy >= 0 else "top",
                            bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8),
                            arrowprops=dict(arrowstyle="-", color="#888", lw=0.5)
                            if abs(dx) > 6 else None)
            a.set_in_layout(False)
            box = a.get_window_extent(renderer).expanded(1.04, 1.08)
            inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and
                      box.y1 <= frame.y1)
            free = inside and not any(box.overlaps(b) for b in placed) and not any(
                box.x0 <= mx <= box.x1 and box.y0 <= my <= box.y1 for mx, my in marks)
            if free:
                placed.append(box)
                kept.append(a)
                break
            a.remove()
    return kept


def pareto_front(df: pd.DataFrame, x: str = "time_to_train_h", y: str = "operational_kg",
                 objectives: Optional[Sequence[str]] = None, ax=None, title: Optional[str] = None,
                 labels: bool = True):
    """Feasible configurations as points coloured by GPU type, the Pareto front over
    ``objectives`` (default x and y) drawn as a line and its points labelled with their layouts
    (labels never overlap; one with no free place is left out)."""
    from . import pareto

    ax = _axes(ax)
    ok = df[df["feasible"] == 1] if "feasible" in df else df
    colours = gpu_colours([str(g) for g in ok["gpu"].unique()]) if "gpu" in ok else {}
    for gpu in sorted(colours):
        part = ok[ok["gpu"].astype(str) == gpu]
        ax.scatter(part[x], part[y], s=14, color=colours[gpu], alpha=0.6, label=gpu)
    if not colours:
        ax.scatter(ok[x], ok[y], s=14, color=_PALETTE[0], alpha=0.6, label="configurations")
    front = pareto(df, list(objectives or [x, y])).sort_values(x)
    ax.plot(front[x], front[y], "-", color="black", lw=1.2, label="Pareto front", zorder=3)
    ax.scatter(front[x], front[y], s=40, facecolors="none", edgecolors="black", zorder=4)
    ax.set_xlabel(label(x))
    ax.set_ylabel(label(y))
    ax.set_title(title or f"Pareto front: {label(x)} against {label(y)}")
    ax.grid(alpha=0.3)
    legend_outside(ax, title="GPU type")
    if labels and len(front):
        _place_labels(ax, list(zip(front[x], front[y])),
                      [layout_text(r) for _, r in front.iterrows()])
    return ax


def _short_reason(reason: str) -> str:
    """A drop reason's kind, without its numbers: "does not fit: 133 GiB per GPU" is
    "does not fit"."""
    text = re.split(r"[:(;]", str(reason))[0].strip()
    return text if len(text) <= 24 else text[:22] + "…"


def sweep_heatmap(df: pd.DataFrame, value: str = "tokens_per_s", rows: str = "tp",
                  cols: str = "pp", ax=None, title: Optional[str] = None):
    """The best ``value`` of the feasible configurations for each (rows, cols) pair, each cell
    annotated; a pair that was swept but where nothing fits is hatched and says why (the most
    common ``reason``); a pair not swept is left blank."""
    ax = _axes(ax)
    ok = df[df["feasible"] == 1] if "feasible" in df else df
    index = sorted(df[rows].unique())
    columns = sorted(df[cols].unique())
    grid = (ok.pivot_table(index=rows, columns=cols, values=value, aggfunc="max")
            .reindex(index=index, columns=columns))
    image = ax.imshow(grid.values.astype(float), cmap="viridis", origin="lower", aspect="auto")
    lo, hi = pd.Series(grid.values.ravel()).min(), pd.Series(grid.values.ravel()).max()
    reasons = set()
    for i, r in enumerate(index):
        for j, c in enumerate(columns):
            v = grid.iloc[i, j]
            if v == v:  # a feasible cell
                light = hi > lo and (v - lo) / (hi - lo) > 0.6
                ax.text(j, i, eng(v), ha="center", va="center", fontsize=8,
                        color="black" if light else "white")
                continue
            cell = df[(df[rows] == r) & (df[cols] == c)]
            if cell.empty:
                continue
            why = (_short_reason(cell["reason"].mode().iloc[0])
                   if "reason" in cell and cell["reason"].notna().any() else "infeasible")
            reasons.add(why)
            ax.add_patch(matplotlib.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False,
                                                      hatch="///", edgecolor="#999", lw=0))
            ax.text(j, i, why, ha="center", va="center", fontsize=7, color="#444", wrap=True)
    ax.set_xticks(range(len(columns)), [str(c) for c in columns])
    ax.set_yticks(range(len(index)), [str(r) for r in index])
    ax.set_xlabel(label(cols))
    ax.set_ylabel(label(rows))
    ax.set_title(title or f"Best {label(value)} by {label(rows)} and {label(cols)}")
    bar = ax.figure.colorbar(image, ax=ax, label=f"best {label(value)}")
    bar.formatter = matplotlib.ticker.FuncFormatter(lambda v, _: eng(v))
    bar.update_ticks()
    if reasons:
        handles = [matplotlib.patches.Patch(facecolor="white", edgecolor="#999", hatch="///",
                                            label="no feasible configuration:\n" +
                                            "\n".join(sorted(reasons)))]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.14), fontsize=7,
                  frameon=False)
    return ax


def utilization_curve(df: pd.DataFrame, ax=None, title: Optional[str] = None):
    """The carbon SCI and tSCI placements add over oSCI, against the fleet's utilization."""
    ax = _axes(ax)
    ax.plot(df["utilization"] * 100, df["added_sci"] * 100, color="#d62728", label="SCI over oSCI")
    ax.plot(df["utilization"] * 100, df["added_tsci"] * 100, color="#1f77b4",
            label="tSCI over oSCI")
    ax.set_xlabel("fleet utilization (%)")
    ax.set_ylabel("added cluster carbon footprint (%)")
    ax.set_title(title or "Carbon that SCI and tSCI placement add over oSCI")
    ax.grid(alpha=0.3)
    legend_outside(ax)
    return ax


def gpu_utilization(data, rank: Optional[int] = None, ax=None, title: Optional[str] = None):
    """The traced and the replayed GPU busy fraction per bin of one rank (default the lowest), from
    a ``lumos replay --utilization-bin`` CSV (a path or its DataFrame): Lumos's Figure 6."""
    df = data if isinstance(data, pd.DataFrame) else pd.read_csv(data)
    if df.empty:
        raise ValueError("no bins to plot")
    rank = int(df["rank"].min()) if rank is None else rank
    one = df[df["rank"] == rank]
    if one.empty:
        raise ValueError(f"no rank {rank} in the utilization CSV")
    ax = _axes(ax)
    mid_ms = (one["bin_start_us"] + one["bin_end_us"]) / 2000.0
    ax.plot(mid_ms, one["traced_busy_fraction"] * 100, color="#1f77b4", label="traced")
    ax.plot(mid_ms, one["replayed_busy_fraction"] * 100, color="#d62728", linestyle="--",
            label="replayed")
    width_ms = float((one["bin_end_us"] - one["bin_start_us"]).iloc[0]) / 1000.0
    ax.set_xlabel(f"time (ms), bins of {width_ms:g} ms")
    ax.set_ylabel(f"GPU busy (%), rank {rank}")
    ax.set_ylim(0, 105)
    ax.set_title(title or f"GPU utilization of rank {rank}: traced and replayed")
    legend_outside(ax)
    return ax


def _stacked(ax, names: List[str], parts: List[Dict[str, Any]], scale: float) -> None:
    bottom = [0.0] * len(names)
    for part in _BREAKDOWN:
        values = [p.get(part, 0) * scale for p in parts]
        ax.bar(names, values, bottom=bottom, label=_PART_NAMES[part])
        bottom = [a + v for a, v in zip(bottom, values)]


def breakdown_bars(replay_json: Dict[str, Any], ax=None, title: Optional[str] = None):
    """Measured and replayed step breakdown of a replay, as stacked bars."""
    ax = _axes(ax)
    bars = {k: replay_json[k] for k in ("measured_breakdown", "breakdown") if k in replay_json}
    if not bars:
        raise KeyError("breakdown")
    names = ["measured" if k == "measured_breakdown" else "replayed" for k in bars]
    _stacked(ax, names, list(bars.values()), 1e-3)
    ax.set_ylabel("time per step (ms)")
    ax.set_title(title or "Step breakdown: measured and replayed")
    legend_outside(ax)
    return ax


def stage_bars(estimate_json: Dict[str, Any], ax=None, title: Optional[str] = None):
    """Each pipeline stage's exposed compute, overlap, exposed communication and bubble."""
    ax = _axes(ax)
    stages = estimate_json["stages"]
    _stacked(ax, [str(s["stage"]) for s in stages], [s["breakdown"] for s in stages], 1e-6)
    ax.set_xlabel("pipeline stage")
    ax.set_ylabel("time per step (s)")
    ax.set_title(title or "Step breakdown by pipeline stage")
    legend_outside(ax)
    return ax


_KIND_COLOURS = {"forward": "#1f77b4", "backward": "#ff7f0e", "communication": "#d62728",
                 "memory copy": "#2ca02c", "CPU operator": "#8c8c8c"}
_BACKWARD_MARKS = ("bwd", "backward", "grad")


def _kind(event: Dict[str, Any]) -> str:
    """Forward or backward compute (by the kernel's name: bwd, backward, dgrad, wgrad, ...),
    communication, a memory copy, or (on a CPU thread) a CPU operator or runtime call."""
    if not str(event.get("pid", "")).startswith("GPU"):
        return "CPU operator"
    cls = event.get("args", {}).get("class", "compute")
    if cls == "comm":
        return "communication"
    if cls == "memory":
        return "memory copy"
    name = str(event.get("name", "")).lower()
    return "backward" if any(m in name for m in _BACKWARD_MARKS) else "forward"


def _natural(text: str) -> List[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def timeline_gantt(trace: Dict[str, Any], ax=None, cpu: bool = True,
                   title: Optional[str] = None):
    """A Gantt chart of a replayed timeline: one row per CPU thread (``cpu=True``) and per GPU
    stream, CPU rows first, ops coloured by kind: forward and backward compute, communication,
    memory copies, CPU operators. Without ``ax`` the figure grows with the rows and the labels
    shrink past 32 rows, so a job of many ranks and streams stays readable."""
    rows: Dict[tuple, list] = {}
    for e in trace["traceEvents"]:
        pid = str(e.get("pid", ""))
        if e.get("ph") != "X" or not (pid.startswith("GPU") or (cpu and pid.startswith("CPU"))):
            continue
        rows.setdefault((0 if pid.startswith("CPU") else 1, pid, str(e.get("tid", ""))),
                        []).append(e)
    keys = sorted(rows, key=lambda k: (k[0], _natural(k[1]), _natural(k[2])))
    n = max(len(keys), 1)
    ax = _axes(ax, size=(11, min(2.0 + 0.28 * n, 60)))
    font = 8 if n <= 32 else max(4, 8 - (n - 32) / 24)
    labels = []
    for i, key in enumerate(keys):
        labels.append(f"{key[1]} {key[2]}")
        for kind, colour in _KIND_COLOURS.items():
            spans = [(e["ts"] / 1000.0, max(e.get("dur", 0), 1) / 1000.0) for e in rows[key]
                     if _kind(e) == kind]
            if spans:
                ax.broken_barh(spans, (i - 0.4, 0.8), facecolors=colour)
    ax.set_yticks(range(len(labels)), labels, fontsize=font)
    ax.set_ylim(len(labels) - 0.5, -0.5)  # the first row at the top
    ax.set_xlabel("time (ms)")
    cpus = sum(1 for k in keys if k[0] == 0)
    ax.set_title(title or f"Replayed timeline: {cpus} CPU threads, {len(keys) - cpus} GPU streams")
    if 0 < cpus < len(keys):
        ax.axhline(cpus - 0.5, color="#444", lw=0.8)
    kinds = [k for k in _KIND_COLOURS if cpu or k != "CPU operator"]
    handles = [matplotlib.patches.Patch(color=_KIND_COLOURS[k], label=k) for k in kinds]
    legend_outside(ax, handles=handles, title="op kind")
    return ax


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lumos.plot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["pareto", "heatmap", "utilization", "breakdown", "stages",
                                         "timeline", "gpu-utilization"])
    parser.add_argument("input")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--title", help="the picture's title (default: one saying what it shows)")
    a = parser.parse_args(argv)
    matplotlib.use("Agg")  # files only; notebooks keep their own backend
    try:
        if a.kind == "gpu-utilization":
            ax = gpu_utilization(a.input, title=a.title)
        elif a.kind in ("pareto", "heatmap", "utilization"):
            df = read_csv(a.input)  # a shard's CSV starts with a #lumos-sweep line
            ax = {"pareto": pareto_front, "heatmap": sweep_heatmap,
                  "utilization": utilization_curve}[a.kind](df, title=a.title)
        else:
            with open(a.input) as f:
                data = json.load(f)
            ax = {"breakdown": breakdown_bars, "stages": stage_bars,
                  "timeline": timeline_gantt}[a.kind](data, title=a.title)
    except (OSError, KeyError, ValueError) as e:
        print(f"lumos.plot: {a.input}: {e}", file=sys.stderr)
        return 1
    ax.figure.savefig(a.output, dpi=120, bbox_inches="tight")
    print(f"wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
