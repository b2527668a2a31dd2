"""Pictures of lumos results (matplotlib), as functions and as a command:

    python -m lumos.plot KIND INPUT -o OUT.png

KIND: ``pareto`` (a variants CSV: time to train against operational carbon, the front
highlighted), ``heatmap`` (a variants CSV: TP x PP coloured by the best tokens/s), ``utilization``
(a ``lumos place --utilization`` CSV: carbon SCI and tSCI add over oSCI), ``breakdown`` (a
``lumos replay --json`` file: measured and replayed step breakdown), ``stages`` (a ``lumos
estimate --json`` file: each pipeline stage's compute, communication and bubble), ``timeline``
(a Chrome trace from ``lumos replay --timeline`` or ``Replay.timeline()``: a Gantt chart of every
GPU stream, forward and backward compute, communication and copies; replay a ``lumos generate``
folder for a pipeline's), ``gpu-utilization`` (a ``lumos replay --utilization-bin`` CSV: the traced
and the replayed GPU busy fraction per bin, as Lumos's Figure 6).
Every function returns the matplotlib Axes it drew on.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, Optional, Sequence

import matplotlib
import matplotlib.patches
import matplotlib.pyplot as plt
import pandas as pd

from . import read_csv

_BREAKDOWN = ["exposed_compute_us", "overlapped_us", "exposed_comm_us", "bubble_us", "other_us"]


def _axes(ax):
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    return ax


def pareto_front(df: pd.DataFrame, x: str = "time_to_train_h", y: str = "operational_kg",
                 objectives: Optional[Sequence[str]] = None, ax=None, label: str = "gpu"):
    """Feasible configurations as points, the Pareto front over ``objectives`` (default x and
    y) highlighted and labelled by ``label``."""
    from . import pareto

    ax = _axes(ax)
    ok = df[df["feasible"] == 1]
    front = pareto(df, list(objectives or [x, y]))
    ax.scatter(ok[x], ok[y], s=10, color="#bbbbbb", label="feasible configurations")
    front = front.sort_values(x)
    ax.plot(front[x], front[y], "o-", color="#d62728", label="Pareto front")
    for _, row in front.iterrows():
        ax.annotate(f"{row[label]} {row['gpus']}", (row[x], row[y]), fontsize=7,
                    xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.legend()
    return ax


def sweep_heatmap(df: pd.DataFrame, value: str = "tokens_per_s", rows: str = "tp",
                  cols: str = "pp", ax=None):
    """The best ``value`` of the feasible configurations for each (rows, cols) pair."""
    ax = _axes(ax)
    ok = df[df["feasible"] == 1]
    grid = ok.pivot_table(index=rows, columns=cols, values=value, aggfunc="max")
    image = ax.imshow(grid.values, cmap="viridis", origin="lower", aspect="auto")
    ax.set_xticks(range(len(grid.columns)), [str(c) for c in grid.columns])
    ax.set_yticks(range(len(grid.index)), [str(r) for r in grid.index])
    ax.set_xlabel(cols)
    ax.set_ylabel(rows)
    ax.figure.colorbar(image, ax=ax, label=f"best {value}")
    return ax


def utilization_curve(df: pd.DataFrame, ax=None):
    """The carbon SCI and tSCI placements add over oSCI, against the fleet's utilization."""
    ax = _axes(ax)
    ax.plot(df["utilization"] * 100, df["added_sci"] * 100, color="#d62728", label="SCI over oSCI")
    ax.plot(df["utilization"] * 100, df["added_tsci"] * 100, color="#1f77b4",
            label="tSCI over oSCI")
    ax.set_xlabel("fleet utilization (%)")
    ax.set_ylabel("added cluster carbon footprint (%)")
    ax.legend()
    return ax


def gpu_utilization(data, rank: Optional[int] = None, ax=None):
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
    ax.legend()
    return ax


def breakdown_bars(replay_json: Dict[str, Any], ax=None):
    """Measured and replayed step breakdown of a replay, as stacked bars."""
    ax = _axes(ax)
    bars = {k: replay_json[k] for k in ("measured_breakdown", "breakdown") if k in replay_json}
    names = ["measured" if k == "measured_breakdown" else "replayed" for k in bars]
    bottom = [0.0] * len(bars)
    for part in _BREAKDOWN:
        values = [b.get(part, 0) / 1000.0 for b in bars.values()]
        ax.bar(names, values, bottom=bottom, label=part.replace("_us", ""))
        bottom = [a + v for a, v in zip(bottom, values)]
    ax.set_ylabel("ms")
    ax.legend(fontsize=8)
    return ax


def stage_bars(estimate_json: Dict[str, Any], ax=None):
    """Each pipeline stage's exposed compute, overlap, exposed communication and bubble."""
    ax = _axes(ax)
    stages = estimate_json["stages"]
    names = [str(s["stage"]) for s in stages]
    bottom = [0.0] * len(stages)
    for part in _BREAKDOWN:
        values = [s["breakdown"].get(part, 0) / 1e6 for s in stages]
        ax.bar(names, values, bottom=bottom, label=part.replace("_us", ""))
        bottom = [a + v for a, v in zip(bottom, values)]
    ax.set_xlabel("pipeline stage")
    ax.set_ylabel("s")
    ax.legend(fontsize=8)
    return ax


_KIND_COLOURS = {"forward": "#1f77b4", "backward": "#ff7f0e", "communication": "#d62728",
                 "memory copy": "#2ca02c"}
_BACKWARD_MARKS = ("bwd", "backward", "grad")


def _kind(event: Dict[str, Any]) -> str:
    """Forward or backward compute (by the kernel's name: bwd, backward, dgrad, wgrad, ...),
    communication or a memory copy."""
    cls = event.get("args", {}).get("class", "compute")
    if cls == "comm":
        return "communication"
    if cls == "memory":
        return "memory copy"
    name = str(event.get("name", "")).lower()
    return "backward" if any(m in name for m in _BACKWARD_MARKS) else "forward"


def timeline_gantt(trace: Dict[str, Any], ax=None):
    """A Gantt chart of a replayed timeline's GPU streams (one row per GPU and stream), kernels
    coloured by kind: forward and backward compute, communication, memory copies."""
    ax = _axes(ax)
    rows: Dict[tuple, list] = {}
    for e in trace["traceEvents"]:
        if e.get("ph") != "X" or not str(e.get("pid", "")).startswith("GPU"):
            continue
        rows.setdefault((str(e["pid"]), str(e["tid"])), []).append(e)
    labels = []
    for i, (key, events) in enumerate(sorted(rows.items())):
        labels.append(f"{key[0]} {key[1]}")
        for kind, colour in _KIND_COLOURS.items():
            spans = [(e["ts"] / 1000.0, max(e["dur"], 1) / 1000.0) for e in events
                     if _kind(e) == kind]
            if spans:
                ax.broken_barh(spans, (i - 0.4, 0.8), facecolors=colour)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.set_xlabel("ms")
    handles = [matplotlib.patches.Patch(color=c, label=n) for n, c in _KIND_COLOURS.items()]
    ax.legend(handles=handles, fontsize=8, loc="upper right")
    return ax


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lumos.plot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["pareto", "heatmap", "utilization", "breakdown", "stages",
                                         "timeline", "gpu-utilization"])
    parser.add_argument("input")
    parser.add_argument("-o", "--output", required=True)
    a = parser.parse_args(argv)
    matplotlib.use("Agg")  # files only; notebooks keep their own backend
    try:
        if a.kind == "gpu-utilization":
            ax = gpu_utilization(a.input)
        elif a.kind in ("pareto", "heatmap", "utilization"):
            df = read_csv(a.input)  # a shard's CSV starts with a #lumos-sweep line
            ax = {"pareto": pareto_front, "heatmap": sweep_heatmap,
                  "utilization": utilization_curve}[a.kind](df)
        else:
            with open(a.input) as f:
                data = json.load(f)
            ax = {"breakdown": breakdown_bars, "stages": stage_bars,
                  "timeline": timeline_gantt}[a.kind](data)
    except (OSError, KeyError, ValueError) as e:
        print(f"lumos.plot: {a.input}: {e}", file=sys.stderr)
        return 1
    ax.figure.tight_layout()
    ax.figure.savefig(a.output, dpi=120)
    print(f"wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
