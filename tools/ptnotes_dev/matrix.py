"""The torch release matrix: every example of the pages, docstrings and README on every release.

``nox -s matrix`` runs this module. For each release (the newest patch of every minor release
from the supported lower bound to the newest in the registry) it keeps a virtual environment
under ``.nox/matrix/torch-<release>``, runs the examples with pytest and this package's
recorder (``--record-results``), and merges the outcome into ``docs/_data/matrix.json``:

* per example, keyed by a hash of its source (the file, the example's code and expected
  output, and its ordinal among identical examples of the file): passed, failed (with what it
  printed) or skipped (with why), per release;
* per run: the torch build, CUDA build, device, CPU, Python and date.

Results are cached by (example hash, release): a page is executed on a release only when one
of its examples has no result there, so editing one page re-runs only that page. The unit
tests run on the lowest and the newest release (their outcome is recorded per run).
``nox -s doctest_cuda -- --record-results FILE`` writes the same format for the CUDA column.

Usage::

    python -m ptnotes_dev.matrix run [--release 2.4.1 ...] [--jobs N]
    python -m ptnotes_dev.matrix plan --release 2.4.1
    python -m ptnotes_dev.matrix merge RESULTS.json
    python -m ptnotes_dev.matrix releases
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptnotes_dev.settings import Settings, load

__all__ = [
    "DATA_FILE",
    "Example",
    "column",
    "current_examples",
    "example_key",
    "load_data",
    "merge",
    "newest_patches",
    "pages_to_run",
    "save_data",
]

SCHEMA = 1
DATA_FILE = Path("docs") / "_data" / "matrix.json"
ENVS = Path(".nox") / "matrix"
#: How much of a failed example's report is kept.
OUTPUT_LIMIT = 3000


@dataclass(frozen=True)
class Example:
    """One example of a document, as the matrix knows it."""

    key: str
    doc: str
    line: int


def example_key(doc: str, source: str, ordinal: int) -> str:
    """A stable id for an example: its file, its text and its ordinal among identical ones."""
    digest = hashlib.sha256(f"{doc}\0{source}\0{ordinal}".encode()).hexdigest()
    return digest[:16]


def normalized(code: str) -> str:
    """``code`` as Python reads it: formatting (line breaks, spaces, comments) left out.

    Reformatting an example (``ruff format``) does not change what it does, so it keeps its
    key and its cached results; code that does not parse is kept as written.
    """
    try:
        return ast.unparse(ast.parse(textwrap.dedent(code)))
    except SyntaxError:
        return code.strip()


def example_text(parsed: Any) -> str:
    """The code and expected output of a Sybil example (a doctest example or a code block)."""
    source = getattr(parsed, "source", None)
    if source is None:
        return normalized(str(parsed))
    return f"{normalized(source)}\0{getattr(parsed, 'want', '')}"


class KeyCounter:
    """Assigns keys to the examples of documents in order, numbering identical ones."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], int] = {}

    def key(self, doc: str, text: str) -> str:
        ordinal = self.seen.get((doc, text), 0)
        self.seen[doc, text] = ordinal + 1
        return example_key(doc, text, ordinal)


def current_examples(settings: Settings | None = None) -> list[Example]:
    """Every example the doctest sessions collect today, in file order."""
    from ptnotes_dev.doctesting import documents, sybils

    settings = settings or load()
    root = settings.root
    counter = KeyCounter()
    found: list[Example] = []
    targets = [root / target for target in settings.doctest_targets]
    for document in documents(sybils(root, "cpu"), targets):
        doc = Path(document.path).relative_to(root).as_posix()
        for example in document.examples():
            key = counter.key(doc, example_text(example.parsed))
            found.append(Example(key, doc, example.line))
    return found


def column(release: str, device: str = "cpu") -> str:
    """The matrix column of a run: the release, with ``+cuda`` for CUDA runs."""
    return release if device == "cpu" else f"{release}+{device}"


# -- the data file ----------------------------------------------------------------------------


def load_data(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"schema": SCHEMA, "runs": {}, "examples": {}}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema {data.get('schema')!r}, expected {SCHEMA}")
    return data


def save_data(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def merge(
    data: dict[str, Any], recorded: Mapping[str, Any], examples: Sequence[Example]
) -> dict[str, Any]:
    """``data`` with one recorded run added; examples that no longer exist are dropped."""
    run = recorded["run"]
    name = column(run["release"], run["device"])
    data["runs"][name] = {**data["runs"].get(name, {}), **run}
    table: dict[str, Any] = data["examples"]
    for key, result in recorded["results"].items():
        entry = table.setdefault(key, {"doc": result["doc"], "line": result["line"]})
        entry["doc"], entry["line"] = result["doc"], result["line"]
        outcome = {k: v for k, v in result.items() if k in ("outcome", "output", "reason")}
        entry.setdefault("results", {})[name] = outcome
    live = {example.key: example for example in examples}
    data["examples"] = {
        key: {**entry, "line": live[key].line} for key, entry in table.items() if key in live
    }
    return data


def pages_to_run(data: Mapping[str, Any], examples: Iterable[Example], name: str) -> list[str]:
    """The documents with an example that has no result in column ``name``."""
    table = data.get("examples", {})
    docs = {
        example.doc
        for example in examples
        if name not in table.get(example.key, {}).get("results", {})
    }
    return sorted(docs)


# -- releases -----------------------------------------------------------------------------------


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("+")[0])[:3])


def newest_patches(versions: Iterable[str], lower: str) -> list[str]:
    """The newest patch of each minor release at or above ``lower`` (local builds ignored)."""
    best: dict[tuple[int, ...], str] = {}
    for version in versions:
        if "+" in version or not re.fullmatch(r"\d+\.\d+\.\d+", version):
            continue
        parts = _version(version)
        if parts < _version(lower):
            continue
        minor = parts[:2]
        if minor not in best or parts > _version(best[minor]):
            best[minor] = version
    return [best[minor] for minor in sorted(best)]


def registry_versions() -> list[str]:
    """The torch versions the package index offers (machine-wide caps lifted)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as empty:
        env = dict(os.environ, PIP_CONSTRAINT=empty.name)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", "torch"],
            capture_output=True, text=True, env=env, check=True, timeout=120,
        )  # fmt: skip
    match = re.search(r"Available versions: (.+)", done.stdout)
    if match is None:
        raise RuntimeError(f"pip index versions torch gave no version list:\n{done.stdout}")
    return [v.strip() for v in match.group(1).split(",")]


def lower_bound(settings: Settings) -> str:
    match = re.search(r">=\s*([\d.]+)", settings.torch_range)
    if match is None:
        raise ValueError(f"the torch range {settings.torch_range!r} has no lower bound")
    return match.group(1)


# -- running ----------------------------------------------------------------------------------


def _log(message: str) -> None:
    stamp = dt.datetime.now().strftime("%H:%M:%S")
    print(f"[matrix {stamp}] {message}", flush=True)


def _run(command: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), text=True, check=False, **kwargs)


def ensure_env(settings: Settings, release: str) -> Path:
    """The release's virtual environment: torch installed once, the rest when it changes.

    Two stamp files say what is installed: the torch release (never reinstalled), and a hash
    of the project's requirements and constraints (a change re-runs only that install).
    """
    root = settings.root
    env = root / ENVS / f"torch-{release}"
    python = env / "bin" / "python"
    lock_path = root / ENVS / f".torch-{release}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        # `prepare` may be installing this release in another process: wait for it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        torch_stamp, deps_stamp = env / ".ptnotes-torch", env / ".ptnotes-deps"
        if not (torch_stamp.exists() and torch_stamp.read_text() == release):
            _log(f"torch {release}: creating {env.relative_to(root)}")
            shutil.rmtree(env, ignore_errors=True)
            _run([sys.executable, "-m", "venv", str(env)]).check_returncode()
            _pip(python, f"torch=={release}")
            torch_stamp.write_text(release)
        key = _requirements_key(root)
        if not (deps_stamp.exists() and deps_stamp.read_text() == key):
            _log(f"torch {release}: installing ptnotes[test,docs] and ptnotes_dev")
            constraints = env / "matrix-constraints.txt"
            constraints.write_text(_release_constraints(root, release), encoding="utf-8")
            _pip(python, "-c", str(constraints), "-e", f"{root}[test,docs]", "-e", f"{root}/tools")
            deps_stamp.write_text(key)
        installed = _run(
            [str(python), "-c", "import torch; print(torch.__version__)"], capture_output=True
        ).stdout.strip()
        if installed.split("+")[0] != release:
            raise RuntimeError(f"{env}: torch {installed} installed where {release} belongs")
    return python


#: What torch itself pins (older releases pin sympy exactly): the matrix leaves these to the
#: torch release it installs instead of the project's constraints, which would make pip
#: replace that release with the newest one that accepts the project's pins.
TORCH_OWN_REQUIREMENTS = frozenset(
    {"sympy", "mpmath", "networkx", "filelock", "fsspec", "jinja2", "markupsafe",
     "typing-extensions", "setuptools", "triton"}
)  # fmt: skip


def _release_constraints(root: Path, release: str) -> str:
    """The project's constraints, less torch's own requirements, plus ``torch==release``."""
    lines = [f"torch=={release}"]
    for line in (root / "constraints.txt").read_text(encoding="utf-8").splitlines():
        name = re.split(r"[=<>!~\[; ]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")
        if name and not line.startswith("#") and name not in TORCH_OWN_REQUIREMENTS:
            lines.append(line.strip())
    return "\n".join(lines) + "\n"


def _requirements_key(root: Path) -> str:
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    tools = (root / "tools" / "pyproject.toml").read_text(encoding="utf-8")
    parts = [
        json.dumps(project.get("dependencies", [])),
        json.dumps(project["optional-dependencies"]),
    ]
    parts += [tools, (root / "constraints.txt").read_text(encoding="utf-8")]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _pip(python: Path, *args: str) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as empty:
        # The machine caps torch through a pip constraints file; the matrix lifts it.
        env = dict(os.environ, PIP_CONSTRAINT=empty.name)
        command = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        _run([*command, *args], env=env).check_returncode()


def run_release(
    settings: Settings, release: str, data: dict[str, Any], examples: Sequence[Example],
    unit_tests: bool, index: int, total: int,
) -> dict[str, Any]:  # fmt: skip
    """Run what the cache lacks on one release and merge it into ``data``."""
    root = settings.root
    docs = pages_to_run(data, examples, release)
    prefix = f"release {index} of {total} (torch {release})"
    if not docs and not unit_tests:
        _log(f"{prefix}: all {len(examples)} examples cached, nothing to run")
        return data
    python = ensure_env(settings, release)
    if docs:
        count = sum(1 for example in examples if example.doc in docs)
        _log(
            f"{prefix}: {count} examples of {len(docs)} file(s) to run, "
            f"{len(examples) - count} cached"
        )
        with tempfile.TemporaryDirectory(prefix="ptnotes-matrix-") as tmp:
            out = Path(tmp) / "results.json"
            started = time.perf_counter()
            done = _run(
                [str(python), "-m", "pytest", *docs, "-q",
                 "--record-results", str(out), "--release-label", release],
                cwd=root, env=dict(os.environ, PTNOTES_DOCTEST_DEVICE="cpu"),
                capture_output=True,
            )  # fmt: skip
            tail = (done.stdout or "").strip().splitlines()[-1:] or ["(no output)"]
            _log(
                f"{prefix}: pytest exit {done.returncode}, {tail[0]} "
                f"({time.perf_counter() - started:.0f} s)"
            )
            if not out.exists():
                raise RuntimeError(f"{prefix}: no results written:\n{done.stdout}\n{done.stderr}")
            recorded = json.loads(out.read_text(encoding="utf-8"))
        data = merge(data, recorded, examples)
    if unit_tests:
        data = run_unit_tests(settings, release, data, prefix)
    return data


def tests_key(root: Path) -> str:
    """A hash of what the unit tests test: the tests, the package and the machinery."""
    digest = hashlib.sha256()
    for folder in ("tests", "src", "tools"):
        for path in sorted((root / folder).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def run_unit_tests(
    settings: Settings, release: str, data: dict[str, Any], prefix: str
) -> dict[str, Any]:
    """The unit tests (tests/, not the browser tests) on one release, unless already run."""
    root = settings.root
    key = tests_key(root)
    record = data["runs"].get(release, {}).get("unit_tests", {})
    if record.get("source") == key:
        _log(f"{prefix}: unit tests cached (exit {record['exit_code']})")
        return data
    python = ensure_env(settings, release)
    _log(f"{prefix}: unit tests")
    done = _run(
        # Not the checks of the matrix's own data: they cannot pass before the run ends.
        [str(python), "-m", "pytest", "tests", "--ignore=tests/site", "-q",
         "-m", "not matrix_data"],
        cwd=root, capture_output=True,
    )  # fmt: skip
    last = (done.stdout or "").strip().splitlines()[-1:] or ["(no output)"]
    failed = [line for line in (done.stdout or "").splitlines() if line.startswith("FAILED")]
    data["runs"].setdefault(release, {})["unit_tests"] = {
        "exit_code": done.returncode,
        "summary": last[0].strip("= "),
        "failed": failed[:50],
        "source": key,
    }
    _log(f"{prefix}: unit tests exit {done.returncode}: {last[0]}")
    return data


def command_run(args: argparse.Namespace) -> int:
    settings = load()
    path = settings.root / DATA_FILE
    releases = args.release or newest_patches(registry_versions(), lower_bound(settings))
    _log(f"releases: {', '.join(releases)}")
    examples = current_examples(settings)
    _log(f"{len(examples)} examples in {len({e.doc for e in examples})} files")
    data = load_data(path)
    started = time.perf_counter()
    for index, release in enumerate(releases, 1):
        data = run_release(settings, release, data, examples, False, index, len(releases))
        save_data(path, data)  # after every release: a partial run is not lost
    if args.unit_tests:
        # The newest, then upwards from the lowest until a release passes: the package's
        # lower bound is the lowest release on which they pass.
        for release in [releases[-1], *releases[:-1]]:
            data = run_unit_tests(settings, release, data, f"unit tests (torch {release})")
            save_data(path, data)
            if release != releases[-1] and data["runs"][release]["unit_tests"]["exit_code"] == 0:
                break
    _log(f"done in {time.perf_counter() - started:.0f} s; data in {DATA_FILE}")
    return 0


def command_prepare(args: argparse.Namespace) -> int:
    """Create the releases' environments ahead of a run (a second process may run this)."""
    settings = load()
    releases = args.release or newest_patches(registry_versions(), lower_bound(settings))
    for release in reversed(releases) if args.newest_first else releases:
        ensure_env(settings, release)
        _log(f"torch {release}: environment ready")
    return 0


def command_plan(args: argparse.Namespace) -> int:
    settings = load()
    data = load_data(settings.root / DATA_FILE)
    for doc in pages_to_run(data, current_examples(settings), column(args.release, args.device)):
        print(doc)
    return 0


def command_merge(args: argparse.Namespace) -> int:
    settings = load()
    path = settings.root / DATA_FILE
    recorded = json.loads(Path(args.results).read_text(encoding="utf-8"))
    save_data(path, merge(load_data(path), recorded, current_examples(settings)))
    print(f"merged {len(recorded['results'])} results into {DATA_FILE}")
    return 0


def command_forget(args: argparse.Namespace) -> int:
    """Drop the results of some files (all releases): their next run executes them again.

    For a change outside the examples that changes their outcome (the doctest machinery).
    """
    settings = load()
    path = settings.root / DATA_FILE
    data = load_data(path)
    forgotten = 0
    for entry in data["examples"].values():
        if entry["doc"] not in args.doc:
            continue
        for name in list(entry.get("results", {})):
            if not args.release or name in args.release:
                del entry["results"][name]
                forgotten += 1
    save_data(path, data)
    print(f"forgot {forgotten} results of {len(args.doc)} file(s)")
    return 0


def command_releases(args: argparse.Namespace) -> int:
    print(" ".join(newest_patches(registry_versions(), lower_bound(load()))))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ptnotes_dev.matrix", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the matrix (cached) and update the data file")
    run.add_argument("--release", action="append", help="only these releases (repeatable)")
    run.add_argument("--no-unit-tests", dest="unit_tests", action="store_false")
    run.set_defaults(func=command_run)
    prepare = commands.add_parser("prepare", help="create the releases' environments only")
    prepare.add_argument("--release", action="append", help="only these releases")
    prepare.add_argument("--newest-first", action="store_true")
    prepare.set_defaults(func=command_prepare)
    plan = commands.add_parser("plan", help="the files a release would run")
    plan.add_argument("--release", required=True)
    plan.add_argument("--device", default="cpu")
    plan.set_defaults(func=command_plan)
    merge_ = commands.add_parser("merge", help="merge a --record-results file")
    merge_.add_argument("results")
    merge_.set_defaults(func=command_merge)
    forget = commands.add_parser("forget", help="drop the results of files (all releases)")
    forget.add_argument("doc", nargs="+", help="files as the data names them (docs/x.md)")
    forget.add_argument("--release", action="append", help="only on these columns")
    forget.set_defaults(func=command_forget)
    releases = commands.add_parser("releases", help="the releases the matrix covers")
    releases.set_defaults(func=command_releases)
    args = parser.parse_args(argv)
    status: int = args.func(args)
    return status


def environment(release: str, device: str) -> dict[str, Any]:
    """The run's torch build, device, CPU, Python and date."""
    import torch

    from ptnotes_dev.bench import cpu_model

    info: dict[str, Any] = {
        "release": release,
        "device": device,
        "torch": torch.__version__,
        "cuda_build": torch.version.cuda,
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "date": dt.date.today().isoformat(),
    }
    if device == "cuda" and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


# -- reading the data (the site's stamps, the compatibility page, the ledger) -------------------


def column_order(name: str) -> tuple[tuple[int, ...], str]:
    release, _, device = name.partition("+")
    return _version(release), device


def cpu_columns(data: Mapping[str, Any]) -> list[str]:
    """The CPU columns of the data, oldest release first."""
    return sorted((c for c in data.get("runs", {}) if "+" not in c), key=column_order)


def device_columns(data: Mapping[str, Any]) -> list[str]:
    """The columns of runs on another device (``2.13.0+cuda``), oldest first."""
    return sorted((c for c in data.get("runs", {}) if "+" in c), key=column_order)


def outcome(data: Mapping[str, Any], key: str, name: str) -> str | None:
    """``passed``, ``failed``, ``skipped``, or None when the example has no result there."""
    result = data.get("examples", {}).get(key, {}).get("results", {}).get(name)
    return None if result is None else str(result["outcome"])


@dataclass(frozen=True)
class PageStatus:
    """What the matrix says about the examples of one file."""

    examples: int
    unrecorded: int
    passed_on: tuple[str, ...]
    failed_on: tuple[str, ...]
    ran_on: tuple[str, ...]


def page_status(data: Mapping[str, Any], keys: Sequence[str], columns: Sequence[str]) -> PageStatus:
    """Columns where every recorded example passed (or was skipped), and where one failed.

    ``unrecorded`` counts examples edited or added after the last matrix run (no result in
    any column): the stamp then names the release CI checks them on.
    """
    unrecorded = sum(1 for key in keys if all(outcome(data, key, c) is None for c in columns))
    passed, failed, ran = [], [], []
    for name in columns:
        outcomes = [outcome(data, key, name) for key in keys]
        recorded = [o for o in outcomes if o is not None]
        if not recorded:
            continue
        ran.append(name)
        if "failed" in recorded:
            failed.append(name)
        elif len(recorded) == len(keys) - unrecorded and any(o == "passed" for o in recorded):
            passed.append(name)
    return PageStatus(len(keys), unrecorded, tuple(passed), tuple(failed), tuple(ran))


def holds_since(data: Mapping[str, Any], keys: Sequence[str], columns: Sequence[str]) -> str | None:
    """The oldest column from which on every example of ``keys`` passes on every column.

    None when one fails on the newest column (today's output does not hold there).
    """
    since = None
    for name in reversed(columns):
        if any(outcome(data, key, name) == "failed" for key in keys):
            break
        since = name
    return since


def failure_output(data: Mapping[str, Any], key: str, name: str) -> str:
    result = data.get("examples", {}).get(key, {}).get("results", {}).get(name, {})
    return str(result.get("output", ""))


def passing(data: Mapping[str, Any], keys: Sequence[str], columns: Sequence[str]) -> list[str]:
    """The keys that passed on at least one of ``columns`` (not skipped everywhere)."""
    return [k for k in keys if any(outcome(data, k, c) == "passed" for c in columns)]


def unrecorded(data: Mapping[str, Any], keys: Sequence[str]) -> list[str]:
    """The keys that have no result on some CPU column (edited since the last matrix run)."""
    columns = cpu_columns(data)
    return [k for k in keys if any(outcome(data, k, c) is None for c in columns)]


# -- releases named in prose ------------------------------------------------------------------

#: A release number: ``2.6``, ``2.13.0``, ``1.1.0`` (as major and minor).
RELEASE = re.compile(r"(?<![\w.])(\d+)\.(\d+)(?:\.\d+)?(?![\w.]*\d)")
#: A release of torch named in prose: after "PyTorch"/"torch", or after a word that dates it.
NAMED_RELEASE = re.compile(
    r"\b(?:PyTorch|torch|since|from|until|before|after|in|on)\s+v?"
    r"(\d+\.\d+(?:\.\d+)?)(?![\w.]*\d)"
)
FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})")
HEADING = re.compile(r"^(#+) ")


def labelled_lines(text: str, label: str) -> tuple[int, int] | None:
    """The first and last line (1-based) of what the target ``(label)=`` names in ``text``.

    A label above a heading names its section (up to the next heading of the same or a
    higher level); a label above a code fence names that block. None when the label is
    missing or names something else.
    """
    lines = text.splitlines()
    marker = f"({label})="
    starts = [i for i, line in enumerate(lines) if line.strip() == marker]
    if len(starts) != 1:
        return None
    after = starts[0] + 1
    while after < len(lines) and not lines[after].strip():
        after += 1
    if after == len(lines):
        return None
    heading = HEADING.match(lines[after])
    if heading:
        level = len(heading.group(1))
        end = next(
            (
                i
                for i in range(after + 1, len(lines))
                if (h := HEADING.match(lines[i])) and len(h.group(1)) <= level
            ),
            len(lines),
        )
        return after + 1, end
    fence = FENCE.match(lines[after])
    if fence:
        close = fence.group(1)
        end = next(
            (i for i in range(after + 1, len(lines)) if lines[i].strip() == close),
            len(lines) - 1,
        )
        return after + 1, end + 1
    return None


def releases_named(text: str, lower: str) -> list[str]:
    """The releases of the matrix's range (from ``lower``, major 2) that ``text`` names."""
    low = _version(lower)[:2]
    return [
        found
        for found in NAMED_RELEASE.findall(text)
        if _version(found)[0] == low[0] and _version(found)[:2] >= low
    ]


def since_problem(
    data: Mapping[str, Any], keys: Sequence[str], named: tuple[str, str]
) -> str | None:
    """How prose saying "since release ``named``" disagrees with the data about ``keys``.

    ``named`` is (major, minor). The examples must show today's behaviour from that release on;
    a release older than the range agrees when they pass on every release of the range. None
    when the data agrees, or has no result yet for one of the examples (CI then checks them on
    the pinned torch, and ``test_matrix_data_holds_every_example_that_exists`` asks for a run).
    """
    columns = cpu_columns(data)
    if not columns or unrecorded(data, keys):
        return None
    release = (int(named[0]), int(named[1]))
    text = ".".join(named)
    since = holds_since(data, keys, columns)
    if since is None:
        return f"the examples fail on the newest release, {columns[-1]}"
    if release > _version(columns[-1])[:2]:
        return f"{text} is newer than the newest release the matrix runs ({columns[-1]})"
    if release <= _version(columns[0])[:2]:
        if since != columns[0]:
            return f"the prose says {text}, but the examples change at {since}"
        return None
    if _version(since)[:2] != release:
        return f"the prose says {text}, but the examples show it from {since}"
    return None


if __name__ == "__main__":
    sys.exit(main())
