"""The release matrix: its cache, its data file, and what the site makes of it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from ptnotes_dev import matrix
from ptnotes_dev.settings import load

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = load(ROOT)
DATA = matrix.load_data(ROOT / matrix.DATA_FILE)
EXAMPLES = matrix.current_examples(SETTINGS)
FENCE = "`" * 3


def recorded(release: str, device: str, results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    run = {"release": release, "device": device, "torch": release, "date": "2026-12-01"}
    return {"run": run, "results": results}


def result(doc: str, line: int, outcome: str, **extra: str) -> dict[str, Any]:
    return {"doc": doc, "line": line, "outcome": outcome, **extra}


A = matrix.Example("a" * 16, "docs/a.md", 3)
B = matrix.Example("b" * 16, "docs/b.md", 5)


# -- releases --------------------------------------------------------------------------------


def test_newest_patch_of_each_minor_from_the_lower_bound() -> None:
    versions = ["2.15.0", "2.14.1", "2.14.0", "2.12.0+cpu", "2.12.0", "2.4.1", "2.4.0", "2.3.1"]
    assert matrix.newest_patches(versions, "2.4") == ["2.4.1", "2.12.0", "2.14.1", "2.15.0"]


def test_lower_bound_is_the_package_requirement() -> None:
    assert f">={matrix.lower_bound(SETTINGS)}" in SETTINGS.torch_range


# -- the cache -------------------------------------------------------------------------------


def test_merge_adds_a_column_and_drops_examples_that_no_longer_exist() -> None:
    data = matrix.load_data(Path("/nonexistent/matrix.json"))
    data = matrix.merge(
        data,
        recorded(
            "2.4.1", "cpu", {A.key: result(A.doc, 3, "passed"), "gone": result("x", 1, "passed")}
        ),
        [A, B],
    )
    assert list(data["runs"]) == ["2.4.1"]
    assert set(data["examples"]) == {A.key}
    assert data["examples"][A.key]["results"] == {"2.4.1": {"outcome": "passed"}}


def test_only_files_with_an_example_missing_on_a_release_are_run() -> None:
    data = matrix.merge(
        matrix.load_data(Path("/nonexistent")),
        recorded("2.4.1", "cpu", {A.key: result(A.doc, 3, "passed")}),
        [A, B],
    )
    assert matrix.pages_to_run(data, [A, B], "2.4.1") == ["docs/b.md"]
    assert matrix.pages_to_run(data, [A, B], "2.5.1") == ["docs/a.md", "docs/b.md"]


def test_editing_an_example_changes_its_key_only() -> None:
    before = matrix.KeyCounter()
    after = matrix.KeyCounter()
    keys_before = [before.key("docs/a.md", t) for t in (">>> 1\0001\n", ">>> 2\0002\n")]
    keys_after = [after.key("docs/a.md", t) for t in (">>> 1\0001\n", ">>> 3\0003\n")]
    assert keys_before[0] == keys_after[0]
    assert keys_before[1] != keys_after[1]


def test_identical_examples_of_one_file_get_distinct_keys() -> None:
    counter = matrix.KeyCounter()
    assert counter.key("docs/a.md", "x") != counter.key("docs/a.md", "x")


def test_a_cuda_result_file_fills_a_cuda_column() -> None:
    """The path `nox -s doctest_cuda -- --record-results FILE` takes, with a recorded file."""
    data = matrix.merge(
        matrix.load_data(Path("/nonexistent")),
        recorded("2.13.0", "cpu", {A.key: result(A.doc, 3, "passed")}),
        [A],
    )
    data = matrix.merge(data, recorded("2.13.0", "cuda", {A.key: result(A.doc, 3, "passed")}), [A])
    assert matrix.cpu_columns(data) == ["2.13.0"]
    assert matrix.device_columns(data) == ["2.13.0+cuda"]
    status = matrix.page_status(data, [A.key], matrix.device_columns(data))
    assert status.passed_on == ("2.13.0+cuda",)


# -- reading the data ------------------------------------------------------------------------


def history(outcomes: dict[str, str]) -> dict[str, Any]:
    data = matrix.load_data(Path("/nonexistent"))
    for release, outcome in outcomes.items():
        extra = (
            {"output": f"Expected:\n    new\nGot:\n    old {release}"}
            if outcome == "failed"
            else {}
        )
        data = matrix.merge(
            data, recorded(release, "cpu", {A.key: result(A.doc, 3, outcome, **extra)}), [A]
        )
    return data


def test_holds_since_is_the_oldest_release_of_the_passing_tail() -> None:
    data = history({"2.4.1": "failed", "2.10.0": "failed", "2.13.0": "passed", "2.15.0": "passed"})
    assert matrix.holds_since(data, [A.key], matrix.cpu_columns(data)) == "2.13.0"


def test_holds_since_is_none_when_the_newest_release_fails() -> None:
    data = history({"2.4.1": "passed", "2.15.0": "failed"})
    assert matrix.holds_since(data, [A.key], matrix.cpu_columns(data)) is None


def test_page_status_counts_an_unrecorded_example() -> None:
    data = history({"2.4.1": "passed", "2.15.0": "passed"})
    status = matrix.page_status(data, [A.key, B.key], matrix.cpu_columns(data))
    assert status.unrecorded == 1
    assert status.passed_on == ("2.4.1", "2.15.0")
    assert status.failed_on == ()


def test_columns_sort_by_release_number_not_text() -> None:
    data = history({"2.10.0": "passed", "2.9.1": "passed", "2.15.0": "passed"})
    assert matrix.cpu_columns(data) == ["2.9.1", "2.10.0", "2.15.0"]


# -- the recorder, end to end ----------------------------------------------------------------


def test_record_results_writes_each_outcome_keyed_like_the_matrix(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "p.md"
    page.parent.mkdir()
    page.write_text(
        textwrap.dedent(
            f"""
            # Page

            {FENCE}pycon
            >>> 1 + 1
            2
            >>> 1 + 1
            3
            >>> import torch
            >>> torch.ones(1, device="cuda")  # doctest: +REQUIRES_CUDA
            tensor([1.], device='cuda:0')
            {FENCE}
            """
        )
    )
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "docs", "-q", "-p", "no:cacheprovider",
         "--record-results", str(out), "--release-label", "9.9.9"],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PTNOTES_DOCTEST_DEVICE": "cpu"},
    )  # fmt: skip
    assert out.exists(), done.stdout + done.stderr
    data = json.loads(out.read_text())
    outcomes = sorted((r["line"], r["outcome"]) for r in data["results"].values())
    assert [o for _, o in outcomes] == ["passed", "failed", "passed", "skipped"]
    failed = next(r for r in data["results"].values() if r["outcome"] == "failed")
    assert "Expected:" in failed["output"]
    assert "3" in failed["output"]
    skipped = next(r for r in data["results"].values() if r["outcome"] == "skipped")
    assert "requires CUDA" in skipped["reason"]
    assert data["run"]["release"] == "9.9.9"
    assert data["run"]["device"] == "cpu"


# -- the committed data ----------------------------------------------------------------------


@pytest.mark.matrix_data
def test_matrix_data_has_run_on_every_minor_release_of_the_range() -> None:
    columns = matrix.cpu_columns(DATA)
    assert columns, "no matrix data: run `nox -s matrix`"
    minors = {tuple(int(p) for p in c.split(".")[:2]) for c in columns}
    lower = tuple(int(p) for p in matrix.lower_bound(SETTINGS).split(".")[:2])
    newest = max(minors)
    expected = {(lower[0], m) for m in range(lower[1], newest[1] + 1)}
    assert expected <= minors


@pytest.mark.matrix_data
def test_matrix_data_holds_every_example_that_exists() -> None:
    columns = matrix.cpu_columns(DATA)
    missing = [
        f"{e.doc}:{e.line} on {c}"
        for e in EXAMPLES
        for c in columns
        if matrix.outcome(DATA, e.key, c) is None
    ]
    assert missing == [], (
        f"{len(missing)} missing: run `nox -s matrix` (cached: changed pages only)"
    )


@pytest.mark.matrix_data
def test_every_run_records_its_build_cpu_and_date() -> None:
    for name, run in DATA["runs"].items():
        assert {"torch", "cpu", "date", "device", "python"} <= set(run), name
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", run["date"]), name


@pytest.mark.matrix_data
def test_package_lower_bound_is_the_lowest_release_where_unit_tests_pass() -> None:
    runs = {c: DATA["runs"][c] for c in matrix.cpu_columns(DATA) if "unit_tests" in DATA["runs"][c]}
    assert runs, "the matrix ran no unit tests: run `nox -s matrix`"
    passing = [c for c, run in runs.items() if run["unit_tests"]["exit_code"] == 0]
    assert passing, f"unit tests pass on no release: {runs}"
    lowest = min(passing, key=matrix.column_order)
    lower = matrix.lower_bound(SETTINGS)
    assert lowest.split(".")[:2] == lower.split(".")[:2], (lowest, lower)


# -- the extension's own catalog ---------------------------------------------------------------


def test_every_sentence_the_extension_writes_is_listed() -> None:
    import ast

    from ptnotes_dev.sphinx import matrix as extension

    tree = ast.parse(Path(extension.__file__).read_text(encoding="utf-8"))
    used = {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "_"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }
    assert used <= set(extension.MESSAGES)
    assert set(extension.MESSAGES) <= used | {""}


@pytest.mark.parametrize("language", [lang.code for lang in SETTINGS.translations])
def test_every_sentence_is_translated(language: str) -> None:
    from babel.messages.pofile import read_po
    from ptnotes_dev.sphinx import matrix as extension

    path = ROOT / "docs" / "locales" / language / "LC_MESSAGES" / f"{extension.CATALOG}.po"
    with path.open("rb") as handle:
        catalog = {m.id: m.string for m in read_po(handle) if m.id and not m.fuzzy}
    assert [m for m in extension.MESSAGES if not catalog.get(m)] == []


def test_reformatting_an_example_keeps_its_key() -> None:
    class Parsed:
        def __init__(self, source: str) -> None:
            self.source, self.want = source, "True\n"

    one_line = matrix.example_text(Parsed("from a import (b, c)  # two names\n"))
    wrapped = matrix.example_text(Parsed("from a import (\n    b,\n    c,\n)\n"))
    other = matrix.example_text(Parsed("from a import b\n"))
    assert one_line == wrapped
    assert one_line != other
