"""Draws the README's Python pictures (docs/python-*.png) with the lumos package:
build/pyenv/bin/python scripts/python-figures.py (after scripts/python-test.sh installed it)."""
import json
import os
import pathlib
import tempfile

import lumos
from lumos import plot

docs = pathlib.Path(__file__).resolve().parents[1] / "docs"
df = lumos.sweep(model="gpt3-175b", gpus="256..1024", tp=[1, 2, 4, 8], pp=[1, 2, 4, 8, 16],
                 gbs=1536, gpu=["h100", "h200", "b200"], region="se")
ax = plot.pareto_front(df, x="time_to_train_h", y="operational_kg")
ax.set_title("GPT-3 175B, 300B tokens, Sweden: time to train vs carbon")
ax.figure.tight_layout()
ax.figure.savefig(docs / "python-pareto.png", dpi=100)
ax = plot.sweep_heatmap(df[df["gpu"] == "h100"], value="tokens_per_s")
ax.set_title("GPT-3 175B on H100: best tokens/s by TP and PP")
ax.figure.tight_layout()
ax.figure.savefig(docs / "python-heatmap.png", dpi=100)
with tempfile.TemporaryDirectory() as tmp:
    lumos.run("generate", "--model", "gpt3-15b", "--layers", 8, "--tp", 1, "--pp", 4, "--dp", 1,
              "--gbs", 8, "-o", tmp)
    trace = json.load(open(lumos.replay(tmp).timeline(os.path.join(tmp, "timeline.json"))))
ax = plot.timeline_gantt(trace)
ax.set_title("GPT-3 15B (8 layers), 4 pipeline stages, 8 micro-batches: replayed streams")
ax.figure.set_size_inches(10, 4.5)
ax.figure.tight_layout()
ax.figure.savefig(docs / "python-timeline.png", dpi=100)
print("wrote", docs / "python-pareto.png", docs / "python-heatmap.png",
      docs / "python-timeline.png")
