"""The Python package against the lumos command: the same results for the same inputs, and bad
input raising LumosError with the command's one-line message."""
import json
import os
import pathlib
import subprocess
import threading

import pandas as pd
import pytest

import lumos

SMALL_SWEEP = dict(model="gpt3-15b", layers=8, gpus="16,32", tp=[1, 2, 4], pp=[1, 2], gbs=32,
                   gpu=["h100", "a100"], threads=2)


def cli(binary, *args):
    out = subprocess.run([binary, *map(str, args)], check=True, capture_output=True, text=True)
    return out.stdout


def test_estimate_equals_the_cli_json(lumos_binary):
    e = lumos.estimate(model="gpt3-15b", tp=2, pp=2, dp=4, mbs=1, gbs=64)
    c = json.loads(cli(lumos_binary, "estimate", "--model", "gpt3-15b", "--tp", 2, "--pp", 2,
                       "--dp", 4, "--mbs", 1, "--gbs", 64, "--json"))
    for key in ("step_time_s", "tokens_per_s", "mfu", "breakdown", "memory", "stages", "layout"):
        assert e[key] == c[key], key


def test_reports_carry_the_schema_version_the_package_reads():
    assert lumos.estimate(model="gpt3-15b", tp=2, pp=2, dp=4, mbs=1, gbs=64)["schema_version"] == \
        lumos.SCHEMA_VERSION
    assert lumos.cost.gemm(m=1024, n=1024, k=1024)["schema_version"] == lumos.SCHEMA_VERSION


def test_a_report_of_another_schema_version_is_refused(monkeypatch):
    monkeypatch.setattr(lumos, "run", lambda *args: '{"schema_version": 99, "step_time_s": 1}')
    with pytest.raises(lumos.LumosError, match="schema_version 99"):
        lumos.estimate()


def test_replay_gives_steps_breakdown_and_a_timeline(tmp_path, lumos_binary):
    r = lumos.replay()
    c = json.loads(cli(lumos_binary, "replay", "--json"))
    assert list(r.steps["replayed_us"]) == [s["replayed_us"] for s in c["steps"]]
    assert set(r.breakdown.index) == {"replayed", "measured"}
    assert r.breakdown.loc["replayed", "window_us"] == c["breakdown"]["window_us"]
    assert list(r.critical_path["name"]) == [op["name"] for op in c["critical_path"]["gpu_ops"]]
    path = r.timeline(str(tmp_path / "t.json"))
    assert json.load(open(path))["traceEvents"]


def test_sweep_is_the_variants_csv_as_a_dataframe(tmp_path, lumos_binary):
    df = lumos.sweep(**SMALL_SWEEP)
    out = tmp_path / "v.csv"
    cli(lumos_binary, "sweep", "--model", "gpt3-15b", "--layers", 8, "--gpus", "16,32", "--tp",
        "1,2,4", "--pp", "1,2", "--gbs", 32, "--gpu", "h100,a100", "--threads", 2, "-o", out)
    expected = pd.read_csv(out, keep_default_na=False, na_values=[""])
    pd.testing.assert_frame_equal(df, expected)
    assert len(df) == 2 * 3 * 2 * 2
    assert df["feasible"].isin([0, 1]).all()


def test_pareto_keeps_exactly_the_non_dominated_feasible_rows():
    df = lumos.sweep(**SMALL_SWEEP)
    objectives = ["time_to_train_h", "operational_kg"]
    front = lumos.pareto(df, objectives)
    ok = df[df["feasible"] == 1]
    for _, row in ok.iterrows():
        dominated = ((ok[objectives[0]] <= row[objectives[0]]) &
                     (ok[objectives[1]] <= row[objectives[1]]) &
                     ((ok[objectives[0]] < row[objectives[0]]) |
                      (ok[objectives[1]] < row[objectives[1]]))).any()
        assert dominated != (row["index"] in set(front["index"]))


def test_search_whatif_place_carbon_and_cost_answer(examples):
    s = lumos.search(8, model="llama3-8b", layers=4, gbs=16, top=2)
    # The --top rows are estimated in full: their breakdown cells are filled, the rest empty.
    assert s["bubble_fraction"][:2].notna().all() and s["bubble_fraction"][2:].isna().all()
    assert list(s["rank"][:3]) == [1, 2, 3]
    assert s["tokens_per_s"].is_monotonic_decreasing
    w = lumos.whatif(gpus=["h100", "b200"])
    assert len(w["variants"]) == 2
    p = lumos.place(str(examples / "fleets" / "two-servers.toml"), score_year=True)
    assert [m["chosen"] for m in p["metrics"]] == ["S_B", "S_A", "S_B"]
    c = lumos.carbon(model="gpt3-15b", layers=8, tp=2, pp=2, dp=2, gbs=16, tokens=1e9,
                     region="se")
    assert c["operational_kg"] == pytest.approx(c["energy_kwh"] * 23 / 1000)
    g = lumos.cost.gemm(m=4096, n=4096, k=4096)
    assert g["tflops"] > 0
    coll = lumos.cost.collective(op="allreduce", bytes="1GiB", ranks=8)
    assert coll["time_us"] > 0
    # Version 2 names the bandwidths in GB/s: 1 GiB over time_us gives the algorithm bandwidth.
    assert coll["algbw_gb_per_s"] == pytest.approx(2**30 / coll["time_us"] / 1e3, rel=1e-3)
    assert lumos.cost.attention(batch=1, seq=4096, heads=32, head_dim=128)["time_us"] > 0
    assert lumos.cost.memory(bytes="1GiB")["time_us"] > 0


@pytest.mark.parametrize("call, message", [
    (lambda: lumos.estimate(tp=0), "--tp must be between 1 and 65536"),
    (lambda: lumos.sweep(tp=[]), "--tp: the axis is empty"),
    (lambda: lumos.sweep(o="x.csv"), "o= is the file this function reads back"),
    (lambda: lumos.run(), "give a command"),
    (lambda: lumos.replay("/nonexistent/trace.json"), "/nonexistent/trace.json"),
    (lambda: lumos.carbon(region="atlantis"), "unknown region 'atlantis'"),
    (lambda: lumos.run("frobnicate"), "unknown command 'frobnicate'"),
    (lambda: lumos.estimate(no_such_flag=1), "no-such-flag"),
])
def test_bad_input_raises_lumos_error_with_the_cli_message(call, message):
    with pytest.raises(lumos.LumosError) as info:
        call()
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_replay_of_every_shared_trace_equals_the_cli(lumos_binary):
    base = os.environ.get("LUMOS_TRACE_DIR",
                          str(pathlib.Path(__file__).resolve().parents[2].parent / "shared" /
                              "traces"))
    root = pathlib.Path(base) / "kineto"
    traces = sorted(root.glob("*.json.gz")) if root.exists() else []
    if not traces:
        pytest.skip(f"no shared Kineto traces at {root}")
    for t in traces:
        r = lumos.replay(str(t))
        c = json.loads(cli(lumos_binary, "replay", t, "--json"))
        assert r.raw == c, t


def test_sweep_switches_and_speed_axes_reach_the_command():
    df = lumos.sweep(model="gpt3-15b", layers=8, gpus=16, tp=2, pp=2, gbs=16, gpu="h100",
                     sp=[True, False], speed=["compute=1,2", "comm=1"], threads=2)
    assert sorted(df["sp"].unique()) == [0, 1]
    assert sorted(df["speed"].unique()) == ["compute=1;comm=1", "compute=2;comm=1"]


def test_calls_after_an_error_and_from_threads_still_capture_their_output():
    with pytest.raises(lumos.LumosError):
        lumos.estimate(tp=0)
    assert lumos.estimate()["layout"]["tp"] == 2
    results = []

    def call(tp):
        results.append(lumos.estimate(tp=tp, pp=1, dp=1)["layout"]["tp"])

    threads = [threading.Thread(target=call, args=(tp,)) for tp in (1, 2, 4, 8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [1, 2, 4, 8]
