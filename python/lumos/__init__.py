"""lumos in Python: the same commands as the ``lumos`` program, run in process.

Every function runs the C++ command of the same name (``lumos._core.run``) and returns values,
not text: a command's ``--json`` report as a typed result (:class:`Estimate`, :class:`Carbon`,
:class:`Placement`, :class:`WhatIf`, :class:`Replay`; lumos/results.py) with its headline numbers as
attributes and its tables as ``pandas.DataFrame``, and CSV files as DataFrames (read column-wise
by pandas, never row by row in Python). Options are keyword arguments named as the command's flags, with ``_`` for
``-``: ``tp=8`` is ``--tp 8``, ``sp=True`` is ``--sp``, a list is a comma-separated axis. Bad input
raises :class:`LumosError` carrying the command's one-line message.

    >>> import lumos
    >>> e = lumos.estimate(model="gpt3-175b", gpu="h100", tp=8, pp=8, dp=16, gbs=1536)
    >>> e.step_time_s, e.tokens_per_s, e.stages      # e["step_time_s"]: the report's field
    >>> df = lumos.sweep(gpus="256..1024", gpu=["h100", "b200"])
    >>> front = lumos.pareto(df, ["time_to_train_h", "gpu_hours", "operational_kg"])
"""
from __future__ import annotations

import json
import os
import tempfile
import warnings
from typing import Any, Dict, List, Optional, Sequence

import pandas as pd

from . import _core
from ._core import LumosError
from .results import Carbon, Estimate, Placement, Replay, Result, WhatIf

__all__ = [
    "LumosError",
    "Result",
    "Estimate",
    "Carbon",
    "Placement",
    "WhatIf",
    "Replay",
    "run",
    "replay",
    "estimate",
    "search",
    "whatif",
    "sweep",
    "pareto",
    "read_csv",
    "place",
    "carbon",
    "cost",
    "report",
]


# Options that take on/off (a sweep's switches are axes) rather than being switches themselves.
_ON_OFF = {"sp", "dist_opt", "fsdp", "fold", "overlap_grad_reduce"}
# Options given once per value, and --speed, whose axes are separated by ';'.
_REPEATED = {"slow_rank", "skew"}


def _text(value: Any, on_off: bool) -> str:
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return ("on" if value else "off") if on_off else str(bool(value)).lower()
    return str(value)


def _flags(options: Dict[str, Any], on_off: Sequence[str] = ()) -> List[str]:
    """Keyword arguments as command-line flags: ``tp=8`` is ``--tp 8``, ``sp=True`` is ``--sp``
    (``--sp on`` for the options in ``on_off``), a list is an axis (``1,2,4``)."""
    args: List[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        switch = isinstance(value, bool) or type(value).__name__ == "bool_"
        if value is None or (switch and not value and key not in on_off):
            continue
        if switch and key not in on_off:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            if key in _REPEATED:
                for v in value:
                    args += [flag, _text(v, key in on_off)]
            else:
                sep = ";" if key == "speed" else ","
                args += [flag, sep.join(_text(v, key in on_off) for v in value)]
        else:
            args += [flag, _text(value, key in on_off)]
    return args


def _no_output_flags(options: Dict[str, Any], *names: str) -> None:
    for name in names:
        if name in options:
            raise LumosError(f"lumos: {name}= is the file this function reads back; leave it out")


def run(*args: Any) -> str:
    """Runs ``lumos ARGS...`` in process and returns what it printed on standard output.

    Raises LumosError with the command's one-line message when the input is bad.
    """
    if not args:
        raise LumosError('lumos: give a command (lumos.run("--help") lists them)')
    out, err = _core.run([str(a) for a in args])
    if err:
        # What the command warns about on stderr (clock skew in a trace, ...), as Python warnings.
        for line in err.decode("utf-8", errors="replace").splitlines():
            if line.strip():
                warnings.warn(line, stacklevel=2)
    return out.decode("utf-8", errors="replace")


# The version of lumos's JSON reports this package reads (docs/reference/outputs.md): a report of
# another version has fields this package does not know, so it is refused rather than misread.
SCHEMA_VERSION = 1
# `lumos cost collective --json` is at version 2: its bandwidths are named in GB/s
# (algbw_gb_per_s, busbw_gb_per_s), where version 1 named them *_gbps.
COLLECTIVE_SCHEMA_VERSION = 2


def _json(*args: Any, schema_version: int = SCHEMA_VERSION) -> Dict[str, Any]:
    doc = json.loads(run(*args, "--json"))
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if version != schema_version:
        raise LumosError(
            f"lumos {args[0]}: the report has schema_version {version}, this package reads "
            f"{schema_version} (install the package and the lumos library from one checkout)"
        )
    return doc


def read_csv(path: str) -> pd.DataFrame:
    """A CSV that lumos wrote, as a DataFrame. Lines starting with ``#`` before the column names
    (the ``#lumos-sweep`` line of a ``lumos sweep --shard`` file) are skipped."""
    skip = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                break
            skip += 1
    return pd.read_csv(path, skiprows=skip, keep_default_na=False, na_values=[""])


def _csv_from(*args: Any, flag: str) -> pd.DataFrame:
    """Runs a command that writes a CSV to the file after ``flag`` and reads it back."""
    with tempfile.TemporaryDirectory(prefix="lumos_") as tmp:
        path = os.path.join(tmp, "out.csv")
        run(*args, flag, path)
        return read_csv(path)


def replay(path: str = "", **options: Any) -> Replay:
    """Replays a Kineto trace, a .lgraph file or a folder of per-rank traces ("" is the embedded
    demo trace): steps measured against replayed, breakdown, streams, critical path."""
    flags = _flags(options)
    return Replay(_json("replay", path, *flags), source=path, options=flags)


def estimate(**options: Any) -> Estimate:
    """Model-driven estimate of one training iteration (``lumos estimate --json``): step time,
    tokens/s, MFU as attributes; breakdown, stages, kernel time as DataFrames."""
    return Estimate(_json("estimate", *_flags(options, on_off={"overlap_grad_reduce"})))


def search(gpus: int, **options: Any) -> pd.DataFrame:
    """Layout search on ``gpus`` GPUs (``lumos estimate --search``): every layout that fits,
    fastest first."""
    _no_output_flags(options, "csv")
    return _csv_from("estimate", "--search", "--gpus", gpus, *_flags(options), flag="--csv")


def whatif(trace: str = "", **options: Any) -> WhatIf:
    """What-if replays of a trace (``lumos whatif --json``): GPUs, speed-ups, structural edits;
    ``variants`` and ``pareto`` as DataFrames."""
    return WhatIf(_json("whatif", trace, *_flags(options)))


def sweep(spec: Optional[str] = None, **options: Any) -> pd.DataFrame:
    """A sweep (``lumos sweep``): one row per configuration, the variants CSV as a DataFrame.
    ``spec``: a sweep TOML file; options are the command's axes (``gpus="64..1024"``,
    ``tp=[1, 2, 4, 8]``, ``gpu=["h100", "b200"]``, ``region="se"``, ...)."""
    _no_output_flags(options, "o", "output")
    args = ["sweep"] + (["--spec", spec] if spec else []) + _flags(options, on_off=_ON_OFF)
    return _csv_from(*args, flag="-o")


def pareto(df: pd.DataFrame, objectives: Sequence[str]) -> pd.DataFrame:
    """The Pareto front of a variants table over 2 or 3 objectives (minimised; a ``-`` prefix
    maximises), computed by ``lumos pareto``: only rows whose ``feasible`` column is 1 count."""
    with tempfile.TemporaryDirectory(prefix="lumos_") as tmp:
        source = os.path.join(tmp, "in.csv")
        df.to_csv(source, index=False)
        return _csv_from("pareto", source, "--objectives", ",".join(objectives), flag="-o")


def place(fleet: str, jobs: Optional[str] = None, **options: Any) -> Placement:
    """Places jobs on a fleet by oSCI, SCI and tSCI (``lumos place --json``): ``jobs`` (a jobs
    file), or ``sweep=`` (a variants CSV), ``score_year=True``, ``utilization="0:1:0.05"`` with
    ``job_score=`` or ``case_study=True`` (``case_study_model="fleet"`` for the fleet footprint), or
    ``sweep_grid_intensity="0:600:10"`` / ``sweep_lifetime="3:12:1"`` (the sensitivity sweeps)."""
    return Placement(_json("place", fleet, *_flags(dict(jobs=jobs, **options))))


def carbon(**options: Any) -> Carbon:
    """Energy and carbon of one configuration (``lumos carbon --json``): an estimate's options,
    or ``trace=``; ``region=`` or ``grid_series=`` with ``start=`` and ``window_end=``. Totals as
    attributes (kWh, kg CO2e); energy by part as a DataFrame."""
    return Carbon(_json("carbon", *_flags(options, on_off={"overlap_grad_reduce"})))


class cost:  # noqa: N801 - a namespace, as in ``lumos cost gemm``
    """The kernel and collective cost model (``lumos cost KIND --json``)."""

    @staticmethod
    def gemm(**options: Any) -> Result:
        """A GEMM's time and TFLOP/s (m=, n=, k=, gpu=, dtype=)."""
        return Result(_json("cost", "gemm", *_flags(options)))

    @staticmethod
    def attention(**options: Any) -> Result:
        """An attention kernel's time (batch=, seq=, heads=, head_dim=, gpu=, causal=True)."""
        return Result(_json("cost", "attention", *_flags(options)))

    @staticmethod
    def collective(**options: Any) -> Result:
        """An NCCL collective's time, algorithm and bus bandwidth (op=, bytes=, ranks=, ranks_per_node=)."""
        return Result(
            _json(
                "cost",
                "collective",
                *_flags(options),
                schema_version=COLLECTIVE_SCHEMA_VERSION,
            )
        )

    @staticmethod
    def memory(**options: Any) -> Result:
        """A memory-bound kernel's time moving bytes= on gpu=."""
        return Result(_json("cost", "memory", *_flags(options)))


def report(inputs: Sequence[Any], output: str, title: Optional[str] = None) -> str:
    """One self-contained HTML page (``lumos report``) from sweep DataFrames or variants CSVs and
    results of :func:`replay`, :func:`estimate` and :func:`carbon` (or their --json files), each
    a part of the page in the order given; returns ``output``."""
    with tempfile.TemporaryDirectory(prefix="lumos_") as tmp:
        paths = []
        for i, item in enumerate(inputs):
            if isinstance(item, pd.DataFrame):
                paths.append(os.path.join(tmp, f"input{i}.csv"))
                item.to_csv(paths[-1], index=False)
            elif isinstance(item, Result):
                paths.append(os.path.join(tmp, f"input{i}.json"))
                with open(paths[-1], "w", encoding="utf-8") as f:
                    json.dump(item.raw, f)
            else:
                paths.append(str(item))
        run("report", *paths, "-o", output, *(["--title", title] if title else []))
    return output
