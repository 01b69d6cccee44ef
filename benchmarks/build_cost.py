"""Measure what the project costs its own developers, as ratios with goals.

1. **No-op rebuild / clean build**, per edition (en, zh_CN): a clean build into fresh
   output and doctree folders (in a temporary folder), then the same command again, which
   should find nothing to do (three times; the median counts).
   sphinx-gallery's cache lives in the source tree (``docs/auto_examples``), so a "clean"
   build reuses it when it is up to date; whether the English clean build executed gallery
   scripts is recorded.
2. **Gallery scripts executed by the zh_CN build**: the files of ``docs/auto_examples``
   are compared (modification time, size) before and after the zh_CN build; a script
   counts as executed when any of its outputs changed.
3. **Doctest session / plain execution**: the wall time of
   ``python -m pytest docs src -q -p no:randomly`` against the wall time of one Python
   process that executes the same examples (found by the project's own Sybil parsers, from
   :mod:`ptnotes_dev.doctesting`) page by page in fresh namespaces, comparing nothing.

4. **What the reader outputs cost** (``--reader-outputs``, after ``nox -s docs`` and, for the
   offline copies, ``nox -s offline``): the seconds the notebooks extension takes to turn every
   page of each built edition into its notebook (from the build's own doctrees, as read, before
   Sphinx resolves their references), and the seconds of each step of the last ``nox -s offline``
   (its EPUB and LaTeX builds, epubcheck, xelatex and the zip, from ``build/offline-times.json``).
   These have no goal: they say what each output adds to a build.

The goals of the first three measures are those of :data:`ptnotes_dev.bench.GOALS`
(``noop_over_clean``, ``zh_gallery_executed``, ``doctest``).

The sphinx-build commands use the project's flags (``-W --keep-going -n -q``,
``-D language=...``), as ``nox -s docs`` does. The numbers are added to ``results.json``
under ``build_cost`` (the file is created when ``run.py`` has not written it).

Usage::

    python -m benchmarks.build_cost --results build/bench/results.json
    python -m benchmarks.build_cost --skip-sphinx      # only (3): seconds, not minutes
    python -m benchmarks.build_cost --reader-outputs   # only (4)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ptnotes_dev import bench as harness
from ptnotes_dev import doctesting, settings
from sybil.evaluators.doctest import DocTestEvaluator

SETTINGS = settings.load()
ROOT = SETTINGS.root
DOCS = ROOT / "docs"
GALLERY_OUT = DOCS / "auto_examples"
LANGUAGES = SETTINGS.language_codes
SOURCE = SETTINGS.source_language.code
SPHINX_FLAGS = SETTINGS.sphinx_flags
DOCTEST_COMMAND = ("-m", "pytest", *SETTINGS.doctest_targets, "-q")

Log = Callable[[str], None]


def sphinx_command(language: str, doctrees: Path, out: Path, docs: Path = DOCS) -> list[str]:
    """The html build of one edition, with the project's flags."""
    return [
        sys.executable, "-m", "sphinx", "-b", "html", *SPHINX_FLAGS,
        "-D", f"language={language}", "-d", str(doctrees), str(docs), str(out),
    ]  # fmt: skip


def timed_run(command: Sequence[str], env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run ``command`` from the repository root; its wall time, exit code and output tail."""
    start = time.perf_counter()
    done = subprocess.run(
        list(command),
        cwd=ROOT,
        env=dict(os.environ, **(env or {})),
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
    return {"seconds": seconds, "returncode": done.returncode, "output_tail": tail}


# -- gallery ---------------------------------------------------------------------------------


def gallery_snapshot(folder: Path = GALLERY_OUT) -> dict[str, tuple[int, int]]:
    """``{relative path: (mtime_ns, size)}`` of every file sphinx-gallery wrote."""
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in folder.rglob("*")
        if p.is_file()
    }


def gallery_scripts(folder: Path = GALLERY_OUT) -> list[str]:
    """The stems of the gallery scripts (``plot_*.py`` copied into the output folder)."""
    return sorted(p.stem for p in folder.glob("*.py")) if folder.is_dir() else []


def executed_scripts(
    before: Mapping[str, tuple[int, int]],
    after: Mapping[str, tuple[int, int]],
    scripts: Sequence[str],
) -> list[str]:
    """The scripts with an output that appeared, disappeared or changed between snapshots.

    sphinx-gallery names every output of ``plot_x.py`` after it: ``plot_x.*`` in the
    gallery folder and ``images/sphx_glr_plot_x_*`` (``images/thumb/sphx_glr_plot_x_*``).
    """
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    executed = []
    for stem in scripts:
        prefixes = (f"{stem}.", f"images/sphx_glr_{stem}_", f"images/thumb/sphx_glr_{stem}_")
        if any(path.startswith(prefixes) for path in changed):
            executed.append(stem)
    return executed


# -- (1) and (2): the site -------------------------------------------------------------------


def measure_sphinx(
    work: Path, log: Log, docs: Path = DOCS, noop_repeats: int = 3
) -> dict[str, Any]:
    """Clean build, then ``noop_repeats`` no-op rebuilds, of each edition (en first).

    The ratio is the median no-op time over the clean time: a clean build is expensive and
    is taken once; the no-op rebuilds are cheap and repeated, which steadies the median.
    """
    editions: dict[str, Any] = {}
    gallery = docs / GALLERY_OUT.relative_to(DOCS)
    scripts = gallery_scripts(gallery)
    for language in LANGUAGES:
        doctrees, out = work / "doctrees" / language, work / "html" / language
        command = sphinx_command(language, doctrees, out, docs)
        log(f"sphinx {language}: clean build into {out}")
        before = gallery_snapshot(gallery)
        clean = timed_run(command)
        after_clean = gallery_snapshot(gallery)
        log(f"sphinx {language}: clean build took {clean['seconds']:.1f} s")
        noops = []
        for index in range(noop_repeats):
            noops.append(timed_run(command))
            log(
                f"sphinx {language}: no-op rebuild {index + 1}/{noop_repeats} took "
                f"{noops[-1]['seconds']:.1f} s"
            )
        after_noop = gallery_snapshot(gallery)
        noop_s = harness.summarize([run["seconds"] for run in noops])["median"]
        ratio = noop_s / clean["seconds"]
        editions[language] = {
            "command": " ".join(["python", *command[1:]]).replace(str(ROOT) + "/", ""),
            "clean_s": round(clean["seconds"], 2),
            "noop_s": round(noop_s, 2),
            "noop_samples_s": [round(run["seconds"], 2) for run in noops],
            "clean_returncode": clean["returncode"],
            "noop_returncode": max(run["returncode"] for run in noops),
            "ratio": ratio,
            "goal": harness.goal_record(ratio, harness.GOALS["noop_over_clean"]),
            "gallery_executed_clean": executed_scripts(before, after_clean, scripts),
            "gallery_executed_noop": executed_scripts(after_clean, after_noop, scripts),
        }
        for name, run in (("clean", clean), ("noop", max(noops, key=lambda r: r["returncode"]))):
            if run["returncode"] != 0:
                editions[language][f"{name}_output_tail"] = run["output_tail"]
                log(f"sphinx {language} {name} build FAILED:\n" + "\n".join(run["output_tail"]))
    executed = [
        script
        for language in SETTINGS.translations
        for script in editions[language.code]["gallery_executed_clean"]
    ]
    return {
        "editions": editions,
        "gallery_scripts": len(scripts),
        "gallery_cache": (
            "sphinx-gallery's cache is docs/auto_examples, in the source tree: the clean builds "
            "reuse it; the English clean build executed "
            f"{len(editions[SOURCE]['gallery_executed_clean'])} of {len(scripts)} script(s)"
        ),
        "zh_gallery_executed": {
            "value": len(executed),
            "scripts": executed,
            "method": "modification time and size of every file of docs/auto_examples, "
            "before and after the zh_CN clean build",
            "goal": harness.goal_record(len(executed), harness.GOALS["zh_gallery_executed"]),
        },
    }


# -- (3): doctests ---------------------------------------------------------------------------


@contextlib.contextmanager
def _captured_output() -> Iterator[io.StringIO]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        yield buffer


class PlainEvaluator(DocTestEvaluator):
    """Execute a ``>>>`` example's source as the interpreter would, comparing nothing.

    Like doctest it compiles in ``single`` mode (so a bare expression prints its repr);
    an example that raises (those that show a traceback) is counted and passed over;
    an example the doctests skip on this device (``+REQUIRES_CUDA``) is skipped too.
    """

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        self.device = device
        self.counts = {"examples": 0, "executed": 0, "raised": 0, "skipped": 0}

    def __call__(self, example: Any) -> str:
        parsed = example.parsed
        if not doctesting.select(parsed.options, self.device).run:
            self.counts["skipped"] += 1
            return ""
        code = compile(parsed.source, example.path, "single", dont_inherit=True)
        self.counts["executed"] += 1
        try:
            exec(code, example.namespace)
        except Exception:
            self.counts["raised"] += 1
        return ""


def plain_execution() -> dict[str, Any]:
    """Run every example of docs/ and src/ plainly, page by page; counts and seconds."""
    start = time.perf_counter()
    evaluator = PlainEvaluator()
    setup = doctesting.reset_state("cpu")
    documents = 0
    targets = [ROOT / target for target in SETTINGS.doctest_targets]
    collection = doctesting.sybils(ROOT, "cpu", evaluator=evaluator)
    for document in doctesting.documents(collection, targets):
        documents += 1
        setup(document.namespace)
        try:
            with _captured_output():
                for example in document.examples():
                    evaluator.counts["examples"] += 1
                    try:
                        example.evaluate()
                    except Exception:  # a plain code block that raises: count, go on
                        evaluator.counts["raised"] += 1
        finally:
            doctesting.restore_state(document.namespace)
    return {
        "documents": documents,
        **evaluator.counts,
        "in_process_s": time.perf_counter() - start,
    }


_SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def pytest_counts(lines: Sequence[str]) -> dict[str, int]:
    """``{"passed": 3, "skipped": 1, ...}`` from the summary line of ``pytest -q``."""
    for line in reversed(lines):
        found = _SUMMARY.findall(line)
        if found and " in " in line:
            return {
                kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in found
            }
    return {}


def measure_doctests(repeats: int, log: Log) -> dict[str, Any]:
    """Alternate the doctest session and the plain execution, each in a fresh process."""
    env = {"PTNOTES_DOCTEST_DEVICE": "cpu"}
    doctest_cmd = [sys.executable, *DOCTEST_COMMAND]
    plain_cmd = [sys.executable, str(Path(__file__).resolve()), "--plain-exec"]
    walls: dict[str, list[float]] = {"doctest": [], "plain": []}
    last: dict[str, Any] = {}
    for round_, name in harness.schedule(["doctest", "plain"], repeats):
        log(f"doctests: {name} run {round_ + 1}/{repeats}")
        run = timed_run(doctest_cmd if name == "doctest" else plain_cmd, env)
        walls[name].append(run["seconds"])
        last[name] = run
        log(f"doctests: {name} took {run['seconds']:.1f} s (exit code {run['returncode']})")
    plain_report: dict[str, Any] = {}
    for line in reversed(last["plain"]["output_tail"]):
        if line.startswith("{"):
            plain_report = json.loads(line)
            break
    ratio = harness.ratio_of_medians(walls["doctest"], walls["plain"])
    return {
        "doctest_command": "python " + " ".join(DOCTEST_COMMAND),
        "doctest_s": harness.summarize(walls["doctest"]),
        "plain_s": harness.summarize(walls["plain"]),
        "doctest_returncode": last["doctest"]["returncode"],
        "doctest_counts": pytest_counts(last["doctest"]["output_tail"]),
        "plain_counts": plain_report,
        "ratio": ratio,
        "goal": harness.goal_record(ratio, harness.GOALS["doctest"]),
        "method": (
            "Wall time of each command as a fresh process (interpreter start and imports "
            "included), alternating the two; ratio of the medians. The plain process finds "
            "the same examples with the project's Sybil parsers and executes each page's "
            "examples in a fresh namespace, comparing no output."
        ),
        "repeats": repeats,
    }


# -- (4): the reader outputs ------------------------------------------------------------------


def measure_reader_outputs(build: Path, log: Log) -> dict[str, Any]:
    """Seconds to write each edition's notebooks, and the last offline build's step times."""
    import pickle

    import nbformat
    from ptnotes_dev.sphinx import notebooks

    editions: dict[str, Any] = {}
    for language in LANGUAGES:
        doctrees = build / "doctrees" / language
        if not doctrees.is_dir():
            editions[language] = {"status": "not built: run nox -s docs first"}
            continue
        count = cells = 0
        seconds = 0.0
        for path in sorted(doctrees.rglob("*.doctree")):
            doctree = pickle.loads(path.read_bytes())  # the build's own file
            start = time.perf_counter()
            notebooks.keep_sources(None, doctree)  # what the build does when it reads a page
            book = notebooks.notebook(doctree)
            if book is not None:
                nbformat.writes(book)
                count += 1
                cells += sum(cell.cell_type == "code" for cell in book.cells)
            seconds += time.perf_counter() - start
        log(f"notebooks {language}: {count} notebooks, {cells} code cells in {seconds:.1f} s")
        editions[language] = {"notebooks": count, "code_cells": cells, "seconds": round(seconds, 2)}
    times = build / "offline-times.json"
    offline = json.loads(times.read_text()) if times.is_file() else None
    for language, steps in (offline or {}).items():
        log(f"offline {language}: " + ", ".join(f"{k} {v:.0f} s" for k, v in steps.items()))
    return {
        "notebooks": editions,
        "offline": offline if offline is not None else "not built: run nox -s offline first",
        "method": (
            "Notebooks: notebook() and nbformat.writes() per page of each edition's doctrees, "
            "timed in one process (the doctrees' loading left out). Offline copies: the wall "
            "seconds of each step that nox -s offline records in build/offline-times.json."
        ),
    }


# -- main ------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--results",
        type=Path,
        default=ROOT / "build" / "bench" / "results.json",
        help="the results file to add 'build_cost' to (created if missing)",
    )
    parser.add_argument("--skip-sphinx", action="store_true", help="measure only (3)")
    parser.add_argument(
        "--reader-outputs", action="store_true", help="measure only (4), from build/"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="alternating rounds of doctest/plain (default 3)"
    )
    parser.add_argument(
        "--noop-repeats", type=int, default=3, help="no-op rebuilds per edition (default 3)"
    )
    parser.add_argument("--work", type=Path, help="build folder (default: a temporary one)")
    parser.add_argument(
        "--docs", type=Path, default=DOCS, help="the Sphinx source folder (default: docs/)"
    )
    parser.add_argument("--plain-exec", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.plain_exec:
        print(json.dumps(plain_execution()))
        return 0
    log = harness.Progress()
    if args.reader_outputs:
        results = harness.read_json(args.results) if args.results.exists() else {}
        results.setdefault("build_cost", {})["reader_outputs"] = measure_reader_outputs(
            ROOT / "build", log
        )
        harness.write_json(args.results, results)
        log(f"wrote 'build_cost.reader_outputs' into {args.results}")
        return 0
    started = time.perf_counter()
    cost: dict[str, Any] = {"date": harness.environment()["date"]}
    cost["load_average_start"] = harness.load_average()
    if args.skip_sphinx:
        cost["sphinx"] = {"status": "skipped", "reason": "--skip-sphinx"}
    else:
        with contextlib.ExitStack() as stack:
            work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory()))
            cost["sphinx"] = {
                "status": "ok",
                **measure_sphinx(work, log, args.docs.resolve(), args.noop_repeats),
            }
    cost["doctest"] = measure_doctests(args.repeats, log)
    cost["load_average_end"] = harness.load_average()
    cost["duration_s"] = round(time.perf_counter() - started, 1)
    if args.results.exists():
        results = harness.read_json(args.results)
    else:
        from benchmarks.cases import torch_environment

        results = harness.new_results(harness.environment(torch_environment()), "build-cost")
    results["build_cost"] = cost
    harness.write_json(args.results, results)
    for line in summary_lines(cost):
        log(line)
    log(f"wrote 'build_cost' into {args.results} in {cost['duration_s']} s")
    failed = cost["doctest"]["doctest_returncode"] not in (0, 1)  # 1: some example failed
    if cost["sphinx"].get("status") == "ok":
        failed |= any(
            e["clean_returncode"] or e["noop_returncode"]
            for e in cost["sphinx"]["editions"].values()
        )
    return 1 if failed else 0


def summary_lines(cost: Mapping[str, Any]) -> list[str]:
    """The measured ratios, one line each."""
    lines = []
    sphinx = cost["sphinx"]
    if sphinx.get("status") == "ok":
        for language, e in sphinx["editions"].items():
            lines.append(
                f"no-op/clean {language}: {e['noop_s']:.1f} s / {e['clean_s']:.1f} s = "
                f"{e['ratio']:.3f} ({harness.describe_goal(e['goal'])})"
            )
        zh = sphinx["zh_gallery_executed"]
        lines.append(
            f"gallery scripts executed by the zh_CN build: {zh['value']} "
            f"({harness.describe_goal(zh['goal'])})"
        )
    else:
        lines.append(f"sphinx builds: skipped ({sphinx.get('reason')})")
    d = cost["doctest"]
    lines.append(
        f"doctest session / plain execution: {d['doctest_s']['median']:.1f} s / "
        f"{d['plain_s']['median']:.1f} s = {d['ratio']:.2f} ({harness.describe_goal(d['goal'])})"
    )
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
