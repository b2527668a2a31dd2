"""Whole `lumos replay TRACE --json` against HTA's parse of the same file (bench/hta_parse.py),
whole processes, in paired runs whose order alternates (A B, B A, ...): the machine's load changes
both sides of a pair alike, so the median of the per-pair ratios is what to compare across runs
(docs/benchmarks.md). With --before, a second lumos binary is paired with the first the same way.

    python3 bench/hta_compare.py --lumos build/lumos --hta-python VENV/bin/python \
        --trace TRACE.json.gz [--before OLD/lumos] [--pairs 5]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def paired(a, b, pairs):
    """Seconds of a and b, each pair run in alternating order, and the median of a / b."""
    ta, tb = [], []
    for i in range(pairs):
        if i % 2 == 0:
            ta.append(timed(a))
            tb.append(timed(b))
        else:
            tb.append(timed(b))
            ta.append(timed(a))
    return ta, tb, statistics.median(x / y for x, y in zip(ta, tb))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lumos", required=True)
    p.add_argument("--hta-python", default=sys.executable)
    p.add_argument("--trace", required=True)
    p.add_argument("--before", help="an older lumos binary to pair with --lumos")
    p.add_argument("--pairs", type=int, default=5)
    args = p.parse_args()
    lumos = [args.lumos, "replay", args.trace, "--json"]
    hta = [args.hta_python, os.path.join(HERE, "hta_parse.py"), args.trace]
    load_before = os.getloadavg()
    timed(lumos)  # the first run reads the file from disk: not a pair's
    t_hta, t_lumos, ratio = paired(hta, lumos, args.pairs)
    print(f"trace {args.trace} ({os.path.getsize(args.trace)} bytes), {args.pairs} pairs")
    # Other processes change both sides of a pair, but not alike: say how busy the machine was.
    print("load average (1, 5, 15 min) before %.2f %.2f %.2f" % load_before)
    print(f"HTA parse     median {statistics.median(t_hta):.3f} s  {[round(t, 3) for t in t_hta]}")
    print(f"lumos replay  median {statistics.median(t_lumos):.4f} s  {[round(t, 4) for t in t_lumos]}")
    print(f"HTA / lumos   median of pair ratios {ratio:.1f}x")
    if args.before:
        before = [args.before, "replay", args.trace, "--json"]
        t_before, t_after, r = paired(before, lumos, args.pairs)
        print(f"lumos before  median {statistics.median(t_before):.4f} s, after "
              f"{statistics.median(t_after):.4f} s; before / after median of pair ratios {r:.3f}")
    print("load average (1, 5, 15 min) after %.2f %.2f %.2f" % os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
