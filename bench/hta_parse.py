"""HTA's parse of one Kineto trace, as one process: what `bench/hta_compare.py` times against
`lumos replay`. HTA reads a folder of rank traces, so the trace is linked into a fresh one.

    python3 bench/hta_parse.py TRACE.json[.gz]
"""
import os
import sys
import tempfile


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    trace = os.path.abspath(sys.argv[1])
    from hta.trace_analysis import TraceAnalysis  # imported here: its import is part of the cost

    with tempfile.TemporaryDirectory() as folder:
        os.symlink(trace, os.path.join(folder, os.path.basename(trace)))
        analysis = TraceAnalysis(trace_dir=folder)
        events = sum(len(t.get_trace(r)) for t in [analysis.t] for r in t.get_ranks())
    print(f"{events} events")
    return 0


if __name__ == "__main__":
    sys.exit(main())
