"""Draws the README's Python pictures (docs/python-*.png) with the lumos package:
build/pyenv/bin/python scripts/python-figures.py (after scripts/python-test.sh installed it)."""
import pathlib

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
print("wrote", docs / "python-pareto.png", docs / "python-heatmap.png")
