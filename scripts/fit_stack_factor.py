#!/usr/bin/env python3
"""Fit a software stack's one step-level constant, `kernel_time_factor` in kernels_db/stacks.json.

The model allows each stack at most one constant fitted to step-level published runs; besides them,
one recipe constant is fitted (delayed scaling's replica_skew_us, docs/design.md); every other
figure comes from kernel-level measurements. This finds the factor that brings the signed mean
error of the stack's tier-A runs (lumos bench estimate, the DGX-H100 rows of calibration.md
included) to zero, by bisection on a copy of kernels_db, and prints it with the errors before and
after. It writes nothing into the repository: put the value into stacks.json by hand, with the
sources entry that says it was fitted, then regenerate kernels_db/calibration.json.

  python3 scripts/fit_stack_factor.py --lumos build/lumos --stack nemo-2025 \
      --sharing nemo-2024 megatron-core

Stacks that run the same kernels share the factor (`--sharing`): it is set in all of them, and
the runs of every one are fitted together.

The same fit runs inside lumos (estimate/constant_fit.hpp): `lumos bench estimate --cross-validate`
prints it on every source and refitted without each source in turn.
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


SHARING = []  # stacks given the same factor (--sharing)


def report_with(lumos, db_dir, stack, factor):
    """lumos bench estimate's JSON report with the stack's factor set in a kernels_db copy."""
    stacks = json.loads((db_dir / "stacks.json").read_text())
    for name in [stack] + SHARING:
        stacks["stacks"][name]["kernel_time_factor"] = factor
    (db_dir / "stacks.json").write_text(json.dumps(stacks, indent=2))
    out = subprocess.run([lumos, "bench", "estimate", "--runs", "1", "--json", "--db", str(db_dir)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def signed_mean(report, stack):
    rows = [r for r in report["calibration"]
            if r["stack"] in [stack] + SHARING and r.get("tier", "A") == "A"]
    if not rows:
        sys.exit(f"fit_stack_factor: no tier-A runs of stack {stack}")
    return sum(r["error_pct"] for r in rows) / len(rows), len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lumos", default=str(ROOT / "build" / "lumos"))
    ap.add_argument("--stack", required=True)
    ap.add_argument("--sharing", nargs="*", default=[],
                    help="stacks that take the same factor; their runs are fitted too")
    ap.add_argument("--lo", type=float, default=0.8)
    ap.add_argument("--hi", type=float, default=1.25)
    a = ap.parse_args()
    SHARING.extend(a.sharing)
    # stacks.json accepts factors in [0.5, 2].
    if not 0.5 <= a.lo < a.hi <= 2:
        sys.exit("fit_stack_factor: expected 0.5 <= --lo < --hi <= 2")
    lumos = pathlib.Path(a.lumos)
    if not lumos.is_absolute() and not lumos.exists():
        lumos = ROOT / lumos
    if not lumos.exists():
        sys.exit(f"fit_stack_factor: no lumos at {a.lumos} (build it first)")
    a.lumos = str(lumos)
    with tempfile.TemporaryDirectory() as tmp:
        db = pathlib.Path(tmp) / "kernels_db"
        shutil.copytree(ROOT / "kernels_db", db)
        before, n = signed_mean(report_with(a.lumos, db, a.stack, 1.0), a.stack)
        lo, hi = a.lo, a.hi
        if signed_mean(report_with(a.lumos, db, a.stack, lo), a.stack)[0] > 0 or \
           signed_mean(report_with(a.lumos, db, a.stack, hi), a.stack)[0] < 0:
            sys.exit("fit_stack_factor: the zero of the signed mean is outside [--lo, --hi]")
        for _ in range(14):  # 0.45 / 2^14: well below the third decimal
            mid = (lo + hi) / 2
            if signed_mean(report_with(a.lumos, db, a.stack, mid), a.stack)[0] < 0:
                lo = mid
            else:
                hi = mid
        factor = round((lo + hi) / 2, 3)
        report = report_with(a.lumos, db, a.stack, factor)
        after, _ = signed_mean(report, a.stack)
        print(f"{a.stack}: {n} tier-A runs, signed mean {before:+.2f}% at 1.0; "
              f"kernel_time_factor {factor} gives {after:+.2f}%")
        for r in report["calibration"]:
            if r["stack"] in [a.stack] + SHARING:
                print(f"  {r['label']:40s} {r['error_pct']:+6.1f}%")


if __name__ == "__main__":
    main()
