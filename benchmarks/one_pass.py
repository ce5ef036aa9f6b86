"""Time to the first result and peak memory of ``ragqa evaluate DATA --profile local`` on large datasets.

For each size N the benchmark writes N samples (the IT-helpdesk dataset repeated under new ids,
about 8.6 kB a line: 100,000 samples are an 861 MB file) to a temporary JSON Lines file and runs

    python -m ragqa evaluate DATA --profile local --out results.jsonl --no-cache --no-progress --quiet

in a child process, once per source tree (``--tree``, default this checkout; ``--base REF`` adds
a temporary ``git worktree`` of REF, e.g. the commit before a change), the trees alternating so
that a change of the machine's load hits them alike. Each child runs in the tree's folder with
``PYTHONPATH`` set to it (as ``benchmarks/readme_job.py`` does).

- ``first result``: seconds from starting the child until the first result record is complete
  in ``results.jsonl.partial`` (the file is polled every 10 ms); with ``--first-only`` the child
  is then killed, so only the time to the first result is measured.
- ``peak``: the child's peak resident set size (``ru_maxrss`` from ``os.wait4``), for full runs.
- ``slope``: between the two largest sizes of a tree's full runs, the growth of the peak per
  sample, in bytes.

The load average is printed before and after: other work on the machine stretches wall times.

    python benchmarks/one_pass.py --samples 100000 --base HEAD~1 --first-only --rounds 2
    python benchmarks/one_pass.py --samples 100000 300000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "examples" / "datasets" / "it_helpdesk.jsonl"


def write_samples(path: Path, n: int) -> int:
    """N samples, the shipped dataset repeated under ids ``s0 .. s{N-1}``; returns the file's size in bytes."""
    base = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({**base[i % len(base)], "id": f"s{i}"}, ensure_ascii=False) + "\n")
    return path.stat().st_size


@contextlib.contextmanager
def worktree(ref: str, folder: Path) -> Iterator[Path]:
    """A temporary detached ``git worktree`` of ``ref`` under ``folder``, removed afterwards."""
    path = folder / "base-tree"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), ref], check=True, capture_output=True
    )
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)], check=False)


def _records(path: Path) -> int:
    """Complete lines of ``path`` (0 when missing), reading at most the first 64 kB."""
    try:
        with path.open("rb") as f:
            return f.read(1 << 16).count(b"\n")
    except FileNotFoundError:
        return 0


def run(tree: Path, data: Path, out: Path, *, first_only: bool) -> dict[str, float]:
    """One run of the command in ``tree`` on ``data``: first-result seconds, wall, CPU and peak MB."""
    out.unlink(missing_ok=True)
    partial = out.with_name(out.name + ".partial")
    partial.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "ragqa", "evaluate", str(data), "--profile", "local", "--out", str(out)]
    cmd += ["--no-cache", "--no-progress", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("RAGQA_PROFILES_ACTIVE", None)
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = float("nan")
    while proc.poll() is None:
        if _records(partial) >= 2 or _records(out) >= 2:  # the header and one result
            first = time.perf_counter() - started
            break
        time.sleep(0.01)
    if first_only and proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if not first_only and code not in (0, 1, 3, 4):
        raise SystemExit(f"{tree}: ragqa evaluate exited {code}")
    return {
        "first_s": first,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,  # kilobytes on Linux
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, nargs="+", default=[100_000, 300_000])
    parser.add_argument("--tree", type=Path, action="append", help="a source tree to run (repeatable; default .)")
    parser.add_argument("--base", help="also run a temporary git worktree of this commit (e.g. HEAD~1)")
    parser.add_argument("--rounds", type=int, default=1, help="runs per tree and size, alternating (default 1)")
    parser.add_argument("--first-only", action="store_true", help="stop each run at its first result")
    args = parser.parse_args()
    trees = [t.resolve() for t in (args.tree or [REPO])]
    print(f"load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        folder = Path(tmp)
        if args.base:
            trees.insert(0, stack.enter_context(worktree(args.base, folder)))
        peaks: dict[Path, list[tuple[int, float]]] = {t: [] for t in trees}
        print(f"{'tree':<30} {'samples':>8} {'MB':>6} {'first result':>13} {'wall':>8} {'CPU':>8} {'peak':>8}")
        for n in args.samples:
            data = folder / f"data-{n}.jsonl"
            size = write_samples(data, n)
            for _ in range(args.rounds):
                for tree in trees:
                    row = run(tree, data, folder / "results.jsonl", first_only=args.first_only)
                    if not args.first_only:
                        peaks[tree].append((n, row["peak_mb"]))
                    name = ("base " + args.base) if args.base and tree == trees[0] else str(tree)[-30:]
                    print(
                        f"{name:<30} {n:>8,} {size / 1e6:>6.0f} {row['first_s']:>11.1f} s {row['wall_s']:>6.1f} s "
                        f"{row['cpu_s']:>6.1f} s {row['peak_mb'] if not args.first_only else float('nan'):>5.0f} MB",
                        flush=True,
                    )
            data.unlink()
        for tree, rows in peaks.items():
            if len({n for n, _ in rows}) >= 2:
                (n0, p0), (n1, p1) = sorted(rows)[0], sorted(rows)[-1]
                name = ("base " + args.base) if args.base and tree == trees[0] else str(tree)[-30:]
                slope = (p1 - p0) * 1024 * 1024 / (n1 - n0)
                print(f"{name}: peak grows {slope:.0f} bytes per sample from {n0:,} to {n1:,} samples")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
