"""Shared pieces of the calibration suite: the output document, provenance, the CUDA-event
timer with L2 flush, the time budget and the per-row runner.

Nothing here imports PyTorch at module level: the dry run (`calibrate.py --dry-run`) must work
on a machine without it, so the timer receives the `torch` module from the caller.
"""

import json
import math
import os
import platform
import shlex
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone

SCHEMA_VERSION = 1
SCRIPT = "scripts/calibrate/calibrate.py"

# H100/H200 have a 50 MiB L2; writing 256 MiB between iterations evicts everything the timed
# kernel could otherwise find in cache, so each measurement starts from HBM (the cold-cache
# convention of llm.c and triton's do_bench).
L2_FLUSH_BYTES = 256 << 20

# Row status values. "pending" only appears in files written while a run is in progress (or
# killed before it finished), so a partial file still tells which rows were never reached.
STATUS_OK = "ok"
STATUS_UNSUPPORTED = "unsupported"
STATUS_ERROR = "error"
STATUS_SKIPPED = "skipped"
STATUS_PENDING = "pending"
STATUS_DRY_RUN = "dry_run"

# Rewrite a suite's file at most this often while it runs, so a run killed by a time limit
# still leaves the rows measured so far.
CHECKPOINT_INTERVAL_S = 10.0


class Unsupported(Exception):
    """This configuration cannot run with this GPU or PyTorch; its row keeps null values."""


@dataclass(frozen=True)
class TimerSettings:
    """How long to warm up and how many iterations to time, in GPU milliseconds."""

    warmup_ms: float
    target_ms: float
    min_iters: int
    max_iters: int
    max_warmup_iters: int = 25

    def as_dict(self):
        return {
            "warmup_ms": self.warmup_ms,
            "target_ms": self.target_ms,
            "min_iters": self.min_iters,
            "max_iters": self.max_iters,
            "max_warmup_iters": self.max_warmup_iters,
        }


FULL_TIMER = TimerSettings(warmup_ms=20.0, target_ms=50.0, min_iters=5, max_iters=200)
QUICK_TIMER = TimerSettings(warmup_ms=5.0, target_ms=15.0, min_iters=3, max_iters=50)


def timer_settings(quick):
    return QUICK_TIMER if quick else FULL_TIMER


@dataclass(frozen=True)
class Timing:
    """Result of timing one configuration; times in microseconds."""

    median_us: float
    min_us: float
    iters: int


class Budget:
    """A wall-clock deadline shared by all suites of one run (None: no limit)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self._deadline = None if seconds is None else time.monotonic() + seconds

    def exhausted(self):
        return self._deadline is not None and time.monotonic() >= self._deadline


# What every suite timed by CudaTimer records per row, with units.
TIMED_UNITS = {"time_us": "us", "time_us_min": "us", "iters": "count", "tflops": "TFLOP/s"}
TIMED_FIELDS = tuple(TIMED_UNITS)

class CudaTimer:
    """Times a callable on the current CUDA stream with torch.cuda.Event pairs.

    Each iteration: optional untimed `prepare()`, L2 flush, start event, `run(prepared)`, end
    event. The number of warmup and timed iterations adapts to the callable's duration so a
    2 us kernel and a 30 ms GEMM both get a stable median in a bounded time.
    """

    def __init__(self, torch, settings, flush_bytes=L2_FLUSH_BYTES):
        self.torch = torch
        self.settings = settings
        self.flush_bytes = flush_bytes
        self._flush_buf = torch.empty(flush_bytes, dtype=torch.uint8, device="cuda")

    def flush_l2(self):
        self._flush_buf.zero_()

    def time(self, run, prepare=None):
        prepare = prepare or (lambda: None)
        # The first call pays for lazy initialisation (cuBLAS heuristics, cuDNN plans, autograd
        # graph setup); it is neither a warmup nor a sample.
        run(prepare())
        self.torch.cuda.synchronize()
        estimate_ms = max(self._timed_iterations(run, prepare, 1)[0], 1e-3)
        s = self.settings
        n_warmup = _clamp(math.ceil(s.warmup_ms / estimate_ms), 1, s.max_warmup_iters)
        n_iters = _clamp(math.ceil(s.target_ms / estimate_ms), s.min_iters, s.max_iters)
        self._timed_iterations(run, prepare, n_warmup)
        samples_ms = self._timed_iterations(run, prepare, n_iters)
        return Timing(
            median_us=statistics.median(samples_ms) * 1e3,
            min_us=min(samples_ms) * 1e3,
            iters=n_iters,
        )

    def _timed_iterations(self, run, prepare, n):
        cuda = self.torch.cuda
        starts = [cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [cuda.Event(enable_timing=True) for _ in range(n)]
        for start, end in zip(starts, ends):
            prepared = prepare()
            # The flush also gives the host a head start (~60-80 us of GPU work), so the timed
            # kernel is already queued when the start event fires: we time the GPU, not Python.
            self.flush_l2()
            start.record()
            run(prepared)
            end.record()
        cuda.synchronize()
        return [start.elapsed_time(end) for start, end in zip(starts, ends)]


def _clamp(value, low, high):
    return max(low, min(high, value))


@dataclass
class Bench:
    """What a suite's measure function receives in a real run."""

    torch: object
    timer: CudaTimer


# ---------------------------------------------------------------------------------------------
# Provenance


def utc_now_iso():
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def base_provenance(argv):
    """Fields known without a GPU; the GPU fields stay null (the dry run's provenance)."""
    return {
        "gpu": None,
        "driver": None,
        "cuda": None,
        "torch": None,
        "date": utc_now_iso(),
        "host": socket.gethostname(),
        "script": SCRIPT,
        "command": [os.path.basename(sys.executable)] + list(argv),
        "command_line": shlex.join([os.path.basename(sys.executable)] + list(argv)),
        "python": platform.python_version(),
        "git_commit": _git_commit(),
        "gpu_count": None,
        "sm_count": None,
        "compute_capability": None,
        "gpu_memory_gib": None,
        "cudnn": None,
        "power_limit_w": None,
        "sm_clock_max_mhz": None,
        "mem_clock_max_mhz": None,
    }


def gpu_provenance(torch, argv):
    """Full provenance of a measured run on the current CUDA device."""
    prov = base_provenance(argv)
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    prov.update(
        {
            "gpu": props.name,
            "cuda": torch.version.cuda,
            "torch": torch.__version__,
            "gpu_count": torch.cuda.device_count(),
            "sm_count": props.multi_processor_count,
            "compute_capability": f"{props.major}.{props.minor}",
            "gpu_memory_gib": round(props.total_memory / 2**30, 1),
            "cudnn": (torch.backends.cudnn.version()
                      if torch.backends.cudnn.is_available() else None),
        }
    )
    prov.update(_nvidia_smi_fields())
    return prov


def _nvidia_smi_fields():
    """Driver version, power limit and max clocks; clocks and power cap change achieved TFLOP/s.

    Read from the first GPU nvidia-smi lists (all GPUs of a node share a driver; the lent
    machine has one GPU). Missing nvidia-smi leaves the fields null rather than failing a run.
    """
    query = "driver_version,power.limit,clocks.max.sm,clocks.max.memory"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    lines = out.strip().splitlines()
    if not lines:
        return {}
    values = [v.strip() for v in lines[0].split(",")]
    if len(values) != 4:
        return {}
    driver, power, sm_clock, mem_clock = values
    return {
        "driver": driver,
        "power_limit_w": _float_or_none(power),
        "sm_clock_max_mhz": _float_or_none(sm_clock),
        "mem_clock_max_mhz": _float_or_none(mem_clock),
    }


def _float_or_none(text):
    try:
        return float(text)
    except ValueError:
        return None


def _git_commit():
    """Commit of the checkout the script runs from; null when it is not a git work tree."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=os.path.dirname(os.path.abspath(__file__)),
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out or None


# ---------------------------------------------------------------------------------------------
# Rows and documents


def new_row(config, measurement_fields, status):
    row = dict(config)
    row.update({field: None for field in measurement_fields})
    row["status"] = status
    row["note"] = None
    return row


def make_document(suite, *, measured, provenance, method, rows):
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": suite.KIND,
        "measured": measured,
        "provenance": provenance,
        "method": method,
        "units": dict(suite.UNITS),
        "measurement_fields": list(suite.MEASUREMENT_FIELDS),
        "rows": rows,
    }


def write_json_atomic(path, document):
    """Write to a temporary file and rename it, so a reader never sees half a file."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)


def describe_error(exc):
    """One line naming the exception, short enough to keep in a JSON row."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:300]


def log(message):
    print(f"[calibrate] {message}", file=sys.stderr, flush=True)


def fmt(value, spec=".1f", missing="-"):
    """Format a possibly-null measurement for the stdout table."""
    return missing if value is None else format(value, spec)
