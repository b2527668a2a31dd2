"""Draws the README's Python pictures (docs/python-*.png) with the lumos package:
build/pyenv/bin/python scripts/python-figures.py (after scripts/python-test.sh installed it)."""
import json
import os
import pathlib
import tempfile

import matplotlib

matplotlib.use("Agg")

import lumos  # noqa: E402
from lumos import plot  # noqa: E402

docs = pathlib.Path(__file__).resolve().parents[1] / "docs"


def save(ax, name):
    ax.figure.savefig(docs / name, dpi=100, bbox_inches="tight")
    print("wrote", docs / name)


df = lumos.sweep(model="gpt3-175b", gpus="256..1024", tp=[1, 2, 4, 8], pp=[1, 2, 4, 8, 16],
                 gbs=1536, gpu=["h100", "h200", "b200"], region="se")
save(plot.pareto_front(df, x="time_to_train_h", y="operational_kg",
                       title="GPT-3 175B, 300B tokens, Sweden: time to train against carbon"),
     "python-pareto.png")
save(plot.sweep_heatmap(df[df["gpu"] == "h100"], value="tokens_per_s",
                        title="GPT-3 175B on H100: best tokens/s by TP and PP"),
     "python-heatmap.png")
with tempfile.TemporaryDirectory() as tmp:
    lumos.run("generate", "--model", "gpt3-15b", "--layers", 8, "--tp", 1, "--pp", 4, "--dp", 1,
              "--gbs", 8, "-o", tmp)
    trace = json.load(open(lumos.replay(tmp).timeline(os.path.join(tmp, "timeline.json"))))
save(plot.timeline_gantt(
    trace, title="GPT-3 15B (8 layers), 4 pipeline stages, 8 micro-batches: CPU threads and "
                 "GPU streams"), "python-timeline.png")
