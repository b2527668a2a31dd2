"""What calling lumos from Python costs over the command: the same sweep of 12,672 configurations
(the "Folded layers" sweep of docs/benchmarks.md) through `build/lumos sweep ... -o F` and through
`lumos.sweep(...)` (which also reads the CSV into a DataFrame), alternating, best and median of N.

    build/pyenv/bin/python bench/python_sweep_overhead.py [N]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import lumos

AXES = dict(gpus="64..1024", tp="1,2,4,8", pp="1,2,4,8,16", interleave="1,2", mbs="1,2",
            recompute="none,full", gpu="a100,h100,h200,b200",
            nic_bandwidth="100Gbps,200Gbps,400Gbps,800Gbps")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("LUMOS_BINARY", os.path.join(ROOT, "build", "lumos"))


def cli_args(out):
    args = [BINARY, "sweep"]
    for k, v in AXES.items():
        args += ["--" + k.replace("_", "-"), v]
    return args + ["-o", out]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    cli, py = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "v.csv")
        for _ in range(n):
            t = time.perf_counter()
            subprocess.run(cli_args(out), check=True, stdout=subprocess.DEVNULL)
            cli.append(time.perf_counter() - t)
            t = time.perf_counter()
            df = lumos.sweep(**AXES)
            py.append(time.perf_counter() - t)
    print(f"{len(df)} configurations; CLI {min(cli):.2f} s best, {statistics.median(cli):.2f} s "
          f"median; Python {min(py):.2f} s best, {statistics.median(py):.2f} s median; "
          f"Python / CLI (medians) = {statistics.median(py) / statistics.median(cli):.3f}")


if __name__ == "__main__":
    main()
