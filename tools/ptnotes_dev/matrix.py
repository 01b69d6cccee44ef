"""The torch release matrix: every example of the pages, docstrings and README on every release.

``nox -s matrix`` runs this module. For each release (the newest patch of every minor release
from the supported lower bound to the newest in the registry) it keeps a virtual environment
under ``.nox/matrix-releases/torch-<release>``, runs the examples with pytest and this package's
recorder (``--record-results``), and merges the outcome into ``docs/_data/matrix.json``:

* per example, keyed by a hash of its source (the file, the example's code and expected
  output, and its ordinal among identical examples of the file): passed, failed (with what it
  printed) or skipped (with why), per release;
* per run: the torch build, CUDA build, device, CPU, Python and date.

Results are cached by (example hash, release): a page is executed on a release only when one
of its examples has no result there, so editing one page re-runs only that page. The unit
tests run on the lowest and the newest release (their outcome is recorded per run).
``nox -s doctest_cuda -- --record-results FILE`` writes the same format for the CUDA column.

On CI the matrix runs as shards, one job per release (``.github/workflows/matrix.yml``,
``docs/dev/ci.md``): ``plan --json`` says which releases of the range need a run and why,
``run --release R --output F`` writes one release's results to a shard file and touches no
data file, and ``merge`` folds any number of shards into the data file, in any order, with a
summary of the new failures. A shard's column names its release, device and platform.

Usage::

    python -m ptnotes_dev.matrix run [--release 2.4.1 ...]
    python -m ptnotes_dev.matrix run --release 2.13.0 --output shard.json [--unit-tests] [--all]
    python -m ptnotes_dev.matrix plan --release 2.4.1          # the files it would run
    python -m ptnotes_dev.matrix plan --json [--output plan.json]  # the whole range, for CI
    python -m ptnotes_dev.matrix merge SHARD.json ... [--summary summary.md]
    python -m ptnotes_dev.matrix compare SHARD.json --against matrix.json
    python -m ptnotes_dev.matrix bench --release 2.13.0 --release 2.15.0 ...
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
ENVS = Path(".nox") / "matrix-releases"
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


#: The platform of the plain release columns (``2.13.0``); a run on another platform fills a
#: column of its own (``2.12.1+cpu@macos-arm64``).
DEFAULT_PLATFORM = "linux-x86_64"


def current_platform() -> str:
    """This machine's platform as the matrix names it: ``linux-x86_64``, ``macos-arm64``."""
    system = {"darwin": "macos"}.get(platform.system().lower(), platform.system().lower())
    machine = {"amd64": "x86_64", "aarch64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    return f"{system}-{machine}"


def column(release: str, device: str = "cpu", platform: str = DEFAULT_PLATFORM) -> str:
    """The matrix column of a run: its release, device and platform.

    CPU on the default platform is the release alone (the columns the stamps read); another
    device adds ``+cuda``, another platform ``@<platform>`` (``2.12.1+cpu@macos-arm64``), so
    each fills a column of its own through the same merge.
    """
    if platform == DEFAULT_PLATFORM:
        return release if device == "cpu" else f"{release}+{device}"
    return f"{release}+{device}@{platform}"


def run_column(run: Mapping[str, Any]) -> str:
    """The column of a recorded run (a run recorded before platforms were named: the default)."""
    return column(run["release"], run["device"], run.get("platform", DEFAULT_PLATFORM))


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
    name = run_column(run)
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


# -- shards: one release's run, recorded for a later merge ---------------------------------------

SHARD_KIND = "ptnotes-matrix-shard"


class ShardError(ValueError):
    """A shard that cannot be merged into this checkout's data."""


def examples_fingerprint(examples: Sequence[Example]) -> str:
    """A hash of the examples a checkout has (their keys): equal on checkouts of one commit."""
    return hashlib.sha256("\n".join(sorted(e.key for e in examples)).encode()).hexdigest()[:16]


def make_shard(
    recorded: Mapping[str, Any],
    examples: Sequence[Example],
    commit: str | None,
    unit_tests: Mapping[str, Any] | None = None,
    timing: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """A shard: one recorded run with its key (release, device, platform) and its examples."""
    run = recorded["run"]
    key = {
        "release": run["release"],
        "device": run["device"],
        "platform": run.get("platform", DEFAULT_PLATFORM),
    }
    shard: dict[str, Any] = {
        "kind": SHARD_KIND,
        "schema": SCHEMA,
        "shard": {**key, "column": run_column(run)},
        "commit": commit,
        "examples": examples_fingerprint(examples),
        "run": dict(run),
        "results": dict(recorded["results"]),
    }
    if unit_tests is not None:
        shard["unit_tests"] = dict(unit_tests)
    if timing is not None:
        shard["timing"] = dict(timing)
    return shard


def as_shard(
    recorded: Mapping[str, Any], examples: Sequence[Example], source: str = "the file"
) -> dict[str, Any]:
    """``recorded`` as a shard, checked against this checkout's ``examples``.

    A shard must come from a checkout with the same examples (same fingerprint); a plain
    ``--record-results`` file (``nox -s doctest_cuda``) carries no fingerprint, and must name
    only examples that exist here. Raises ShardError with what to do otherwise.
    """
    if recorded.get("kind") != SHARD_KIND:
        if "run" not in recorded or "results" not in recorded:
            raise ShardError(f"{source}: neither a shard nor a --record-results file")
        live = {e.key for e in examples}
        unknown = sorted(set(recorded["results"]) - live)
        if unknown:
            first = recorded["results"][unknown[0]]
            raise ShardError(
                f"{source}: {len(unknown)} of its {len(recorded['results'])} results are of "
                f"examples this checkout does not have (e.g. {first['doc']}:{first['line']}): "
                "it was recorded on another commit's examples; record it again on this one"
            )
        return make_shard(recorded, examples, None)
    if recorded.get("schema") != SCHEMA:
        raise ShardError(f"{source}: shard schema {recorded.get('schema')!r}, expected {SCHEMA}")
    here = examples_fingerprint(examples)
    if recorded["examples"] != here:
        commit = recorded.get("commit") or "an unknown commit"
        raise ShardError(
            f"{source}: this shard ({recorded['shard']['column']}) was recorded on the examples "
            f"of {commit} (fingerprint {recorded['examples']}), and this checkout's examples "
            f"differ (fingerprint {here}). Merge it from a checkout of that commit, or run the "
            "shard again on this one."
        )
    return dict(recorded)


def _shard_order(shard: Mapping[str, Any]) -> tuple[tuple[tuple[int, ...], str], str]:
    return column_order(shard["shard"]["column"]), json.dumps(shard, sort_keys=True)


def merge_shards(
    data: dict[str, Any],
    shards: Iterable[Mapping[str, Any]],
    examples: Sequence[Example],
    *,
    check: bool = True,
) -> dict[str, Any]:
    """``data`` with every shard merged, the same whatever the order of ``shards``.

    Each shard must pass :func:`as_shard` (unless ``check`` is false: a comparison that
    writes nothing). Shards are applied in a canonical order (by column, then content), so
    two shards of one column give the same file in any order.
    """
    checked = (
        [as_shard(shard, examples, f"shard {i + 1}") for i, shard in enumerate(shards)]
        if check
        else list(shards)
    )
    for shard in sorted(checked, key=_shard_order):
        data = merge(data, shard, examples)
        if "unit_tests" in shard:
            data["runs"][shard["shard"]["column"]]["unit_tests"] = dict(shard["unit_tests"])
    data["runs"] = dict(sorted(data["runs"].items()))
    return data


def new_failures(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> dict[str, dict[str, list[int]]]:
    """Per page, per column: the lines of examples that fail in ``after`` and did not before.

    An example that is new (edited) and fails counts as new.
    """
    found: dict[str, dict[str, list[int]]] = {}
    for key, entry in after.get("examples", {}).items():
        for name, result in entry.get("results", {}).items():
            if result["outcome"] != "failed" or outcome(before, key, name) == "failed":
                continue
            found.setdefault(entry["doc"], {}).setdefault(name, []).append(entry["line"])
    return {
        doc: {name: sorted(lines) for name, lines in sorted(cols.items(), key=_by_column)}
        for doc, cols in sorted(found.items())
    }


def _by_column(item: tuple[str, Any]) -> tuple[tuple[int, ...], str]:
    return column_order(item[0])


def merge_summary(
    before: Mapping[str, Any], after: Mapping[str, Any], shards: Sequence[Mapping[str, Any]]
) -> str:
    """Markdown for the job summary and the pull request: the shards, then new failures."""
    lines = ["## Release matrix", ""]
    lines.append("| Column | Torch | Examples run | Failed | Unit tests | Seconds (env + run) |")
    lines.append("| --- | --- | --- | --- | --- | --- |")
    for shard in sorted(shards, key=_shard_order):
        results = shard["results"].values()
        failed = sum(1 for r in results if r["outcome"] == "failed")
        tests = shard.get("unit_tests")
        unit = f"exit {tests['exit_code']}: {tests['summary']}" if tests else "not run"
        torch = shard["run"].get("torch", "?")
        timing = shard.get("timing", {})
        seconds = " + ".join(
            f"{timing[k]:.0f}"
            for k in ("environment_s", "examples_s", "unit_tests_s")
            if k in timing
        )
        lines.append(
            f"| `{shard['shard']['column']}` | {torch} | {len(shard['results'])} | "
            f"{failed} | {unit} | {seconds or '-'} |"
        )
    failures = new_failures(before, after)
    lines += ["", "### New failures", ""]
    if not failures:
        lines.append("None: no example fails that passed (or did not exist) before.")
    for doc, columns in failures.items():
        for name, where in columns.items():
            shown = ", ".join(str(line) for line in where[:10])
            more = f" and {len(where) - 10} more" if len(where) > 10 else ""
            lines.append(f"- `{doc}` on `{name}`: line(s) {shown}{more}")
    return "\n".join(lines) + "\n"


# -- the plan: which releases of the range need a run ------------------------------------------


def plan_range(
    data: Mapping[str, Any],
    examples: Sequence[Example],
    releases: Sequence[str],
    unit_tests_source: str,
    *,
    device: str = "cpu",
    platform: str = DEFAULT_PLATFORM,
) -> list[dict[str, Any]]:
    """One entry per release of ``releases`` that needs a run, with why.

    Reasons: ``new release`` (no column yet), ``N examples without a result`` (edited or
    added since the last run), ``unit tests`` (on the lowest and the newest release, when
    the tests, the package or the machinery changed since they last ran there). Each
    release is judged by its column on ``device`` and ``platform``: another platform's
    plan asks what that platform's columns lack. Releases given in any order are planned
    oldest first, and the lowest and newest are judged by version, not by place in the list.
    """
    planned = []
    releases = sorted(dict.fromkeys(releases), key=_version)
    for release in releases:
        reasons = []
        name = column(release, device, platform)
        if name not in data.get("runs", {}):
            reasons.append("new release")
        else:
            missing = [e for e in examples if outcome(data, e.key, name) is None]
            if missing:
                files = len({e.doc for e in missing})
                reasons.append(f"{len(missing)} examples without a result ({files} files)")
        unit_tests = release in (releases[0], releases[-1]) and (
            data.get("runs", {}).get(name, {}).get("unit_tests", {}).get("source")
            != unit_tests_source
        )
        if unit_tests:
            reasons.append("unit tests")
        if reasons:
            planned.append({"release": release, "reasons": reasons, "unit_tests": unit_tests})
    return planned


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


def parse_index_versions(text: str) -> list[str]:
    """The versions in the answer of ``pip index versions torch``, as the index lists them.

    The answer is a header line (``torch (2.15.0)``), ``Available versions: a, b, …`` and,
    when torch is installed, ``INSTALLED:``/``LATEST:`` lines; pip may warn around it (the
    command is experimental). Raises ValueError when there is no version list.
    """
    match = re.search(r"^Available versions:(.*)$", text, re.MULTILINE)
    if match is None:
        raise ValueError(f"no 'Available versions:' line in the index's answer:\n{text}")
    versions = [v.strip() for v in match.group(1).split(",") if v.strip()]
    if not versions:
        raise ValueError(f"an empty version list in the index's answer:\n{text}")
    return versions


def registry_versions() -> list[str]:
    """The torch versions the package index offers (machine-wide caps lifted)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as empty:
        env = dict(os.environ, PIP_CONSTRAINT=empty.name)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", "torch"],
            capture_output=True, text=True, env=env, check=True, timeout=120,
        )  # fmt: skip
    return parse_index_versions(done.stdout)


def range_releases(settings: Settings, listing: str | None = None) -> list[str]:
    """The releases of the supported range: from the index, or from a recorded ``listing``."""
    versions = registry_versions() if listing is None else parse_index_versions(listing)
    return newest_patches(versions, lower_bound(settings))


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


def ensure_env(settings: Settings, release: str, envs: Path | None = None) -> Path:
    """The release's virtual environment: torch installed once, the rest when it changes.

    Two stamp files say what is installed: the torch release (never reinstalled), and a hash
    of the project's requirements and constraints (a change re-runs only that install).
    ``envs`` is the folder of the environments (default ``.nox/matrix-releases``).
    """
    root = settings.root
    envs = root / ENVS if envs is None else envs
    env = envs / f"torch-{release}"
    python = env / "bin" / "python"
    lock_path = envs / f".torch-{release}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        # `prepare` may be installing this release in another process: wait for it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        torch_stamp, deps_stamp = env / ".ptnotes-torch", env / ".ptnotes-deps"
        if not (torch_stamp.exists() and torch_stamp.read_text() == release):
            _log(f"torch {release}: creating {env}")
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
    docs = pages_to_run(data, examples, column(release, "cpu", current_platform()))
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
        data = merge(data, record_release(root, python, release, docs, prefix), examples)
    if unit_tests:
        data = run_unit_tests(settings, release, data, prefix)
    return data


def record_release(
    root: Path, python: Path, release: str, docs: Sequence[str], prefix: str
) -> dict[str, Any]:
    """Run the examples of ``docs`` with ``python`` and return the recorder's results."""
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
        recorded: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return recorded


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
    name = column(release, "cpu", current_platform())
    record = data["runs"].get(name, {}).get("unit_tests", {})
    if record.get("source") == key:
        _log(f"{prefix}: unit tests cached (exit {record['exit_code']})")
        return data
    python = ensure_env(settings, release)
    data["runs"].setdefault(name, {})["unit_tests"] = unit_test_record(root, python, prefix)
    return data


def unit_test_record(root: Path, python: Path, prefix: str) -> dict[str, Any]:
    """Run the unit tests (not the browser tests) with ``python``: exit code, summary, failures."""
    _log(f"{prefix}: unit tests")
    done = _run(
        # Not the checks of the matrix's own data: they cannot pass before the run ends.
        [str(python), "-m", "pytest", "tests", "--ignore=tests/site", "-q",
         "-m", "not matrix_data"],
        cwd=root, capture_output=True,
    )  # fmt: skip
    last = (done.stdout or "").strip().splitlines()[-1:] or ["(no output)"]
    failed = [line for line in (done.stdout or "").splitlines() if line.startswith("FAILED")]
    _log(f"{prefix}: unit tests exit {done.returncode}: {last[0]}")
    return {
        "exit_code": done.returncode,
        "summary": last[0].strip("= "),
        "failed": failed[:50],
        "source": tests_key(root),
    }


def command_run(args: argparse.Namespace) -> int:
    if args.output:
        return command_shard(args)
    settings = load()
    path = settings.root / DATA_FILE
    releases = args.release or range_releases(settings)
    _log(f"releases: {', '.join(releases)}")
    examples = current_examples(settings)
    _log(f"{len(examples)} examples in {len({e.doc for e in examples})} files")
    data = load_data(path)
    started = time.perf_counter()
    for index, release in enumerate(releases, 1):
        data = run_release(settings, release, data, examples, False, index, len(releases))
        save_data(path, data)  # after every release: a partial run is not lost
    if args.unit_tests is not False:
        # The newest, then upwards from the lowest until a release passes: the package's
        # lower bound is the lowest release on which they pass.
        for release in [releases[-1], *releases[:-1]]:
            data = run_unit_tests(settings, release, data, f"unit tests (torch {release})")
            save_data(path, data)
            name = column(release, "cpu", current_platform())
            if release != releases[-1] and data["runs"][name]["unit_tests"]["exit_code"] == 0:
                break
    _log(f"done in {time.perf_counter() - started:.0f} s; data in {DATA_FILE}")
    return 0


def git_commit(root: Path) -> str | None:
    """The checked-out commit (``+dirty`` with uncommitted changes), or None outside git."""
    done = _run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True)
    if done.returncode != 0:
        return None
    changed = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                   capture_output=True)  # fmt: skip
    return done.stdout.strip() + ("+dirty" if changed.stdout.strip() else "")


def run_shard(
    settings: Settings,
    release: str,
    data: Mapping[str, Any],
    examples: Sequence[Example],
    *,
    unit_tests: bool,
    everything: bool,
    envs: Path | None = None,
) -> dict[str, Any]:
    """One release's shard: its environment, the files the data lacks (all with
    ``everything``) and, with ``unit_tests``, the unit tests. Reads ``data``, writes none.

    What the data lacks is asked of this machine's column (``column(release, "cpu",
    current_platform())``): a shard on another platform fills the gaps of its own column.
    """
    root = settings.root
    name = column(release, "cpu", current_platform())
    prefix = f"shard torch {release}" + ("" if name == release else f" ({name})")
    started = time.perf_counter()
    python = ensure_env(settings, release, envs)
    environment_s = time.perf_counter() - started
    docs = sorted({e.doc for e in examples}) if everything else pages_to_run(data, examples, name)
    count = sum(1 for example in examples if example.doc in docs)
    _log(f"{prefix}: {count} examples of {len(docs)} file(s) to run")
    started = time.perf_counter()
    if docs:
        recorded = record_release(root, python, release, docs, prefix)
    else:  # nothing to run: the run's description alone
        done = _run(
            [str(python), "-c", "import json, sys; from ptnotes_dev.matrix import environment; "
             "print(json.dumps(environment(sys.argv[1], 'cpu')))", release],
            cwd=root, capture_output=True,
        )  # fmt: skip
        done.check_returncode()
        recorded = {"run": json.loads(done.stdout), "results": {}}
    examples_s = time.perf_counter() - started
    started = time.perf_counter()
    tests = unit_test_record(root, python, prefix) if unit_tests else None
    tests_s = time.perf_counter() - started
    timing = {"environment_s": round(environment_s, 1), "examples_s": round(examples_s, 1)}
    if unit_tests:
        timing["unit_tests_s"] = round(tests_s, 1)
    return make_shard(recorded, examples, git_commit(root), tests, timing)


def command_shard(args: argparse.Namespace) -> int:
    """``run --release R --output F``: one release's shard; no data file is written."""
    if not args.release or len(args.release) != 1:
        raise SystemExit("run --output writes one shard: give exactly one --release")
    settings = load()
    data = load_data(Path(args.data) if args.data else settings.root / DATA_FILE)
    examples = current_examples(settings)
    shard = run_shard(
        settings, args.release[0], data, examples,
        unit_tests=bool(args.unit_tests), everything=args.all,
    )  # fmt: skip
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(shard, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    _log(f"shard {shard['shard']['column']}: {len(shard['results'])} results in {out}")
    return 0


def command_prepare(args: argparse.Namespace) -> int:
    """Create the releases' environments ahead of a run (a second process may run this)."""
    settings = load()
    releases = args.release or range_releases(settings)
    for release in reversed(releases) if args.newest_first else releases:
        ensure_env(settings, release)
        _log(f"torch {release}: environment ready")
    return 0


def command_plan(args: argparse.Namespace) -> int:
    settings = load()
    data = load_data(Path(args.data) if args.data else settings.root / DATA_FILE)
    examples = current_examples(settings)
    if not args.json:
        if not args.release or len(args.release) != 1:
            raise SystemExit("plan without --json lists the files of one --release")
        name = column(args.release[0], args.device, args.platform)
        for doc in pages_to_run(data, examples, name):
            print(doc)
        return 0
    listing = Path(args.listing).read_text(encoding="utf-8") if args.listing else None
    releases = args.release or range_releases(settings, listing)
    planned = plan_range(
        data, examples, releases, tests_key(settings.root),
        device=args.device, platform=args.platform,
    )  # fmt: skip
    plan = {"releases": releases, "count": len(planned), "include": planned}
    text = json.dumps(plan, separators=(",", ":"))
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        for entry in planned:
            _log(f"torch {entry['release']}: {'; '.join(entry['reasons'])}")
        _log(f"{len(planned)} of {len(releases)} releases need a run; plan in {args.output}")
    else:
        print(text)
    return 0


def command_merge(args: argparse.Namespace) -> int:
    settings = load()
    path = Path(args.data) if args.data else settings.root / DATA_FILE
    shards = [json.loads(Path(f).read_text(encoding="utf-8")) for f in args.results]
    examples = current_examples(settings)
    before = load_data(path)
    try:
        checked = [as_shard(s, examples, f) for s, f in zip(shards, args.results, strict=True)]
        after = merge_shards(json.loads(json.dumps(before)), checked, examples)
    except ShardError as error:
        print(f"merge refused: {error}", file=sys.stderr)
        return 2
    save_data(path, after)
    results = sum(len(s["results"]) for s in checked)
    print(f"merged {len(checked)} shard(s), {results} results, into {path}")
    if args.summary:
        Path(args.summary).write_text(merge_summary(before, after, checked), encoding="utf-8")
    return 0


def compare_column(
    reference: Mapping[str, Any], shard: Mapping[str, Any], examples: Sequence[Example]
) -> tuple[int, list[str]]:
    """Merge ``shard`` into ``reference`` without its column; compare with the reference.

    Returns how many examples both hold, and how those differ in outcome (or skip reason).
    Examples only one side has (edited since the reference was recorded) are not compared.
    """
    name = shard["shard"]["column"]
    base = json.loads(json.dumps(reference))
    for entry in base["examples"].values():
        entry.get("results", {}).pop(name, None)
    base["runs"].pop(name, None)
    # Not checked against this checkout's examples: pages edited since the shard was recorded
    # only leave their examples out of the comparison.
    merged = merge_shards(base, [shard], examples, check=False)
    compared, differences = 0, []
    for key, entry in merged["examples"].items():
        ours = entry.get("results", {}).get(name)
        theirs = reference["examples"].get(key, {}).get("results", {}).get(name)
        if ours is None or theirs is None:
            continue
        compared += 1
        if (ours["outcome"], ours.get("reason")) != (theirs["outcome"], theirs.get("reason")):
            differences.append(
                f"{entry['doc']}:{entry['line']}: {ours['outcome']} here, "
                f"{theirs['outcome']} in the reference"
            )
    return compared, differences


def command_compare(args: argparse.Namespace) -> int:
    """Does a shard, merged, reproduce a column of a data file (e.g. the committed one)?"""
    settings = load()
    shard = json.loads(Path(args.shard).read_text(encoding="utf-8"))
    reference = load_data(Path(args.against))
    compared, differences = compare_column(reference, shard, current_examples(settings))
    name = shard["shard"]["column"]
    for line in differences:
        print(line)
    print(
        f"{name}: {compared} examples compared, {len(differences)} differ "
        f"({len(shard['results'])} in the shard)"
    )
    return 1 if differences or not compared else 0


#: Where ``bench`` writes its report: beside the data it measures, rendered nowhere by hand.
BENCH_FILE = Path("docs") / "_data" / "matrix-shards.json"


def recorded_unit_test_seconds(data: Mapping[str, Any]) -> dict[str, float]:
    """The duration of the unit tests per column, from the summaries the data holds."""
    found = {}
    for name, run in data.get("runs", {}).items():
        match = re.search(r" in ([\d.]+)s", run.get("unit_tests", {}).get("summary", ""))
        if match:
            found[name] = float(match.group(1))
    return found


def shard_report(
    measured: Sequence[Mapping[str, Any]], unit_tests_s: Mapping[str, float]
) -> dict[str, Any]:
    """Serial time (one runner, one release after the other) against the slowest shard.

    ``measured``: per release, ``environment_s`` and ``examples_s`` of a shard that ran every
    example in a new environment. The unit tests, which the lowest and the newest release's
    shards add, are taken from the durations the data records (``unit_tests_s``).
    """
    rows = []
    for entry in measured:
        total = entry["environment_s"] + entry["examples_s"]
        rows.append({**entry, "shard_s": round(total, 1)})
    serial = sum(row["shard_s"] for row in rows)
    slowest = max(rows, key=lambda row: row["shard_s"])
    ends = [rows[0]["release"], rows[-1]["release"]] if rows else []
    tests = {r: unit_tests_s[r] for r in ends if r in unit_tests_s}
    with_tests = [row["shard_s"] + tests.get(row["release"], 0.0) for row in rows]
    return {
        "releases": rows,
        "serial_s": round(serial + sum(tests.values()), 1),
        "slowest_shard": {"release": slowest["release"], "shard_s": slowest["shard_s"]},
        "slowest_shard_with_unit_tests_s": round(max(with_tests), 1),
        "unit_tests_s": tests,
        "speedup": round((serial + sum(tests.values())) / max(with_tests), 2),
    }


def command_bench(args: argparse.Namespace) -> int:
    """Measure shards: per release, a new environment (timed) and every example (timed).

    Each environment is created in a throwaway folder and deleted after its run (the index's
    builds take about 5 GB each); pip's cache is off unless ``--pip-cache``, so the creation
    time includes the download, as on a fresh CI runner.
    """
    from ptnotes_dev.bench import cpu_model

    settings = load()
    root = settings.root
    if not args.pip_cache:
        os.environ["PIP_NO_CACHE_DIR"] = "1"
    data = load_data(root / DATA_FILE)
    examples = current_examples(settings)
    load_start = list(os.getloadavg())
    measured = []
    started = time.perf_counter()
    for release in args.release:
        envs = Path(tempfile.mkdtemp(prefix="ptnotes-matrix-bench-", dir=args.envs))
        try:
            shard = run_shard(
                settings, release, data, examples, unit_tests=False, everything=True, envs=envs
            )
        finally:
            shutil.rmtree(envs, ignore_errors=True)
        if args.shards:
            out = Path(args.shards) / f"shard-{release}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(shard, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
        outcomes = [r["outcome"] for r in shard["results"].values()]
        measured.append(
            {
                "release": release,
                "torch": shard["run"]["torch"],
                "environment_s": shard["timing"]["environment_s"],
                "examples_s": shard["timing"]["examples_s"],
                "examples": len(outcomes),
                "failed": outcomes.count("failed"),
            }
        )
        _log(f"torch {release}: {measured[-1]}")
    report = {
        "generator": "python -m ptnotes_dev.matrix bench",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git": git_commit(root) or "",
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "load_average_start": [round(v, 2) for v in load_start],
        "load_average_end": [round(v, 2) for v in os.getloadavg()],
        "pip_cache": bool(args.pip_cache),
        "duration_s": round(time.perf_counter() - started, 1),
        "method": (
            "Each release: a new virtual environment (venv, torch from the package index, "
            "the project's test and docs requirements) in a throwaway folder, then every "
            "example of the pages, docstrings and README on it, as one CI shard for a new "
            "release runs them. Serial = the sum of the shards (one runner, one release "
            "after the other); with one runner per release the matrix takes as long as the "
            "slowest shard. The unit tests that the lowest and the newest shard add are the "
            "durations the data file records."
        ),
        **shard_report(measured, recorded_unit_test_seconds(data)),
    }
    out = Path(args.out) if args.out else root / BENCH_FILE
    out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    _log(
        f"serial {report['serial_s']} s, slowest shard {report['slowest_shard_with_unit_tests_s']}"
        f" s ({report['speedup']}x); report in {out}"
    )
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
    print(" ".join(range_releases(load())))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command line (its own function: the workflow tests parse CI's commands with it)."""
    parser = argparse.ArgumentParser(
        prog="python -m ptnotes_dev.matrix",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the matrix (cached) and update the data file")
    run.add_argument("--release", action="append", help="only these releases (repeatable)")
    run.add_argument(
        "--unit-tests", dest="unit_tests", action="store_true", default=None,
        help="with --output: run the unit tests too (a whole run runs them unless told not to)",
    )  # fmt: skip
    run.add_argument("--no-unit-tests", dest="unit_tests", action="store_false")
    run.add_argument(
        "--output", metavar="FILE", help="write one release's shard to FILE; no data file changes"
    )
    run.add_argument(
        "--all", action="store_true", help="with --output: every example, not only uncached ones"
    )
    run.add_argument("--data", help="the data file the cache is read from (default: the site's)")
    run.set_defaults(func=command_run)
    prepare = commands.add_parser("prepare", help="create the releases' environments only")
    prepare.add_argument("--release", action="append", help="only these releases")
    prepare.add_argument("--newest-first", action="store_true")
    prepare.set_defaults(func=command_prepare)
    plan = commands.add_parser(
        "plan", help="the files a release would run; with --json, the releases that need a run"
    )
    plan.add_argument("--release", action="append", help="a release (with --json: these only)")
    plan.add_argument("--device", default="cpu", help="the column's device (default: cpu)")
    plan.add_argument(
        "--platform", default=DEFAULT_PLATFORM,
        help=f"the column's platform (default: {DEFAULT_PLATFORM}; e.g. macos-arm64)",
    )  # fmt: skip
    plan.add_argument("--json", action="store_true", help="the whole range, as a CI matrix")
    plan.add_argument("--output", help="with --json: write the plan to this file")
    plan.add_argument("--listing", help="a recorded `pip index versions torch` answer to read")
    plan.add_argument("--data", help="the data file (default: the site's)")
    plan.set_defaults(func=command_plan)
    merge_ = commands.add_parser("merge", help="merge shards or --record-results files")
    merge_.add_argument("results", nargs="+")
    merge_.add_argument("--data", help="the data file to merge into (default: the site's)")
    merge_.add_argument("--summary", help="write the shards and new failures here (Markdown)")
    merge_.set_defaults(func=command_merge)
    compare = commands.add_parser("compare", help="does a shard reproduce a data file's column?")
    compare.add_argument("shard")
    compare.add_argument("--against", required=True, help="a data file (e.g. HEAD's)")
    compare.set_defaults(func=command_compare)
    bench = commands.add_parser("bench", help="time shards: environment creation and run")
    bench.add_argument("--release", action="append", required=True)
    bench.add_argument("--envs", help="where the throwaway environments go (default: /tmp)")
    bench.add_argument("--out", help=f"the report (default: {BENCH_FILE})")
    bench.add_argument("--pip-cache", action="store_true", help="let pip use its cache")
    bench.add_argument("--shards", help="keep each release's shard in this folder")
    bench.set_defaults(func=command_bench)
    forget = commands.add_parser("forget", help="drop the results of files (all releases)")
    forget.add_argument("doc", nargs="+", help="files as the data names them (docs/x.md)")
    forget.add_argument("--release", action="append", help="only on these columns")
    forget.set_defaults(func=command_forget)
    releases = commands.add_parser("releases", help="the releases the matrix covers")
    releases.set_defaults(func=command_releases)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    status: int = args.func(args)
    return status


def environment(release: str, device: str) -> dict[str, Any]:
    """The run's torch build, device, CPU, Python and date."""
    import torch

    from ptnotes_dev.bench import cpu_model

    info: dict[str, Any] = {
        "release": release,
        "device": device,
        "platform": current_platform(),
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


#: Terminal control sequences (torch bolds part of the weights_only message): not text.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def failure_output(data: Mapping[str, Any], key: str, name: str) -> str:
    """What an example printed on release ``name`` where it failed, as text (no escapes)."""
    result = data.get("examples", {}).get(key, {}).get("results", {}).get(name, {})
    return _ANSI.sub("", str(result.get("output", "")))


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
