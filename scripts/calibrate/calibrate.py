#!/usr/bin/env python3
"""Calibration suite: GEMM, attention, memory-bound and launch-overhead microbenchmarks with
PyTorch on one GPU, written as versioned JSON tables with provenance for kernels_db.

  python3 scripts/calibrate/calibrate.py --out DIR [--dry-run] [--quick]
                                         [--only gemm,attention,membound,launch] [--budget-s S]

--dry-run needs neither a GPU nor PyTorch: it writes the same files with every configuration
that a real run would measure, "measured": false and null measurements (CI checks the schema
with it). See README.md beside this file for the schema and timings.
"""

import argparse
import os
import signal
import sys
import time

# The suite modules sit beside this file; running it as a script puts this folder on sys.path
# already, importing it from elsewhere may not. No __pycache__ is left in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True

import attention  # noqa: E402
import common  # noqa: E402
import gemm  # noqa: E402
import launch  # noqa: E402
import membound  # noqa: E402

SUITES = {"gemm": gemm, "attention": attention, "membound": membound, "launch": launch}

EXIT_MEASUREMENT_ERRORS = 1
EXIT_INTERRUPTED = 130

TABLE_STATUSES = (common.STATUS_OK, common.STATUS_UNSUPPORTED, common.STATUS_ERROR,
                  common.STATUS_SKIPPED)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="calibrate.py",
        description="Measure GEMM, attention, memory-bound and launch-overhead tables on a GPU "
        "with PyTorch and write them as JSON (one file per suite) into --out.",
    )
    parser.add_argument("--out", required=True, help="output folder (created if missing)")
    parser.add_argument("--dry-run", action="store_true",
                        help="enumerate configurations and write unmeasured tables; needs no "
                        "GPU and no PyTorch")
    parser.add_argument("--only", type=_suite_list, default=list(SUITES),
                        help=f"comma-separated subset of {','.join(SUITES)} (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="reduced sweep and fewer iterations, for a tight device budget")
    parser.add_argument("--budget-s", type=float, default=None, metavar="S",
                        help="wall-clock limit for the measurements; rows not reached in time are "
                        "written with status 'skipped'")
    parser.add_argument("--verbose", action="store_true",
                        help="log every row to stderr as it is measured")
    return parser.parse_args(argv)


def _suite_list(text):
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in SUITES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown suite(s) {','.join(unknown) or '(none given)'}; "
            f"choose from {','.join(SUITES)}")
    return [name for name in SUITES if name in names]  # canonical order, no duplicates


def load_torch():
    """Import PyTorch only for a real run, and fail with one clear line when it cannot work."""
    try:
        import torch
    except ImportError as exc:
        raise SystemExit(f"calibrate: PyTorch is not importable ({exc}); "
                         "use --dry-run to check the configuration without it")
    if not torch.cuda.is_available():
        raise SystemExit("calibrate: no CUDA device visible to PyTorch; "
                         "use --dry-run on a machine without a GPU")
    return torch


def method_for(suite, quick, budget_s):
    """How the numbers were taken; the same in a dry run, which describes the run it stands for."""
    method = {"quick": quick, "budget_s": budget_s}
    if suite.USES_CUDA_TIMER:
        method.update({
            "timer": "torch.cuda.Event pair around each iteration",
            "statistic": "median of timed iterations (time_us); minimum in time_us_min",
            "l2_flush_bytes": common.L2_FLUSH_BYTES,
            **common.timer_settings(quick).as_dict(),
        })
    method.update(suite.METHOD_NOTES)
    return method


class SuiteRun:
    """Measures one suite row by row and keeps its JSON file up to date on disk."""

    def __init__(self, suite, *, path, document, bench, budget, verbose):
        self.suite = suite
        self.path = path
        self.document = document
        self.bench = bench
        self.budget = budget
        self.verbose = verbose
        self._last_write = 0.0

    def run(self, configs):
        """Measure every row; returns True when interrupted (SIGTERM or Ctrl-C) part way."""
        try:
            self._run_rows(configs)
        except KeyboardInterrupt:
            self._finish_pending(common.STATUS_SKIPPED, "interrupted before this row was measured")
            return True
        return False

    def _run_rows(self, configs):
        try:
            state = self.suite.prepare(self.bench)
        except Exception as exc:  # a suite that cannot start still writes its file
            note = f"suite setup failed: {common.describe_error(exc)}"
            self._finish_pending(common.STATUS_ERROR, note)
            return
        for index, (row, config) in enumerate(zip(self.document["rows"], configs)):
            self._measure_row(row, config, state)
            self._log_row(index, row)
            self._checkpoint()
        self._write()

    def _measure_row(self, row, config, state):
        if self.budget.exhausted():
            row.update(status=common.STATUS_SKIPPED, note="time budget (--budget-s) exhausted")
            return
        try:
            result = self.suite.measure(config, self.bench, state)
        except common.Unsupported as exc:
            row.update(status=common.STATUS_UNSUPPORTED, note=str(exc))
        except Exception as exc:  # one failing configuration must not lose the others
            row.update(status=common.STATUS_ERROR, note=common.describe_error(exc))
            _recover(self.bench.torch)
        else:
            row.update(result)
            row["status"] = common.STATUS_OK

    def _log_row(self, index, row):
        if self.verbose or row["status"] == common.STATUS_ERROR:
            values = {f: row[f] for f in self.suite.MEASUREMENT_FIELDS}
            note = f" ({row['note']})" if row["note"] else ""
            common.log(f"{self.suite.KIND} row {index}: {row['status']} {values}{note}")

    def _finish_pending(self, status, note):
        for row in self.document["rows"]:
            if row["status"] == common.STATUS_PENDING:
                row.update(status=status, note=note)
        self._write()

    def _checkpoint(self):
        if time.monotonic() - self._last_write >= common.CHECKPOINT_INTERVAL_S:
            self._write()

    def _write(self):
        common.write_json_atomic(self.path, self.document)
        self._last_write = time.monotonic()


def _recover(torch):
    """After a failed configuration: drain the stream and return its memory to the pool."""
    try:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    except Exception as exc:  # a sticky CUDA error; later rows will report it themselves
        common.log(f"CUDA did not recover: {common.describe_error(exc)}")


def run_suite(name, args, *, provenance, bench, budget):
    """Returns (document, interrupted)."""
    suite = SUITES[name]
    configs = suite.configs(args.quick)
    status = common.STATUS_DRY_RUN if args.dry_run else common.STATUS_PENDING
    rows = [common.new_row(config, suite.MEASUREMENT_FIELDS, status) for config in configs]
    document = common.make_document(
        suite, measured=not args.dry_run, provenance=provenance,
        method=method_for(suite, args.quick, args.budget_s), rows=rows)
    path = os.path.join(args.out, f"{suite.KIND}.json")
    if args.dry_run:
        common.write_json_atomic(path, document)
        return document, False
    common.log(f"{name}: {len(rows)} configurations")
    interrupted = SuiteRun(suite, path=path, document=document, bench=bench, budget=budget,
                           verbose=args.verbose).run(configs)
    bench.torch.cuda.empty_cache()  # the next suite should not inherit this one's cached blocks
    return document, interrupted


def print_table(results, args, provenance):
    """One line per suite: row counts by status, seconds taken, and the headline numbers."""
    where = provenance["gpu"] or "no GPU"
    mode = "dry run, nothing measured" if args.dry_run else f"torch {provenance['torch']}"
    print(f"calibration ({where}; {mode}; {'quick' if args.quick else 'full'} sweep) -> {args.out}")
    header = (f"{'suite':<10} {'rows':>5} {'ok':>5} {'unsup':>5} {'error':>5} {'skip':>5} "
              f"{'secs':>6}  headline")
    print(header)
    print("-" * len(header))
    for name, (document, seconds) in results.items():
        rows = document["rows"]
        counts = {s: sum(r["status"] == s for r in rows) for s in TABLE_STATUSES}
        headline = "not measured" if args.dry_run else SUITES[name].headline(rows)
        print(f"{name:<10} {len(rows):>5} {counts['ok']:>5} {counts['unsupported']:>5} "
              f"{counts['error']:>5} {counts['skipped']:>5} {seconds:>6.1f}  {headline}")


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt  # SIGTERM (a time limit) ends the run like Ctrl-C: files are written


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    script_argv = [sys.argv[0]] + list(argv)
    bench = None
    if args.dry_run:
        provenance = common.base_provenance(script_argv)
    else:
        torch = load_torch()
        torch.manual_seed(0)  # the same input data in every run
        provenance = common.gpu_provenance(torch, script_argv)
        timer = common.CudaTimer(torch, common.timer_settings(args.quick))
        bench = common.Bench(torch=torch, timer=timer)
    budget = common.Budget(args.budget_s)
    results = {}
    for name in args.only:
        start = time.monotonic()
        document, interrupted = run_suite(name, args, provenance=provenance, bench=bench,
                                          budget=budget)
        results[name] = (document, time.monotonic() - start)
        if interrupted:
            common.log(f"interrupted during {name}: its file holds the rows measured so far; "
                       "later suites were not run")
            print_table(results, args, provenance)
            return EXIT_INTERRUPTED
    print_table(results, args, provenance)
    failed = sum(r["status"] == common.STATUS_ERROR for d, _ in results.values() for r in d["rows"])
    if failed:
        common.log(f"{failed} configuration(s) failed; their rows say why (status 'error', note)")
        return EXIT_MEASUREMENT_ERRORS
    return 0


if __name__ == "__main__":
    sys.exit(main())
