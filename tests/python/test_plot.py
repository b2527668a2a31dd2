"""Every plot draws what it was given: the right number of points, bars or cells, and a PNG."""
import json
import subprocess
import sys

import matplotlib.image
import pandas as pd

import lumos
from lumos import plot

SWEEP = dict(model="gpt3-15b", layers=8, gpus="16,32", tp=[1, 2, 4], pp=[1, 2], gbs=32,
             gpu=["h100", "a100"], threads=2)


def saved_png(ax, path):
    ax.figure.savefig(path)
    image = matplotlib.image.imread(str(path))
    assert image.shape[0] > 100 and image.shape[1] > 100
    assert image.std() > 0  # not blank


def test_pareto_front_highlights_the_front(tmp_path):
    df = lumos.sweep(**SWEEP)
    ax = plot.pareto_front(df)
    points = sum(len(c.get_offsets()) for c in ax.collections if c.get_label() in ("h100", "a100"))
    front = ax.lines[0]
    assert points == int((df["feasible"] == 1).sum())
    assert len(front.get_xdata()) == len(lumos.pareto(df, ["time_to_train_h", "operational_kg"]))
    saved_png(ax, tmp_path / "p.png")


def test_heatmap_has_a_cell_per_tp_and_pp(tmp_path):
    df = lumos.sweep(**SWEEP)
    ax = plot.sweep_heatmap(df)
    assert ax.images[0].get_array().shape == (3, 2)
    saved_png(ax, tmp_path / "h.png")


def test_utilization_breakdown_and_stage_plots(tmp_path, examples):
    curve = tmp_path / "u.csv"
    lumos.run("place", examples / "fleets" / "two-servers.toml", "--utilization", "0:1:0.25",
              "--job-score", 1168, "-o", curve)
    ax = plot.utilization_curve(pd.read_csv(curve))
    assert [len(line.get_xdata()) for line in ax.lines] == [5, 5]
    saved_png(ax, tmp_path / "u.png")
    ax = plot.breakdown_bars(lumos.replay().raw)
    assert len(ax.patches) == 2 * 5  # measured and replayed, five parts each
    saved_png(ax, tmp_path / "b.png")
    e = lumos.estimate(model="gpt3-15b", layers=8, tp=2, pp=4, dp=1, gbs=16)
    ax = plot.stage_bars(e)
    assert len(ax.patches) == 4 * 5
    saved_png(ax, tmp_path / "s.png")


def test_the_plot_command_writes_a_png_and_rejects_bad_input(tmp_path):
    data = tmp_path / "replay.json"
    data.write_text(json.dumps(lumos.replay().raw))
    out = tmp_path / "b.png"
    done = subprocess.run([sys.executable, "-m", "lumos.plot", "breakdown", str(data), "-o",
                           str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 1000
    bad = subprocess.run([sys.executable, "-m", "lumos.plot", "stages", str(data), "-o",
                          str(tmp_path / "x.png")], capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stderr.count("\n") == 1


def test_timeline_is_a_gantt_of_every_gpu_stream_of_a_pipeline(tmp_path):
    folder = tmp_path / "job"
    lumos.run("generate", "--model", "gpt3-15b", "--layers", 4, "--tp", 1, "--pp", 2, "--dp", 1,
              "--gbs", 4, "-o", folder)
    path = lumos.replay(str(folder)).timeline(str(tmp_path / "t.json"))
    trace = json.load(open(path))
    ax = plot.timeline_gantt(trace)
    kernels = [e for e in trace["traceEvents"]
               if e.get("ph") == "X" and str(e.get("pid", "")).startswith("GPU")]
    drawn = sum(len(c.get_paths()) for c in plot.timeline_gantt(trace, cpu=False).collections)
    assert drawn == len(kernels)
    assert len({e["pid"] for e in kernels}) == 2  # one GPU per pipeline stage
    kinds = {plot._kind(e) for e in kernels}
    assert {"forward", "backward", "communication"} <= kinds
    saved_png(ax, tmp_path / "g.png")


def test_gpu_utilization_draws_traced_and_replayed_per_bin(tmp_path):
    csv = tmp_path / "u.csv"
    csv.write_text("rank,bin_start_us,bin_end_us,traced_busy_fraction,replayed_busy_fraction\n"
                   "0,0,1000,0.5,0.4\n0,1000,2000,1,1\n0,2000,3000,0.25,0.5\n"
                   "4,0,1000,1,1\n4,1000,2000,0,0\n4,2000,3000,0,0\n")
    ax = plot.gpu_utilization(str(csv))
    traced, replayed = ax.lines
    assert list(traced.get_xdata()) == [0.5, 1.5, 2.5]  # bin centres in ms
    assert list(traced.get_ydata()) == [50, 100, 25]
    assert list(replayed.get_ydata()) == [40, 100, 50]
    ax = plot.gpu_utilization(pd.read_csv(csv), rank=4)
    assert list(ax.lines[0].get_ydata()) == [100, 0, 0]
    saved_png(ax, tmp_path / "g.png")


def test_gpu_utilization_of_a_replay_and_the_plot_command(tmp_path):
    csv = tmp_path / "u.csv"
    csv.write_text(lumos.run("replay", "--utilization-bin", "500us"))
    df = pd.read_csv(csv)
    ax = plot.gpu_utilization(df)
    assert len(ax.lines[0].get_xdata()) == len(df)
    out = tmp_path / "u.png"
    done = subprocess.run([sys.executable, "-m", "lumos.plot", "gpu-utilization", str(csv), "-o",
                           str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 1000
    bad = subprocess.run([sys.executable, "-m", "lumos.plot", "gpu-utilization",
                          str(tmp_path / "missing.csv"), "-o", str(tmp_path / "x.png")],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stderr.count("\n") == 1
