"""Typed results of the lumos commands: each is built from the command's ``--json`` report.

Every result keeps the report as it was printed in ``raw`` (and answers ``result["field"]`` as the
dict did), names its headline numbers as attributes, and holds its tables as pandas DataFrames.
Fields are read by name and a field a report lacks is ``None`` (or an empty DataFrame), so a
report that gains fields still reads.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pandas as pd


def _frame(rows: Any) -> pd.DataFrame:
    """A list of JSON objects as a DataFrame, nested objects flattened to ``outer.inner``."""
    if not isinstance(rows, list) or not rows:
        return pd.DataFrame()
    if not all(isinstance(r, dict) for r in rows):
        return pd.DataFrame({"value": rows})
    return pd.json_normalize(rows)


def _tables(raw: Dict[str, Any]) -> Dict[str, pd.DataFrame]:
    """Every top-level list of objects in a report, as a DataFrame by its field name."""
    return {k: _frame(v) for k, v in raw.items()
            if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)}


@dataclass
class Result:
    """A ``--json`` report: ``raw`` is the report, ``tables`` its lists of objects as DataFrames.
    ``result["field"]``, ``"field" in result``, ``result.get(...)`` and ``result.keys()`` read
    ``raw``."""

    raw: Dict[str, Any]
    tables: Dict[str, pd.DataFrame] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.tables = _tables(self.raw)

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __contains__(self, key: object) -> bool:
        return key in self.raw

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def keys(self):
        return self.raw.keys()


@dataclass
class Estimate(Result):
    """``lumos estimate --json``: one training iteration of a model on a layout.

    ``breakdown``: one row ("step") of the step's parts in µs (``window_us``,
    ``exposed_compute_us``, ``overlapped_us``, ``exposed_comm_us``, ``bubble_us``, ``other_us``);
    ``stages``: one row per pipeline stage (its breakdown as ``breakdown.<part>`` columns);
    ``kernel_time``: time by kernel class (µs), largest first; ``memory``: the most loaded stage's
    memory (bytes) as a Series."""

    step_time_s: float = field(init=False)
    tokens_per_s: float = field(init=False)
    mfu: Optional[float] = field(init=False)
    step_time_range_s: Optional[Tuple[float, float]] = field(init=False)
    layout: Dict[str, Any] = field(init=False)
    model: Dict[str, Any] = field(init=False)
    breakdown: pd.DataFrame = field(init=False, repr=False)
    stages: pd.DataFrame = field(init=False, repr=False)
    kernel_time: pd.DataFrame = field(init=False, repr=False)
    memory: pd.Series = field(init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        r = self.raw
        self.step_time_s = float(r.get("step_time_s", float("nan")))
        self.tokens_per_s = float(r.get("tokens_per_s", float("nan")))
        self.mfu = r.get("mfu")
        span = r.get("step_time_range") or {}
        self.step_time_range_s = ((span["low_s"], span["high_s"])
                                  if span.get("known") and "low_s" in span else None)
        self.layout = dict(r.get("layout", {}))
        self.model = dict(r.get("model", {}))
        self.breakdown = pd.DataFrame([r.get("breakdown", {})], index=["step"])
        self.stages = self.tables.get("stages", pd.DataFrame())
        kernels = r.get("kernel_time_us", {})
        self.kernel_time = (pd.DataFrame({"kernel_class": list(kernels),
                                          "time_us": list(kernels.values())})
                            .sort_values("time_us", ascending=False, ignore_index=True))
        self.memory = pd.Series(r.get("memory", {}), dtype=object)

    @property
    def memory_headroom(self) -> Optional[float]:
        """The fraction of GPU memory left free on the most loaded stage (0.08 = 8%)."""
        used = self.raw.get("memory", {}).get("fraction_of_capacity")
        return None if used is None else 1.0 - used


@dataclass
class Carbon(Result):
    """``lumos carbon --json``: energy and carbon of a training run.

    ``energy``: kWh by part (GPU, node, facility, total); ``step_energy_per_gpu``: joules per GPU
    and step by part; the totals as attributes (kWh, kg CO2e, hours)."""

    energy_kwh: float = field(init=False)
    operational_kg: float = field(init=False)
    embodied_kg: Optional[float] = field(init=False)
    sci_kg: Optional[float] = field(init=False)
    hours: Optional[float] = field(init=False)
    grid_g_per_kwh: Optional[float] = field(init=False)
    energy: pd.DataFrame = field(init=False, repr=False)
    step_energy_per_gpu: pd.DataFrame = field(init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        r = self.raw
        self.energy_kwh = float(r.get("energy_kwh", float("nan")))
        self.operational_kg = float(r.get("operational_kg", float("nan")))
        self.embodied_kg = r.get("embodied_kg")
        self.sci_kg = r.get("sci_kg")
        self.hours = r.get("hours")
        self.grid_g_per_kwh = r.get("grid_g_per_kwh")
        parts = [p for p in ("gpu", "node", "facility") if f"{p}_energy_kwh" in r]
        self.energy = pd.DataFrame(
            {"part": parts + ["total"],
             "energy_kwh": [r[f"{p}_energy_kwh"] for p in parts] + [self.energy_kwh]})
        per_gpu = r.get("step_energy_per_gpu_j", {})
        self.step_energy_per_gpu = pd.DataFrame({"part": list(per_gpu),
                                                 "energy_j": list(per_gpu.values())})


@dataclass
class Placement(Result):
    """``lumos place --json``: ``servers`` (each server type's m, o, SCI, tSCI, oSCI),
    ``metrics`` (the server each score chooses and what it costs the fleet), and every other
    table of the report (placements, a utilization or sensitivity sweep) in ``tables``."""

    fleet: Optional[str] = field(init=False)
    servers: pd.DataFrame = field(init=False, repr=False)
    metrics: pd.DataFrame = field(init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.fleet = self.raw.get("fleet")
        self.servers = self.tables.get("servers", pd.DataFrame())
        self.metrics = self.tables.get("metrics", pd.DataFrame())


@dataclass
class WhatIf(Result):
    """``lumos whatif --json``: ``variants`` (one row per variant: replayed step, energy,
    critical-path compute and communication, whether it is on the Pareto front) and ``pareto``
    (those on the front)."""

    input: Optional[str] = field(init=False)
    variants: pd.DataFrame = field(init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.input = self.raw.get("input")
        self.variants = self.tables.get("variants", pd.DataFrame())

    @property
    def pareto(self) -> pd.DataFrame:
        v = self.variants
        return v[v["pareto"].astype(bool)] if "pareto" in v else v.iloc[0:0]


@dataclass
class Replay(Result):
    """What ``lumos replay --json`` answers for one trace, or for a folder of per-rank traces.

    ``steps``: measured against replayed; ``breakdown``: for one trace its replayed (and measured)
    breakdown, one row each; for a folder one row per rank (each rank's breakdown where the report
    has it, else its measured and replayed step); ``ranks`` and ``collectives`` (a folder): one
    row per rank and per collective; ``streams``: busy time per GPU stream."""

    source: str = ""  # the path replayed ("" = the embedded demo trace)
    options: List[str] = field(default_factory=list)
    steps: pd.DataFrame = field(init=False, repr=False)
    breakdown: pd.DataFrame = field(init=False, repr=False)
    streams: pd.DataFrame = field(init=False, repr=False)
    ranks: pd.DataFrame = field(init=False, repr=False)
    collectives: pd.DataFrame = field(init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        r = self.raw
        self.steps = pd.DataFrame(r.get("steps", []))
        self.streams = pd.DataFrame(r.get("streams", []))
        self.ranks = self.tables.get("ranks", pd.DataFrame())
        self.collectives = self.tables.get("collectives", pd.DataFrame())
        if "breakdown" in r:
            rows = {"replayed": r["breakdown"]}
            if "measured_breakdown" in r:
                rows["measured"] = r["measured_breakdown"]
            self.breakdown = pd.DataFrame(rows).T
        else:
            self.breakdown = self._rank_breakdown(r.get("ranks", []))

    @staticmethod
    def _rank_breakdown(ranks: List[Dict[str, Any]]) -> pd.DataFrame:
        if not ranks:
            return pd.DataFrame()
        if all(isinstance(k.get("breakdown"), dict) for k in ranks):
            rows = [k["breakdown"] for k in ranks]
        else:
            rows = [{c: k[c] for c in ("measured_us", "replayed_us") if c in k} for k in ranks]
        return pd.DataFrame(rows, index=pd.Index([k.get("rank") for k in ranks], name="rank"))

    @property
    def is_job(self) -> bool:
        """Whether this is a folder of per-rank traces replayed together."""
        return "ranks" in self.raw

    @property
    def critical_path(self) -> pd.DataFrame:
        """The GPU ops on the critical path, in order (``raw["critical_path"]`` has its totals:
        length, CPU, compute, communication and memory time)."""
        return pd.DataFrame(self.raw.get("critical_path", {}).get("gpu_ops", []))

    def timeline(self, path: str) -> str:
        """Writes the replayed timeline as a Chrome trace (open in Perfetto); returns the path."""
        from . import run

        run("replay", self.source, *self.options, "--timeline", path)
        return path
