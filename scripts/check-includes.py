#!/usr/bin/env python3
"""Fails when a file under host/ includes a folder that comes after its own in the stage order.

The order is CMakeLists.txt's LUMOS_STAGES (docs/design.md "Layout"): a folder includes only
itself and folders before it, so the stages form a DAG and each CMake library links only the ones
below it. cuda/ sits between replay and engine: it may include up to replay/.
Usage: scripts/check-includes.py [REPO_ROOT]; prints one line per upward include, exit 1 if any.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
cmake = open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8").read()
match = re.search(r"set\(LUMOS_STAGES ([a-z_ ]+)\)", cmake)
if not match:
    sys.exit("check-includes: CMakeLists.txt has no set(LUMOS_STAGES ...)")
stages = match.group(1).split()
rank = {name: i for i, name in enumerate(stages)}
include = re.compile(r'\s*#\s*include\s+"([a-z_]+)/')

folders = [(os.path.join(root, "host", s), s) for s in stages]
folders.append((os.path.join(root, "cuda"), "cuda"))
rank["cuda"] = rank["replay"] + 0.5  # after replay, before engine

missing = sorted(set(os.listdir(os.path.join(root, "host"))) - set(stages) - {"CMakeLists.txt"})
problems = [f"host/{m}/: a folder not in LUMOS_STAGES" for m in missing
            if os.path.isdir(os.path.join(root, "host", m))]
for path, own in folders:
    for dirpath, _, files in os.walk(path):
        for f in sorted(files):
            if not f.endswith((".cpp", ".hpp", ".h", ".cu", ".cuh")):
                continue
            full = os.path.join(dirpath, f)
            with open(full, encoding="utf-8", errors="replace") as src:
                for n, line in enumerate(src, 1):
                    m = include.match(line)
                    if not m or m.group(1) not in rank or m.group(1) == own:
                        continue
                    if rank[m.group(1)] > rank[own]:
                        rel = os.path.relpath(full, root)
                        problems.append(f"{rel}:{n}: {own}/ includes {m.group(1)}/, a later stage "
                                        f"(order: {' < '.join(stages)})")
for p in problems:
    print(p)
if problems:
    sys.exit(1)
print(f"check-includes: {len(stages)} stages, no include reaches up")
