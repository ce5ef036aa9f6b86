"""Time the README's main job, ``python -m ragqa evaluate examples/datasets/it_helpdesk.jsonl --profile local``.

Each round runs the command once per source tree (``--tree``, default this checkout), the trees
alternating so that a change of the machine's load hits them alike, in a fresh interpreter in the
tree's folder (``python -m`` puts the working folder first on ``sys.path``, so that is the ragqa
that runs; ``PYTHONPATH`` is set to the tree as well), on the tree's own dataset and settings. For
each tree it prints the median and best wall time and CPU time (user + sys of the child, from
``getrusage``) and a digest of the report it printed (the usage line's wall time left out; ``!``
marks a tree whose runs printed different reports). The load average before and after is printed too: other work on
the machine inflates wall times far more than CPU times.

    python benchmarks/readme_job.py --runs 5
    python benchmarks/readme_job.py --runs 5 --tree /path/to/old/checkout --tree .
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMAND = ["-m", "ragqa", "evaluate", "examples/datasets/it_helpdesk.jsonl", "--profile", "local"]
_WALL_TIME = re.compile(r"wall time [0-9.]+ s")


def run_once(tree: Path) -> tuple[float, float, str]:
    """One run of the job with ``tree`` first on ``sys.path``: (wall s, CPU s, report without its wall time)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("RAGQA_PROFILES_ACTIVE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, *COMMAND], cwd=tree, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"{tree}: exit {result.returncode}\n{result.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, _WALL_TIME.sub("wall time X s", result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="rounds; each runs every tree once (default 5)")
    parser.add_argument("--tree", type=Path, action="append", help="a source tree to time (repeatable; default .)")
    args = parser.parse_args()
    trees = [t.resolve() for t in (args.tree or [REPO])]
    walls: dict[Path, list[float]] = {t: [] for t in trees}
    cpus: dict[Path, list[float]] = {t: [] for t in trees}
    reports: dict[Path, set[str]] = {t: set() for t in trees}
    load_before = os.getloadavg()[0]
    for _ in range(args.runs):
        for tree in trees:
            wall, cpu, report = run_once(tree)
            walls[tree].append(wall)
            cpus[tree].append(cpu)
            reports[tree].add(hashlib.sha256(report.encode()).hexdigest()[:12])
    load_after = os.getloadavg()[0]
    print(f"{args.runs} run(s) per tree, alternating; load average {load_before:.2f} before, {load_after:.2f} after")
    print(f"{'tree':<40} {'wall median':>12} {'wall best':>10} {'CPU median':>11} {'CPU best':>9}  report")
    for tree in trees:
        w, c = walls[tree], cpus[tree]
        digest = " ".join(sorted(reports[tree])) + ("" if len(reports[tree]) == 1 else " !")
        print(
            f"{str(tree)[-40:]:<40} {statistics.median(w):>10.2f} s {min(w):>8.2f} s "
            f"{statistics.median(c):>9.2f} s {min(c):>7.2f} s  {digest}"
        )


if __name__ == "__main__":
    main()
