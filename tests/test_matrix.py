"""The release matrix: its cache, its data file, and what the site makes of it."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
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
    from ptnotes_dev.sphinx import matrix as extension

    from tests._messages import messages_used

    used = messages_used(extension)
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


# -- the index's answer ------------------------------------------------------------------------

#: ``pip-index-torch-2.15.0.txt`` is the answer of ``pip index versions torch`` recorded here on
#: 2026-12-01 (pip's warning included); ``pip-index-torch-2.16.0.txt`` is the same answer with
#: 2.16.0 added at the head, as the index lists a release the day it appears.
LISTINGS = ROOT / "tests" / "data"


def test_the_index_answer_recorded_here_gives_the_twelve_releases_of_the_range() -> None:
    versions = matrix.parse_index_versions((LISTINGS / "pip-index-torch-2.15.0.txt").read_text())
    releases = matrix.newest_patches(versions, "2.4")
    assert releases[0] == "2.4.1"
    assert releases[-1] == "2.15.0"
    assert len(releases) == 12
    assert any(
        v.endswith("+cpu") for v in versions
    )  # a local build is listed, and left out of the range


def test_a_release_that_has_just_appeared_on_the_index_joins_the_range() -> None:
    versions = matrix.parse_index_versions((LISTINGS / "pip-index-torch-2.16.0.txt").read_text())
    assert matrix.newest_patches(versions, "2.4")[-2:] == ["2.15.0", "2.16.0"]


@pytest.mark.parametrize(
    "answer",
    ["", "torch (2.15.0)\n", "WARNING: pip index is experimental\nAvailable versions: \n"],
)
def test_an_index_answer_without_versions_is_an_error(answer: str) -> None:
    with pytest.raises(ValueError, match="Available versions"):
        matrix.parse_index_versions(answer)


# -- the plan ------------------------------------------------------------------------------------

RANGE = ["2.4.1", "2.14.1", "2.15.0"]


def complete(releases: list[str], examples: list[matrix.Example]) -> dict[str, Any]:
    """Data with a passing result for every example on every release, unit tests at 'src'."""
    data = matrix.load_data(Path("/nonexistent"))
    for release in releases:
        results = {e.key: result(e.doc, e.line, "passed") for e in examples}
        data = matrix.merge(data, recorded(release, "cpu", results), examples)
        data["runs"][release]["unit_tests"] = {"exit_code": 0, "summary": "", "source": "src"}
    return data


def test_the_plan_of_a_complete_range_is_empty() -> None:
    assert matrix.plan_range(complete(RANGE, [A, B]), [A, B], RANGE, "src") == []


def test_a_new_release_is_planned_with_the_unit_tests_as_the_newest() -> None:
    planned = matrix.plan_range(complete(RANGE, [A]), [A], [*RANGE, "2.16.0"], "src")
    assert planned == [{"release": "2.16.0", "reasons": ["new release", "unit tests"],
                        "unit_tests": True}]  # fmt: skip


def test_an_example_without_a_result_plans_every_release() -> None:
    planned = matrix.plan_range(complete(RANGE, [A]), [A, B], RANGE, "src")
    assert [p["release"] for p in planned] == RANGE
    assert planned[1]["reasons"] == ["1 examples without a result (1 files)"]


def test_changed_unit_tests_rerun_on_the_lowest_and_newest_release_only() -> None:
    planned = matrix.plan_range(complete(RANGE, [A]), [A], RANGE, "changed")
    assert [(p["release"], p["reasons"]) for p in planned] == [
        ("2.4.1", ["unit tests"]),
        ("2.15.0", ["unit tests"]),
    ]


def test_another_platforms_plan_asks_what_its_own_columns_lack() -> None:
    data = complete(RANGE, [A])  # every linux-x86_64 column complete
    planned = matrix.plan_range(data, [A], RANGE, "src", platform="macos-arm64")
    assert [(p["release"], p["reasons"][0]) for p in planned] == [
        (release, "new release") for release in RANGE
    ]


def test_plan_json_is_a_strategy_matrix(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    data = tmp_path / "matrix.json"
    matrix.save_data(data, complete(RANGE, []))
    listing = LISTINGS / "pip-index-torch-2.16.0.txt"
    assert matrix.main(["plan", "--json", "--listing", str(listing), "--data", str(data),
                        "--output", str(out)]) == 0  # fmt: skip
    plan = json.loads(out.read_text())
    assert plan["releases"][-1] == "2.16.0"
    assert plan["count"] == len(plan["include"])
    assert {"release", "reasons", "unit_tests"} == set(plan["include"][-1])
    assert "new release" in plan["include"][-1]["reasons"]


# -- shards ----------------------------------------------------------------------------------


def shard(
    release: str, outcomes: dict[matrix.Example, str], device: str = "cpu", **run: str
) -> dict[str, Any]:
    results = {e.key: result(e.doc, e.line, o) for e, o in outcomes.items()}
    made = recorded(release, device, results)
    made["run"].update(run)
    return matrix.make_shard(made, [A, B], "c0ffee")


def test_the_shard_key_names_release_device_and_platform() -> None:
    made = shard("2.12.1", {A: "passed"}, platform="macos-arm64")
    assert made["shard"] == {"release": "2.12.1", "device": "cpu", "platform": "macos-arm64",
                             "column": "2.12.1+cpu@macos-arm64"}  # fmt: skip
    assert matrix.column("2.12.1") == "2.12.1"
    assert matrix.column("2.12.1", "cuda") == "2.12.1+cuda"


def test_another_platform_fills_its_own_column_beside_the_release() -> None:
    data = matrix.merge_shards(
        matrix.load_data(Path("/nonexistent")),
        [shard("2.12.1", {A: "passed"}), shard("2.12.1", {A: "failed"}, platform="macos-arm64")],
        [A, B],
    )
    assert matrix.cpu_columns(data) == ["2.12.1"]
    assert matrix.device_columns(data) == ["2.12.1+cpu@macos-arm64"]
    assert matrix.outcome(data, A.key, "2.12.1") == "passed"


def test_merging_shards_in_any_order_gives_the_same_file(tmp_path: Path) -> None:
    import itertools

    base = complete(["2.4.1"], [A, B])
    shards = [
        shard("2.15.0", {A: "passed", B: "failed"}),
        shard("2.16.0", {A: "passed", B: "passed"}),
        shard("2.16.0", {A: "failed"}, date="2026-12-02"),  # a second shard of one column
        shard("2.15.0", {A: "passed"}, device="cuda"),
        {**shard("2.4.1", {}), "unit_tests": {"exit_code": 1, "summary": "1 failed"}},
    ]
    texts = set()
    for order in itertools.permutations(shards):
        path = tmp_path / "matrix.json"
        matrix.save_data(path, matrix.merge_shards(json.loads(json.dumps(base)), order, [A, B]))
        texts.add(path.read_text())
    assert len(texts) == 1
    data = json.loads(texts.pop())
    assert set(data["runs"]) == {"2.4.1", "2.15.0", "2.16.0", "2.15.0+cuda"}
    assert data["runs"]["2.4.1"]["unit_tests"]["exit_code"] == 1


def test_merge_refuses_a_shard_of_another_commits_examples() -> None:
    made = shard("2.15.0", {A: "passed"})  # recorded where the examples were A and B
    with pytest.raises(matrix.ShardError, match=r"recorded on the examples of c0ffee"):
        matrix.merge_shards(matrix.load_data(Path("/nonexistent")), [made], [A])


def test_merge_refuses_a_results_file_naming_examples_that_do_not_exist() -> None:
    cuda = recorded("2.13.0", "cuda", {"f" * 16: result("docs/gone.md", 9, "passed")})
    with pytest.raises(matrix.ShardError, match=r"docs/gone.md:9.*another commit"):
        matrix.merge_shards(matrix.load_data(Path("/nonexistent")), [cuda], [A, B])


def test_a_plain_results_file_merges_like_a_shard() -> None:
    cuda = recorded("2.13.0", "cuda", {A.key: result(A.doc, 3, "passed")})
    data = matrix.merge_shards(matrix.load_data(Path("/nonexistent")), [cuda], [A, B])
    assert matrix.outcome(data, A.key, "2.13.0+cuda") == "passed"


def test_new_failures_are_listed_by_page_and_release() -> None:
    before = complete(["2.15.0"], [A, B])
    after = matrix.merge_shards(
        json.loads(json.dumps(before)),
        [shard("2.15.0", {A: "failed", B: "passed"}), shard("2.16.0", {A: "failed", B: "failed"})],
        [A, B],
    )
    assert matrix.new_failures(before, after) == {
        "docs/a.md": {"2.15.0": [3], "2.16.0": [3]},
        "docs/b.md": {"2.16.0": [5]},
    }
    assert matrix.new_failures(after, after) == {}
    text = matrix.merge_summary(before, after, [shard("2.16.0", {A: "failed", B: "failed"})])
    assert "- `docs/b.md` on `2.16.0`: line(s) 5" in text


def test_merge_command_merges_many_shards_and_writes_a_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matrix, "current_examples", lambda settings=None: [A, B])
    data = tmp_path / "matrix.json"
    files = []
    for release in ("2.15.0", "2.16.0"):
        files.append(tmp_path / f"shard-{release}.json")
        files[-1].write_text(json.dumps(shard(release, {A: "passed", B: "failed"})))
    summary = tmp_path / "summary.md"
    args = ["merge", *map(str, files), "--data", str(data), "--summary", str(summary)]
    assert matrix.main(args) == 0
    assert matrix.cpu_columns(matrix.load_data(data)) == ["2.15.0", "2.16.0"]
    assert "`docs/b.md` on `2.15.0`" in summary.read_text()
    monkeypatch.setattr(matrix, "current_examples", lambda settings=None: [A])
    assert matrix.main(["merge", str(files[0]), "--data", str(data)]) == 2  # refused


def _run_without_torch(monkeypatch: pytest.MonkeyPatch, record: Callable[..., Any]) -> None:
    """``matrix run`` over the examples A and B, recording with ``record`` (no environment)."""
    monkeypatch.setattr(matrix, "current_examples", lambda settings=None: [A, B])
    monkeypatch.setattr(matrix, "ensure_env", lambda settings, release, envs=None: Path("py"))
    monkeypatch.setattr(matrix, "record_release", record)


def test_run_with_output_writes_a_shard_and_touches_no_data_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    committed = (ROOT / matrix.DATA_FILE).read_bytes()
    data = tmp_path / "matrix.json"
    matrix.save_data(data, complete(["2.13.0"], [A]))
    before = data.read_bytes()
    ran: list[list[str]] = []

    def record(root: Path, python: Path, release: str, docs: list[str], prefix: str) -> Any:
        ran.append(list(docs))
        return recorded(release, "cpu", {B.key: result(B.doc, 5, "passed")})

    _run_without_torch(monkeypatch, record)
    out = tmp_path / "shard.json"
    args = ["run", "--release", "2.13.0", "--output", str(out), "--data", str(data)]
    assert matrix.main(args) == 0
    assert ran == [["docs/b.md"]]  # only the file whose example has no result
    made = json.loads(out.read_text())
    assert made["shard"]["column"] == "2.13.0"
    assert made["examples"] == matrix.examples_fingerprint([A, B])
    assert data.read_bytes() == before
    assert (ROOT / matrix.DATA_FILE).read_bytes() == committed


def test_a_shard_on_another_platform_runs_what_its_own_column_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "matrix.json"
    matrix.save_data(data, complete(["2.12.1"], [A, B]))  # complete on linux-x86_64
    ran: list[list[str]] = []

    def record(root: Path, python: Path, release: str, docs: list[str], prefix: str) -> Any:
        ran.append(list(docs))
        made = recorded(release, "cpu", {A.key: result(A.doc, 3, "passed")})
        made["run"]["platform"] = "macos-arm64"
        return made

    monkeypatch.setattr(matrix, "current_platform", lambda: "macos-arm64")
    _run_without_torch(monkeypatch, record)
    out = tmp_path / "shard.json"
    args = ["run", "--release", "2.12.1", "--output", str(out), "--data", str(data)]
    assert matrix.main(args) == 0
    assert ran == [["docs/a.md", "docs/b.md"]]
    assert json.loads(out.read_text())["shard"]["column"] == "2.12.1+cpu@macos-arm64"


def test_compare_finds_a_reproduced_column_and_a_differing_one() -> None:
    reference = complete(["2.13.0", "2.15.0"], [A, B])
    same = shard("2.13.0", {A: "passed", B: "passed"})
    assert matrix.compare_column(reference, same, [A, B]) == (2, [])
    other = shard("2.13.0", {A: "passed", B: "failed"})
    assert matrix.compare_column(reference, other, [A, B]) == (
        2,
        ["docs/b.md:5: failed here, passed in the reference"],
    )


def test_the_shard_report_compares_serial_time_with_the_slowest_shard() -> None:
    measured = [
        {"release": "2.4.1", "environment_s": 60.0, "examples_s": 40.0},
        {"release": "2.13.0", "environment_s": 10.0, "examples_s": 30.0},
        {"release": "2.15.0", "environment_s": 70.0, "examples_s": 50.0},
    ]
    report = matrix.shard_report(measured, {"2.4.1": 100.0, "2.15.0": 120.0, "2.13.0": 5.0})
    assert report["serial_s"] == 100 + 40 + 120 + 100 + 120
    assert report["slowest_shard"] == {"release": "2.15.0", "shard_s": 120.0}
    assert report["slowest_shard_with_unit_tests_s"] == 240.0
    assert report["speedup"] == round(480 / 240, 2)


@pytest.mark.parametrize(
    ("system", "machine", "expected"),
    [("Linux", "x86_64", "linux-x86_64"), ("Darwin", "arm64", "macos-arm64"),
     ("Windows", "AMD64", "windows-x86_64"), ("Linux", "aarch64", "linux-arm64")],
)  # fmt: skip
def test_the_platform_of_a_run_is_named_the_same_everywhere(
    monkeypatch: pytest.MonkeyPatch, system: str, machine: str, expected: str
) -> None:
    monkeypatch.setattr(matrix.platform, "system", lambda: system)
    monkeypatch.setattr(matrix.platform, "machine", lambda: machine)
    assert matrix.current_platform() == expected


def test_a_failure_output_is_shown_without_terminal_escapes() -> None:
    data = {
        "examples": {
            "k": {"results": {"2.5.1": {"output": "two options, \x1b[1mdo those\x1b[0m."}}}
        }
    }
    assert matrix.failure_output(data, "k", "2.5.1") == "two options, do those."


def test_release_environments_live_outside_every_nox_session_environment() -> None:
    """nox deletes ``.nox/<session>`` whenever it creates a session's environment anew: the
    release environments (~6 GB each) must not sit inside one of them."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    sessions = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and any("nox.session" in ast.unparse(d) for d in node.decorator_list)
    }
    assert "matrix" in sessions
    assert matrix.ENVS.parts[0] == ".nox"
    assert matrix.ENVS.parts[1] not in sessions


def test_a_version_note_names_no_folder_of_the_machine_that_ran_it() -> None:
    from ptnotes_dev.sphinx.matrix import failure_excerpt

    raised = textwrap.dedent(
        """\
        Example at /work/main/docs/a.md, line 3, column 1 did not evaluate as expected:
        Exception raised:
            Traceback (most recent call last):
              File "/root/.pyenv/versions/3.11.7/lib/python3.11/doctest.py", line 1353, in __run
              File "/w/.nox/matrix/torch-2.9.1/lib/python3.11/site-packages/torch/__init__.py"
            AttributeError: 'NoneType' object has no attribute 'device'

        a.md:3: SybilFailure
        """
    )
    long_message = raised.replace(
        "AttributeError: 'NoneType' object has no attribute 'device'",
        "_pickle.UnpicklingError: Weights only load failed.\n    See the documentation.",
    )
    assert failure_excerpt(long_message).splitlines() == [
        "Exception raised:",
        "    _pickle.UnpicklingError: Weights only load failed.",
        "    See the documentation.",
    ]
    shown = failure_excerpt(raised)
    assert shown.splitlines() == [
        "Exception raised:",
        "    AttributeError: 'NoneType' object has no attribute 'device'",
    ]
    differs = textwrap.dedent(
        """\
        Expected:
            1
        Got:
              File "<doctest /work/main/docs/a.md[0]>", line 1, in <module>
              File "/w/.nox/matrix/torch-2.9.1/lib/python3.11/site-packages/torch/serialization.py"
        """
    )
    shown = failure_excerpt(differs)
    assert '"<doctest docs/a.md[0]>"' in shown
    assert '"torch/serialization.py"' in shown
    assert "/work/" not in shown
    assert ".nox" not in shown


def test_releases_given_out_of_order_are_planned_oldest_first_by_version() -> None:
    shuffled = [RANGE[-1], *reversed(RANGE[1:-1]), RANGE[0], RANGE[0]]
    planned = matrix.plan_range(complete(RANGE, [A]), [A], shuffled, "changed")
    assert [(p["release"], p["reasons"]) for p in planned] == [
        (RANGE[0], ["unit tests"]),
        (RANGE[-1], ["unit tests"]),
    ]
