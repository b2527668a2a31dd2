"""Kernel launch overhead: the floor under every short kernel in the cost model.

A one-element in-place add (x.add_(1)) is launched 1000 times back to back:
- eager: from Python, one launch per call, as eager PyTorch training issues kernels;
- cuda_graph: the 1000 launches captured once in a CUDA graph and replayed;
- eager_sync: each launch followed by torch.cuda.synchronize(), the round trip a host that
  waits on the GPU pays.
us_per_launch is GPU time between events around the 1000 launches, divided by 1000;
host_us_per_launch is the host wall clock from the first launch to the end of the final
synchronize, divided by 1000. No L2 flush: the kernel touches 4 bytes.
"""

import statistics
import time

from common import fmt

KIND = "launch"

LAUNCHES = 1000
REPEATS = 7
QUICK_REPEATS = 3
MODES = ("eager", "cuda_graph", "eager_sync")

USES_CUDA_TIMER = False  # its own burst timer below: no L2 flush, fixed launch count

UNITS = {
    "launches": "count",
    "repeats": "count",
    "us_per_launch": "us",
    "us_per_launch_min": "us",
    "host_us_per_launch": "us",
}
MEASUREMENT_FIELDS = ("us_per_launch", "us_per_launch_min", "host_us_per_launch")

METHOD_NOTES = {
    "op": "x.add_(1) on a 1-element fp32 CUDA tensor",
    "timer": "torch.cuda.Event pair around each burst of launches (GPU); time.perf_counter from "
    "the first launch to the end of torch.cuda.synchronize() (host)",
    "statistic": "median over repeats of (elapsed / launches); one untimed repeat first",
}


def configs(quick):
    repeats = QUICK_REPEATS if quick else REPEATS
    return [{"mode": mode, "launches": LAUNCHES, "repeats": repeats} for mode in MODES]


def prepare(bench):
    return None


def measure(cfg, bench, state):
    torch = bench.torch
    x = torch.zeros(1, dtype=torch.float32, device="cuda")
    burst = _BURSTS[cfg["mode"]](torch, x, cfg["launches"])
    burst()  # untimed: first launch, graph upload
    torch.cuda.synchronize()
    gpu_us, host_us = zip(*(_time_burst(torch, burst) for _ in range(cfg["repeats"])))
    n = cfg["launches"]
    return {
        "us_per_launch": statistics.median(gpu_us) / n,
        "us_per_launch_min": min(gpu_us) / n,
        "host_us_per_launch": statistics.median(host_us) / n,
    }


def _time_burst(torch, burst):
    """GPU and host microseconds for one burst of launches."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    start.record()
    burst()
    end.record()
    torch.cuda.synchronize()
    host_us = (time.perf_counter() - t0) * 1e6
    return start.elapsed_time(end) * 1e3, host_us


def _eager_burst(torch, x, n):
    def burst():
        for _ in range(n):
            x.add_(1)
    return burst


def _eager_sync_burst(torch, x, n):
    def burst():
        for _ in range(n):
            x.add_(1)
            torch.cuda.synchronize()
    return burst


def _graph_burst(torch, x, n):
    # Warm up on a side stream before capture, as torch.cuda.graphs recommends, so lazy
    # initialisation does not happen inside the capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(n):
            x.add_(1)
    return graph.replay


_BURSTS = {"eager": _eager_burst, "cuda_graph": _graph_burst, "eager_sync": _eager_sync_burst}
assert set(_BURSTS) == set(MODES)


def headline(rows):
    return ", ".join(
        f"{r['mode']} {fmt(r['us_per_launch'], '.2f')} us/launch" for r in rows
        if r["us_per_launch"] is not None
    )
