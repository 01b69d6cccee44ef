"""Run ptnotes' benchmarks and write ``results.json`` plus one PNG figure per benchmark.

Usage::

    python -m benchmarks.run                      # the full suite into build/bench/
    python -m benchmarks.run --quick --out /tmp/b # tiny sizes, 2 repeats (for tests)
    python -m benchmarks.run --only linear --only loader

The contenders of each comparison run in one process, alternating (A B A B ...), after
warm-up; ``results.json`` holds every sample, the median and spread of each contender, the
ratio of medians and whether its goal is met, plus the machine it ran on. ``torch.compile``
runs in a child process (fresh TorchInductor cache, a time budget, ``aot_eager`` as the
fallback backend). Copy ``results.json`` to ``docs/_data/bench.json`` to publish a run.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from ptnotes_dev import bench as harness
from ptnotes_dev.settings import load as load_settings

from benchmarks.cases import CASES, Case, bench_compile, torch_environment

ROOT = load_settings().root

DEFAULT_OUT = ROOT / "build" / "bench"
#: Seconds the inductor compile benchmark may take (in full mode) before aot_eager replaces it.
COMPILE_BUDGET_S = 240.0
COMPILE_FALLBACK = "aot_eager"
#: Seconds the fallback (no code generation: it compiles in seconds) may take.
FALLBACK_BUDGET_S = 180.0

Record = dict[str, Any]
Log = Callable[[str], None]


def run_case(case: Case, quick: bool, log: Log) -> list[Record]:
    """Run one case; a case that raises becomes an ``error`` record for each of its ids."""
    try:
        out = case.run(quick, log)
    except Exception as error:
        log(f"{case.name}: FAILED\n{traceback.format_exc()}")
        return [harness.error_record(i, i, error) for i in case.ids]
    return out if isinstance(out, list) else [out]


def _run_child(command: list[str], env: dict[str, str], limit: float) -> tuple[int | None, str]:
    """Run ``command`` in its own process group; kill the group when ``limit`` passes.

    Returns ``(exit code, "")`` or ``(None, why)`` when it timed out.
    """
    process = subprocess.Popen(command, env=env, cwd=ROOT, start_new_session=True)
    try:
        return process.wait(timeout=limit), ""
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the child and its compile workers
        process.wait()
        return None, f"exceeded the time budget of {limit:.0f} s"


def run_compile(quick: bool, log: Log, budget: float, threads: int | None = None) -> Record:
    """The torch.compile benchmark in a child process, inductor first, then the fallback."""
    notes: list[str] = []
    for backend, limit in (("inductor", budget), (COMPILE_FALLBACK, FALLBACK_BUDGET_S)):
        with tempfile.TemporaryDirectory(prefix="ptnotes-bench-") as tmp:
            out = Path(tmp) / "record.json"
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(Path(tmp) / "inductor"))
            command = [sys.executable, "-m", "benchmarks.run", "--child", "compile"]
            command += ["--backend", backend, "--child-out", str(out)]
            command += ["--quick"] if quick else []
            command += ["--threads", str(threads)] if threads else []
            log(f"compile: child process with backend={backend}, budget {limit:.0f} s")
            code, why = _run_child(command, env, limit)
            if code is None or code != 0 or not out.exists():
                reason = why or f"the child process failed (exit code {code})"
                notes.append(f"{backend}: {reason}")
                log(f"compile: backend={backend} {reason}")
                continue
            record = harness.read_json(out)
        record["process"] = "child (fresh process, empty TorchInductor cache)"
        if notes:
            record["fallback_reason"] = "; ".join(notes)
        return record
    return harness.error_record("compile", "compile", RuntimeError("; ".join(notes)))


def select_cases(only: Sequence[str]) -> list[Case]:
    """The cases named by ``--only`` (a case name or one of its record ids), else all."""
    if not only:
        return list(CASES)
    wanted = {name for item in only for name in item.split(",") if name}
    known = {case.name for case in CASES} | {i for case in CASES for i in case.ids}
    unknown = sorted(wanted - known)
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {', '.join(unknown)}; known: {sorted(known)}")
    return [c for c in CASES if c.name in wanted or wanted & set(c.ids)]


def describe(record: Record) -> str:
    """One line for the progress log: the ratio and the goal of a record."""
    if record["status"] != "ok":
        return f"{record['id']}: {record['status'].upper()} ({record.get('reason', '')})"
    ratio = record["ratio"]
    line = f"{record['id']}: {ratio['numerator']} / {ratio['denominator']} = {ratio['value']:.3f}"
    goal = record.get("goal")
    if goal is not None:
        line += f" ({harness.describe_goal(goal)})"
    return line


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 2 repeats (tests)")
    parser.add_argument(
        "--only", action="append", default=[], metavar="NAME", help="run only these (repeatable)"
    )
    parser.add_argument("--no-figures", action="store_true", help="write no PNG")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="torch.set_num_threads(N) first (default: torch's own choice); 1 gives steadier "
        "numbers on a busy, shared machine",
    )
    parser.add_argument(
        "--compile-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"time budget of the inductor compile child (default {COMPILE_BUDGET_S:.0f}, "
        "or 120 with --quick)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--backend", default="inductor", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def set_threads(threads: int | None) -> str:
    """Apply ``--threads``; say where the thread count comes from."""
    if threads is None:
        return "torch default"
    if threads < 1:
        raise SystemExit(f"--threads must be at least 1, got {threads}")
    torch.set_num_threads(threads)
    return "--threads"


def child_main(args: argparse.Namespace) -> int:
    """Inside the child process: run the compile benchmark, write its record."""
    set_threads(args.threads)
    log = harness.Progress()
    record = bench_compile(args.quick, lambda m: log(f"  (child) {m}"), backend=args.backend)
    harness.write_json(args.child_out, record)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child_main(args)
    log = harness.Progress()
    cases = select_cases(args.only)
    budget = args.compile_budget or (120.0 if args.quick else COMPILE_BUDGET_S)
    threads_from = set_threads(args.threads)
    results = harness.new_results(
        harness.environment({**torch_environment(), "torch_threads_from": threads_from}),
        "quick" if args.quick else "full",
    )
    env = results["environment"]  # the record written: filled in further below
    out: Path = args.out
    path = out / "results.json"
    started = time.perf_counter()
    log(
        f"ptnotes benchmarks ({results['mode']}): torch {env['torch']}, "
        f"{env['torch_num_threads']} threads, {env['cpu']}, load {env['load_average_start']}"
    )
    for case in cases:
        log(f"{case.name}: running")
        if case.isolated:
            records = [run_compile(args.quick, log, budget, args.threads)]
        else:
            records = run_case(case, args.quick, log)
        for record in records:
            problems = harness.validate_record(record)
            if problems:
                raise AssertionError(f"{record.get('id')}: malformed record: {problems}")
            if not args.no_figures and record["status"] == "ok":
                figure = harness.figure(record, out / "figures" / f"{record['id']}.png")
                record["figure"] = figure.relative_to(out).as_posix() if figure else None
            log(describe(record))
            results["benchmarks"].append(record)
        harness.write_json(path, results)  # after every case: a partial run is not lost
    env["duration_s"] = round(time.perf_counter() - started, 1)
    env["load_average_end"] = harness.load_average()
    if not args.no_figures:
        summary = harness.summary_figure(results["benchmarks"], out / "figures" / "summary.png")
        results["summary_figure"] = summary.relative_to(out).as_posix() if summary else None
    harness.write_json(path, results)
    log(f"wrote {path} in {env['duration_s']} s")
    errors = [r["id"] for r in results["benchmarks"] if r["status"] == "error"]
    if errors:
        log(f"benchmarks that failed: {', '.join(errors)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
