"""Typed results: each function returns values (attributes and DataFrames) equal to what the
command's --json report says, and still answers ``result["field"]`` as the report does."""
import json
import os
import pathlib
import subprocess

import pandas as pd
import pytest

import lumos

TRACES = pathlib.Path(os.environ.get(
    "LUMOS_TRACE_DIR", str(pathlib.Path(__file__).resolve().parents[2].parent / "shared" /
                           "traces")))


def cli_json(binary, *args):
    out = subprocess.run([binary, *map(str, args), "--json"], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout)


def test_estimate_is_typed_with_its_tables_as_dataframes(lumos_binary):
    e = lumos.estimate(model="gpt3-15b", layers=8, tp=2, pp=4, dp=1, gbs=16)
    c = cli_json(lumos_binary, "estimate", "--model", "gpt3-15b", "--layers", 8, "--tp", 2,
                 "--pp", 4, "--dp", 1, "--gbs", 16)
    assert isinstance(e, lumos.Estimate)
    assert e.step_time_s == c["step_time_s"] and e.tokens_per_s == c["tokens_per_s"]
    assert e.layout["pp"] == 4 and e.model["name"].startswith("gpt3-15b")
    assert isinstance(e.stages, pd.DataFrame) and list(e.stages["stage"]) == [0, 1, 2, 3]
    assert list(e.stages["breakdown.bubble_us"]) == [s["breakdown"]["bubble_us"]
                                                     for s in c["stages"]]
    assert e.breakdown.loc["step", "window_us"] == c["breakdown"]["window_us"]
    assert e.kernel_time["time_us"].is_monotonic_decreasing
    assert set(e.kernel_time["kernel_class"]) == set(c["kernel_time_us"])
    assert e.memory["total_bytes"] == c["memory"]["total_bytes"]
    assert e.memory_headroom == pytest.approx(1 - c["memory"]["fraction_of_capacity"])
    if c["step_time_range"]["known"]:
        low, high = e.step_time_range_s
        assert low <= e.step_time_s <= high
    assert e["step_time_s"] == c["step_time_s"] and "layout" in e  # the report's fields


def test_carbon_is_typed_and_its_energy_parts_add_up(lumos_binary):
    c = lumos.carbon(model="gpt3-15b", layers=8, tp=2, pp=2, dp=2, gbs=16, tokens=1e9,
                     region="se")
    assert isinstance(c, lumos.Carbon)
    assert c.operational_kg == pytest.approx(c.energy_kwh * 23 / 1000)
    assert c.sci_kg == pytest.approx(c.operational_kg + c.embodied_kg)
    parts = c.energy.set_index("part")["energy_kwh"]
    assert parts[["gpu", "node", "facility"]].sum() == pytest.approx(parts["total"])
    assert c.step_energy_per_gpu.set_index("part").loc["total", "energy_j"] == \
        c["step_energy_per_gpu_j"]["total"]


def test_placement_and_whatif_hold_their_tables(examples):
    p = lumos.place(str(examples / "fleets" / "two-servers.toml"), score_year=True)
    assert isinstance(p, lumos.Placement) and p.fleet == "two-servers"
    assert list(p.metrics["chosen"]) == ["S_B", "S_A", "S_B"]
    assert list(p.servers["name"]) == ["S_A", "S_B"]
    assert p.servers.set_index("name")["sci"].tolist() == [s["sci"] for s in p["servers"]]
    w = lumos.whatif(gpus=["h100", "b200"])
    assert isinstance(w, lumos.WhatIf)
    assert list(w.variants["gpu"]) == ["h100", "b200"]
    assert list(w.pareto["gpu"]) == [v["gpu"] for v in w["variants"] if v["pareto"]]


def test_cost_results_read_as_their_reports():
    g = lumos.cost.gemm(m=1024, n=1024, k=1024)
    assert isinstance(g, lumos.Result) and g["tflops"] > 0


def test_a_folder_replay_has_a_row_per_rank_in_ranks_and_breakdown(lumos_binary):
    folder = TRACES / "param" / "dlrm_kineto"
    if not folder.exists():
        pytest.skip(f"no shared DLRM traces at {folder}")
    r = lumos.replay(str(folder))
    c = cli_json(lumos_binary, "replay", folder)
    assert r.is_job and len(r.ranks) == c["ranks_count"] == 8
    assert list(r.ranks["rank"]) == list(range(8))
    assert len(r.breakdown) == 8 and not r.breakdown.empty
    assert list(r.breakdown.index) == list(range(8))
    assert len(r.collectives) == len(c["collectives"])


def test_a_generated_pipeline_replays_as_a_job_with_a_breakdown_per_rank(tmp_path):
    folder = tmp_path / "job"
    lumos.run("generate", "--model", "gpt3-15b", "--layers", 4, "--tp", 1, "--pp", 2, "--dp", 1,
              "--gbs", 4, "-o", folder)
    r = lumos.replay(str(folder))
    assert r.is_job and len(r.breakdown) == 2 == len(r.ranks)


def test_report_writes_one_html_page_from_values(tmp_path):
    df = lumos.sweep(model="gpt3-15b", layers=8, gpus=16, tp=[1, 2], pp=[1, 2], gbs=16,
                     gpu=["h100", "a100"], threads=2)
    e = lumos.estimate(model="gpt3-15b", layers=8, tp=2, pp=2, dp=4, gbs=16)
    out = lumos.report([df, e, lumos.replay()], str(tmp_path / "r.html"), title="mine")
    html = pathlib.Path(out).read_text()
    assert "<h1>mine</h1>" in html
    assert html.count('class="lumos-data"') == 3
    with pytest.raises(lumos.LumosError, match="not a report lumos report reads"):
        lumos.report([lumos.cost.gemm(m=64, n=64, k=64)], str(tmp_path / "x.html"))
    assert not (tmp_path / "x.html").exists()
