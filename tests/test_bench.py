"""The benchmark harness (ptnotes_dev.bench) and suite (benchmarks/): statistics, alternation,
records, the results file.

These tests check how numbers are computed and written, never how fast anything is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from ptnotes_dev import bench as harness
from ptnotes_dev import measure
from ptnotes_dev.sphinx import bench_tables as ptnotes_bench

from benchmarks import build_cost, cases, run


def _record(**overrides: object) -> dict[str, object]:
    arguments: dict[str, object] = {
        "metric": "time",
        "samples": {"A": [2.0, 4.0, 3.0], "B": [1.0, 2.0, 1.5]},
        "ratio": ("A", "B"),
        "params": {"n": 1},
        "method": "test",
    }
    arguments.update(overrides)
    return harness.result_record("t", "Title", **arguments)  # type: ignore[arg-type]


# -- statistics ------------------------------------------------------------------------------


def test_summarize_gives_median_quartiles_and_range() -> None:
    stats = harness.summarize([5.0, 1.0, 4.0, 2.0, 3.0])
    assert stats == {
        "median": 3.0,
        "q1": 2.0,
        "q3": 4.0,
        "iqr": 2.0,
        "min": 1.0,
        "max": 5.0,
        "n": 5,
    }


def test_summarize_interpolates_quartiles_of_an_even_count() -> None:
    stats = harness.summarize([4.0, 1.0, 3.0, 2.0])
    assert (stats["median"], stats["q1"], stats["q3"]) == (2.5, 1.75, 3.25)


def test_summarize_of_one_sample_has_no_spread() -> None:
    stats = harness.summarize([7.0])
    assert stats["median"] == stats["q1"] == stats["q3"] == stats["min"] == stats["max"] == 7.0
    assert stats["iqr"] == 0.0


def test_summarize_rejects_no_samples() -> None:
    with pytest.raises(ValueError, match="at least one sample"):
        harness.summarize([])


def test_ratio_is_of_the_medians_not_the_means() -> None:
    assert harness.ratio_of_medians([1.0, 2.0, 100.0], [1.0, 1.0, 1.0]) == 2.0


def test_ratio_rejects_a_zero_denominator() -> None:
    with pytest.raises(ValueError, match="median is 0"):
        harness.ratio_of_medians([1.0], [0.0])


@pytest.mark.parametrize(
    ("value", "op", "target", "met"),
    [(1.0, "<=", 1.05, True), (1.1, "<=", 1.05, False), (5.0, ">=", 5.0, True), (0, "==", 0, True)],
)
def test_goal_met_compares_with_the_operator(
    value: float, op: str, target: float, met: bool
) -> None:
    assert harness.goal_met(value, op, target) is met


def test_goal_met_rejects_an_unknown_operator() -> None:
    with pytest.raises(ValueError, match="unknown operator"):
        harness.goal_met(1.0, "<", 2.0)


# -- alternation -----------------------------------------------------------------------------


def test_schedule_alternates_contenders_after_the_warmup() -> None:
    assert harness.schedule(["A", "B"], repeats=2, warmup=1) == [
        (-1, "A"), (-1, "B"), (0, "A"), (0, "B"), (1, "A"), (1, "B"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("names", "repeats", "warmup"), [(["A", "A"], 1, 0), ([], 1, 0), (["A"], 0, 0), (["A"], 1, -1)]
)
def test_schedule_rejects_bad_arguments(names: list[str], repeats: int, warmup: int) -> None:
    with pytest.raises(ValueError, match="schedule"):
        harness.schedule(names, repeats, warmup)


def _fake_clock() -> Callable[[], float]:
    ticks = iter(range(1000))
    return lambda: float(next(ticks))


def test_timer_calls_contenders_in_alternation_and_drops_warmup() -> None:
    calls: list[str] = []
    contenders = [
        harness.Contender("A", lambda: calls.append("A"), prepare=lambda: calls.append("prep")),
        harness.Contender("B", lambda: calls.append("B")),
    ]
    timer = harness.Timer(repeats=2, warmup=1, inner=2, clock=_fake_clock())
    samples = timer.run(contenders)
    assert calls == ["prep", "A", "A", "B", "B"] * 3
    # the fake clock advances by 1 between the two reads of a sample: 1 tick / 2 calls
    assert samples == {"A": [0.5, 0.5], "B": [0.5, 0.5]}
    assert timer.order == harness.schedule(["A", "B"], 2, 1)


def test_timer_rejects_an_empty_inner_loop() -> None:
    with pytest.raises(ValueError, match="inner"):
        harness.Timer(repeats=1, inner=0).run([harness.Contender("A", lambda: None)])


def test_measure_alternating_follows_the_same_schedule() -> None:
    calls: list[str] = []

    def contender(name: str, value: int) -> Callable[[], int]:
        return lambda: calls.append(name) or value  # type: ignore[func-returns-value]

    samples = measure.measure_alternating({"X": contender("X", 1), "Y": contender("Y", 2)}, 2, 1)
    assert calls == ["X", "Y"] * 3
    assert samples == {"X": [1.0, 1.0], "Y": [2.0, 2.0]}


# -- records ---------------------------------------------------------------------------------


def test_result_record_holds_statistics_ratio_and_goal() -> None:
    record = _record(goal=("<=", 1.05))
    assert record["status"] == "ok"
    assert record["ratio"] == {"numerator": "A", "denominator": "B", "value": 2.0}
    assert record["goal"] == {"op": "<=", "value": 1.05, "met": False}
    a = record["contenders"][0]  # type: ignore[index]
    assert (a["name"], a["median"], a["samples"]) == ("A", 3.0, [2.0, 4.0, 3.0])
    assert harness.validate_record(record) == []


def test_result_record_takes_its_goal_from_the_goal_table() -> None:
    op, target = harness.GOALS["linear"]
    record = harness.result_record(
        "linear",
        "Title",
        metric="time",
        samples={"A": [1.0], "B": [1.0]},
        ratio=("A", "B"),
        params={},
        method="test",
    )
    assert record["goal"] == {"op": op, "value": target, "met": harness.goal_met(1.0, op, target)}


def test_result_record_of_an_id_without_goal_has_none() -> None:
    assert "t" not in harness.GOALS
    assert _record()["goal"] is None


@pytest.mark.parametrize("key", ["noop_over_clean", "zh_gallery_executed", "doctest"])
def test_every_build_cost_measure_has_a_goal(key: str) -> None:
    op, target = harness.GOALS[key]
    assert harness.goal_record(target, (op, target))["met"]


def test_describe_goal_says_whether_it_was_met() -> None:
    assert harness.describe_goal(harness.goal_record(2.0, ("<=", 1.05))) == (
        "goal <= 1.05: NOT MET"
    )


# -- torch-specific measuring ------------------------------------------------------------------


def test_allocations_counts_a_kept_tensor_until_the_region_ends() -> None:
    kept = measure.allocations(lambda: torch.empty(1024, dtype=torch.float32))
    assert kept.end >= 4096
    assert kept.peak >= kept.end
    dropped = measure.allocations(lambda: torch.empty(1024).sum().item())
    assert dropped.end < 4096 <= dropped.peak


def test_allocations_keeps_the_profiler_chatter_off_stderr(
    capfd: pytest.CaptureFixture[str],
) -> None:
    measure.allocations(lambda: torch.ones(8) * 2)
    err = capfd.readouterr().err
    assert "profiler_start" not in err
    assert "profiler_stop" not in err


def test_quiet_stderr_passes_other_lines_on(capfd: pytest.CaptureFixture[str]) -> None:
    import os

    with measure.quiet_stderr():
        os.write(2, b"profiler_start\nsomething else\n")
    assert capfd.readouterr().err == "something else\n"


def test_timing_is_two_repeats_of_one_call_in_quick_mode() -> None:
    timer = measure.timing(True, repeats=30, warmup=5, inner=10)
    assert measure.timing_fields(timer) == {"repeats": 2, "warmup": 1, "inner": 1}
    full = measure.timing(False, repeats=30, warmup=5, inner=10)
    assert measure.timing_fields(full) == {"repeats": 30, "warmup": 5, "inner": 10}


def test_result_record_of_throughput_prefers_higher_values() -> None:
    record = _record(metric="throughput")
    assert (record["unit"], record["better"]) == ("samples/s", "higher")


def test_result_record_rejects_a_ratio_of_an_unknown_contender() -> None:
    with pytest.raises(ValueError, match="not a contender"):
        _record(ratio=("A", "C"))


def test_result_record_rejects_an_unknown_metric() -> None:
    with pytest.raises(ValueError, match="unknown metric"):
        _record(metric="speed")


def test_skipped_record_carries_a_reason_and_no_numbers() -> None:
    record = harness.skipped_record("g", "Title", "No CUDA device.")
    assert record == {"id": "g", "title": "Title", "status": "skipped", "reason": "No CUDA device."}
    assert harness.validate_record(record) == []


def test_skipped_record_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="reason"):
        harness.skipped_record("g", "Title", " ")


def test_validate_record_refuses_numbers_in_a_skipped_record() -> None:
    record = {**harness.skipped_record("g", "T", "why"), "contenders": []}
    assert harness.validate_record(record) == ["a skipped record must not carry numbers"]


def test_validate_record_finds_missing_statistics() -> None:
    record = _record()
    del record["contenders"][0]["median"]  # type: ignore[index]
    assert harness.validate_record(record) == ["contender 'A' lacks 'median'"]


def test_error_record_names_the_exception() -> None:
    record = harness.error_record("x", "X", RuntimeError("boom"))
    assert record["reason"] == "RuntimeError: boom"
    assert harness.validate_record(record) == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="the skip applies only without CUDA")
def test_cudnn_benchmark_is_skipped_with_a_reason_without_cuda() -> None:
    record = cases.bench_cudnn(True, lambda message: None)
    assert record["status"] == "skipped"
    assert "CUDA" in record["reason"]
    assert "contenders" not in record


# -- the results file ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    out = tmp_path_factory.mktemp("bench")
    code = run.main(
        ["--quick", "--only", "sigmoid", "--only", "cudnn-benchmark", "--out", str(out)]
    )
    return code, out


def test_quick_run_succeeds(quick_run: tuple[int, Path]) -> None:
    assert quick_run[0] == 0


def test_quick_run_writes_the_environment(quick_run: tuple[int, Path]) -> None:
    data = json.loads((quick_run[1] / "results.json").read_text(encoding="utf-8"))
    assert (data["schema"], data["mode"]) == (harness.SCHEMA_VERSION, "quick")
    env = data["environment"]
    for key in ("torch", "torch_num_threads", "cpu", "python", "date", "load_average_start"):
        assert key in env
    assert env["duration_s"] > 0
    assert "load_average_end" in env
    assert env["torch"] == torch.__version__
    assert env["torch_num_threads"] == torch.get_num_threads()


def test_quick_run_writes_valid_records_and_figures(quick_run: tuple[int, Path]) -> None:
    out = quick_run[1]
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    records = {r["id"]: r for r in data["benchmarks"]}
    assert set(records) == {"sigmoid", "cudnn-benchmark"}
    assert all(harness.validate_record(r) == [] for r in records.values())
    sigmoid = records["sigmoid"]
    assert [c["n"] for c in sigmoid["contenders"]] == [2, 2]
    assert sigmoid["timing"] == {"repeats": 2, "warmup": 1, "inner": 1}
    assert (out / sigmoid["figure"]).read_bytes().startswith(b"\x89PNG")
    assert (out / data["summary_figure"]).is_file()


def test_select_cases_accepts_record_ids_and_refuses_unknown_names() -> None:
    assert [c.name for c in run.select_cases(["grad-modes-time"])] == ["grad-modes"]
    with pytest.raises(SystemExit, match="unknown benchmark"):
        run.select_cases(["nope"])


# -- build_cost helpers ----------------------------------------------------------------------


def test_executed_scripts_are_those_whose_outputs_changed() -> None:
    before = {
        "plot_a.py.md5": (1, 10),
        "images/sphx_glr_plot_a_001.png": (1, 10),
        "plot_b.py.md5": (1, 10),
        "plot_ab.rst": (1, 10),
    }
    after = {**before, "images/sphx_glr_plot_a_001.png": (2, 10), "plot_ab.rst": (2, 11)}
    assert build_cost.executed_scripts(before, after, ["plot_a", "plot_b"]) == ["plot_a"]
    assert build_cost.executed_scripts(before, before, ["plot_a", "plot_b"]) == []


def test_pytest_counts_read_the_summary_line() -> None:
    lines = ["....", "1290 passed, 34 skipped, 2 errors in 80.12s (0:01:20)"]
    assert build_cost.pytest_counts(lines) == {"passed": 1290, "skipped": 34, "error": 2}


def test_sphinx_command_uses_the_project_flags() -> None:
    flags = list(build_cost.SETTINGS.sphinx_flags)
    command = build_cost.sphinx_command("zh_CN", Path("d"), Path("o"))
    assert command[3 : 5 + len(flags) + 1] == ["-b", "html", *flags, "-D"]
    assert "language=zh_CN" in command


# -- the page's number formatting ------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (0.00512, "s", "5.12 ms"),
        (3.2e-6, "s", "3.2 µs"),
        (75.0, "s", "75 s"),
        (3 * 2**20, "bytes", "3 MiB"),
        (1.5e6, "samples/s", "1.5 M samples/s"),
        (12.345, "%", "12.3 %"),
        (1.0312, "x", "1.03\u00d7"),
        (1.0, "x", "1.00\u00d7"),
        (12.34, "x", "12.3\u00d7"),
        (0.0123, "x", "0.012\u00d7"),
    ],
)
def test_page_formats_quantities(value: float, unit: str, text: str) -> None:
    assert ptnotes_bench.format_quantity(value, unit) == text


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [(0.001, 0.002, "1 \u2013 2 ms"), (0.0005, 0.002, "500 \u00b5s \u2013 2 ms")],
)
def test_page_writes_a_shared_unit_once(low: float, high: float, text: str) -> None:
    assert ptnotes_bench.format_range(low, high, "s") == text


def test_page_accepts_what_the_harness_writes(tmp_path: Path) -> None:
    results = harness.new_results({"date": "today"}, "quick")
    results["benchmarks"] = [_record(), harness.skipped_record("g", "T", "why")]
    path = tmp_path / "bench.json"
    harness.write_json(path, results)
    assert ptnotes_bench.load_results(path)["benchmarks"][1]["status"] == "skipped"
