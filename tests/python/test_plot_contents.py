"""What the plots say: titles, axis labels with units, legends outside the data, GPU types as
colours, Pareto labels that do not overlap, annotated and explained heat-map cells, and a Gantt
of CPU threads and GPU streams that grows with its rows."""
import json

import matplotlib
import pandas as pd
import pytest

import lumos
from lumos import plot

matplotlib.use("Agg")

SWEEP = dict(model="gpt3-15b", layers=8, gpus="16,32", tp=[1, 2, 4], pp=[1, 2], gbs=32,
             gpu=["h100", "a100"], threads=2)


@pytest.fixture(scope="module")
def variants():
    return lumos.sweep(**SWEEP)


def legend_is_outside(ax):
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    axes = ax.get_window_extent(renderer)
    return legend.x0 >= axes.x1 or legend.y1 <= axes.y0


def has_unit(text):
    return "(" in text and ")" in text


def test_pareto_front_has_title_units_gpu_colours_and_an_outside_legend(variants):
    ax = plot.pareto_front(variants)
    assert ax.get_title()
    assert ax.get_xlabel() == "time to train (h)"
    assert ax.get_ylabel() == "operational carbon (kg CO2e)"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"h100", "a100", "Pareto front"} <= set(legend)
    colours = {c.get_label(): tuple(c.get_facecolor()[0]) for c in ax.collections
               if c.get_label() in ("h100", "a100")}
    assert colours["h100"] != colours["a100"]
    assert legend_is_outside(ax)


def test_pareto_front_labels_give_the_layout_and_never_overlap(variants):
    ax = plot.pareto_front(variants)
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    labels = [t for t in ax.texts if "GPUs" in t.get_text()]
    assert labels, "the front is labelled"
    assert all("tp" in t.get_text() and "pp" in t.get_text() and "dp" in t.get_text()
               for t in labels)
    boxes = [t.get_window_extent(renderer) for t in labels]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b)


def test_heatmap_annotates_every_feasible_cell_and_explains_the_others():
    df = pd.DataFrame({"tp": [1, 1, 2, 2], "pp": [1, 2, 1, 2], "feasible": [1, 0, 1, 1],
                       "reason": ["", "does not fit in memory (92 GiB of 80)", "", ""],
                       "tokens_per_s": [1.5e6, 0, 2.0e5, 9.8e4], "gpu": ["h100"] * 4})
    ax = plot.sweep_heatmap(df)
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts == sorted(["1.50 M", "200 k", "98.0 k", "does not fit in memory"])
    assert ax.get_title() and ax.get_xlabel() == "pipeline parallel (PP)"
    assert "no feasible configuration" in ax.get_legend().get_texts()[0].get_text()
    assert any(p.get_hatch() for p in ax.patches)


def test_bars_and_curves_have_titles_units_and_outside_legends(examples):
    for ax in (plot.breakdown_bars(lumos.replay().raw),
               plot.stage_bars(lumos.estimate(model="gpt3-15b", layers=8, tp=2, pp=4, dp=1,
                                              gbs=16))):
        assert ax.get_title() and has_unit(ax.get_ylabel())
        assert "pipeline bubble" in [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend_is_outside(ax)


def test_gantt_draws_cpu_threads_above_gpu_streams(tmp_path):
    trace = json.load(open(lumos.replay().timeline(str(tmp_path / "t.json"))))
    ax = plot.timeline_gantt(trace)
    ops = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert sum(len(c.get_paths()) for c in ax.collections) == len(ops)
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert any(r.startswith("CPU") for r in rows) and any(r.startswith("GPU") for r in rows)
    first_gpu = next(i for i, r in enumerate(rows) if r.startswith("GPU"))
    assert all(r.startswith("CPU") for r in rows[:first_gpu])
    assert ax.get_xlabel() == "time (ms)" and "CPU threads" in ax.get_title()
    assert "CPU operator" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend_is_outside(ax)
    gpu_only = plot.timeline_gantt(trace, cpu=False)
    assert all(t.get_text().startswith("GPU") for t in gpu_only.get_yticklabels())


def test_gantt_of_many_streams_grows_and_keeps_every_label():
    events = [{"ph": "X", "pid": f"GPU {g}", "tid": f"stream {s}", "name": "k", "ts": 10 * s,
               "dur": 5, "args": {"class": "compute"}} for g in range(8) for s in range(8)]
    ax = plot.timeline_gantt({"traceEvents": events})
    assert len(ax.get_yticklabels()) == 64
    assert ax.figure.get_size_inches()[1] > 15
    assert [t.get_text() for t in ax.get_yticklabels()][:3] == ["GPU 0 stream 0",
                                                                 "GPU 0 stream 1",
                                                                 "GPU 0 stream 2"]
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.get_yticklabels()]
    assert all(not a.overlaps(b) for a, b in zip(boxes, boxes[1:]))


def test_engineering_notation():
    assert [plot.eng(v) for v in (1.0e6, 85300, 105, 0.5, 9.759e5)] == \
        ["1.00 M", "85.3 k", "105", "0.50", "976 k"]
