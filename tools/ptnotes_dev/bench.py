"""The measuring machinery shared by ``benchmarks/run.py`` and ``benchmarks/build_cost.py``.

Principles, so that a number on the site can be trusted:

* Contenders of one comparison run in the same process, interleaved: round after round each
  contender is timed once, in a fixed order (A B A B ...), so that a change of machine load
  or CPU frequency during the run falls on all of them alike.
* Warm-up rounds run first and are not recorded.
* A result is the median of the recorded samples with its spread (quartiles, min and max);
  a comparison is the ratio of two medians.
* A benchmark that cannot run here is recorded as *skipped*, with the reason; it never
  carries numbers.

* Every goal is defined once, in :data:`GOALS`; a record carries its goal and whether it was
  met, so the site reads goals from the results file only.

Nothing here depends on torch: the torch-specific helpers live in :mod:`ptnotes_dev.measure`.
"""

from __future__ import annotations

import datetime as _dt
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: Version of the layout of results.json; bump it when a field changes meaning.
SCHEMA_VERSION = 1

#: The fields every benchmark record carries (``status`` decides which others do).
RECORD_FIELDS = ("id", "title", "status")
RESULT_FIELDS = ("metric", "unit", "better", "params", "method", "contenders", "ratio")
STATS_FIELDS = ("median", "q1", "q3", "iqr", "min", "max", "n")
METRICS = {"time": "s", "throughput": "samples/s", "memory": "bytes"}

#: The goals of the suite, written once: ``(operator, target)`` for a benchmark's ratio of
#: medians (keyed by the record id, see ``benchmarks/cases.py``) or for a measure of
#: ``benchmarks/build_cost.py``. A benchmark not listed has no goal.
GOALS: dict[str, tuple[str, float]] = {
    "linear": ("<=", 1.05),
    "loader": (">=", 5.0),
    "noop_over_clean": ("<=", 0.2),
    "zh_gallery_executed": ("==", 0),
    "doctest": ("<=", 1.5),
}


# -- statistics ------------------------------------------------------------------------------


def summarize(samples: Sequence[float]) -> dict[str, float | int]:
    """Median, quartiles (inclusive method), interquartile range, min, max and count.

    Raises:
        ValueError: if ``samples`` is empty.
    """
    values = [float(v) for v in samples]
    if not values:
        raise ValueError("summarize() needs at least one sample")
    if len(values) == 1:
        q1 = q3 = values[0]
    else:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return {
        "median": statistics.median(values),
        "q1": q1,
        "q3": q3,
        "iqr": q3 - q1,
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def ratio_of_medians(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """``median(numerator) / median(denominator)``.

    Raises:
        ValueError: if a sequence is empty or the denominator's median is 0.
    """
    bottom = summarize(denominator)["median"]
    if bottom == 0:
        raise ValueError("ratio_of_medians(): the denominator's median is 0")
    return summarize(numerator)["median"] / bottom


def goal_met(value: float, op: str, target: float) -> bool:
    """Whether ``value op target`` holds, for ``op`` one of ``<=``, ``>=``, ``==``."""
    if op == "<=":
        return value <= target
    if op == ">=":
        return value >= target
    if op == "==":
        return value == target
    raise ValueError(f"goal_met(): unknown operator {op!r}; expected '<=', '>=' or '=='")


def goal_record(value: float, goal: tuple[str, float]) -> dict[str, Any]:
    """The ``goal`` field of a record: ``{"op", "value", "met"}`` for ``value`` against ``goal``."""
    op, target = goal
    return {"op": op, "value": target, "met": goal_met(value, op, target)}


def describe_goal(goal: Mapping[str, Any]) -> str:
    """``goal <= 1.05: met`` (or ``NOT MET``), for progress logs."""
    return f"goal {goal['op']} {goal['value']}: {'met' if goal['met'] else 'NOT MET'}"


# -- alternation -----------------------------------------------------------------------------


def schedule(names: Sequence[str], repeats: int, warmup: int = 0) -> list[tuple[int, str]]:
    """The order in which contenders run: ``(round, name)``, round ``< 0`` for warm-up.

    Every round runs each contender once, in the order given, so two contenders alternate
    A B A B ... The warm-up rounds come first, numbered ``-warmup .. -1``.
    """
    if repeats < 1:
        raise ValueError(f"schedule() needs repeats >= 1, got {repeats}")
    if warmup < 0:
        raise ValueError(f"schedule() needs warmup >= 0, got {warmup}")
    if len(set(names)) != len(names) or not names:
        raise ValueError(f"schedule() needs distinct contender names, got {list(names)}")
    return [(r, name) for r in range(-warmup, repeats) for name in names]


@dataclass
class Contender:
    """One side of a comparison: a name and a callable timed ``inner`` times per sample.

    ``prepare`` (optional) runs before each sample, untimed: resetting state, for example.
    """

    name: str
    fn: Callable[[], object]
    prepare: Callable[[], object] | None = None


@dataclass
class Timer:
    """Time contenders side by side: warm-up, then alternating rounds of samples.

    Attributes:
        repeats: recorded rounds (samples per contender).
        warmup: unrecorded rounds before them.
        inner: calls per sample; a sample is the mean time of one call.
        clock: the clock (seconds); ``time.perf_counter`` unless a test passes another.
    """

    repeats: int
    warmup: int = 1
    inner: int = 1
    clock: Callable[[], float] = time.perf_counter
    order: list[tuple[int, str]] = field(default_factory=list)

    def run(self, contenders: Sequence[Contender]) -> dict[str, list[float]]:
        """Return the samples (seconds per call) of each contender, by name."""
        if self.inner < 1:
            raise ValueError(f"Timer.inner must be >= 1, got {self.inner}")
        by_name = {c.name: c for c in contenders}
        samples: dict[str, list[float]] = {c.name: [] for c in contenders}
        self.order = schedule([c.name for c in contenders], self.repeats, self.warmup)
        for round_, name in self.order:
            contender = by_name[name]
            if contender.prepare is not None:
                contender.prepare()
            elapsed = _timed(contender.fn, self.inner, self.clock)
            if round_ >= 0:
                samples[name].append(elapsed / self.inner)
        return samples


def _timed(fn: Callable[[], object], inner: int, clock: Callable[[], float]) -> float:
    """Seconds taken by ``inner`` calls of ``fn``, with the garbage collector paused."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = clock()
        for _ in range(inner):
            fn()
        return clock() - start
    finally:
        if enabled:
            gc.enable()


# -- records ---------------------------------------------------------------------------------


def contender_record(name: str, samples: Sequence[float], **extra: Any) -> dict[str, Any]:
    """A contender's entry: its name, its samples and their statistics (plus ``extra``)."""
    record: dict[str, Any] = {"name": name, **summarize(samples)}
    record["samples"] = [float(v) for v in samples]
    record.update(extra)
    return record


def result_record(
    id: str,
    title: str,
    *,
    metric: str,
    samples: Mapping[str, Sequence[float]],
    ratio: tuple[str, str],
    params: Mapping[str, Any],
    method: str,
    goal: tuple[str, float] | None = None,
    extra: Sequence[Mapping[str, Any]] = (),
    contender_extra: Mapping[str, Mapping[str, Any]] | None = None,
    timing: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A measured benchmark: contenders with statistics, a ratio of medians, a goal.

    Args:
        id: a short kebab-case identifier (also the figure's file name).
        title: one stable English line; the site translates it.
        metric: ``time`` (seconds per call), ``throughput`` (samples/s) or ``memory`` (bytes).
        samples: per contender, in the order to display.
        ratio: ``(numerator, denominator)`` contender names; the ratio is of their medians.
        params: the sizes and settings, shown as code on the site.
        method: how the numbers were obtained, in a sentence or two.
        goal: ``(op, target)`` for the ratio, e.g. ``("<=", 1.05)``; ``None`` (the default)
            takes the goal of ``id`` from :data:`GOALS`, if it has one.
        extra: further measured values, each ``{"label", "value", "unit"}``.
        contender_extra: more fields per contender name.
        timing: the repeats, warm-up and inner loop of a timed benchmark.
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {sorted(METRICS)}")
    numerator, denominator = ratio
    for name in ratio:
        if name not in samples:
            raise ValueError(f"ratio names {name!r}, which is not a contender")
    value = ratio_of_medians(samples[numerator], samples[denominator])
    record: dict[str, Any] = {
        "id": id,
        "title": title,
        "status": "ok",
        "metric": metric,
        "unit": METRICS[metric],
        "better": "higher" if metric == "throughput" else "lower",
        "params": dict(params),
        "method": method,
        "order": "alternating",
        "contenders": [
            contender_record(name, values, **(contender_extra or {}).get(name, {}))
            for name, values in samples.items()
        ],
        "ratio": {"numerator": numerator, "denominator": denominator, "value": value},
        "goal": None,
        "extra": [dict(e) for e in extra],
    }
    if timing is not None:
        record["timing"] = dict(timing)
    goal = goal if goal is not None else GOALS.get(id)
    if goal is not None:
        record["goal"] = goal_record(value, goal)
    return record


def skipped_record(id: str, title: str, reason: str) -> dict[str, Any]:
    """A benchmark that did not run here: no numbers, only the reason."""
    if not reason.strip():
        raise ValueError("skipped_record() needs a reason")
    return {"id": id, "title": title, "status": "skipped", "reason": reason}


def error_record(id: str, title: str, error: BaseException) -> dict[str, Any]:
    """A benchmark that raised: recorded (with the error) rather than silently dropped."""
    return {
        "id": id,
        "title": title,
        "status": "error",
        "reason": f"{type(error).__name__}: {error}",
    }


def validate_record(record: Mapping[str, Any]) -> list[str]:
    """The problems of one benchmark record (an empty list when it is well formed)."""
    problems = [f"missing {f!r}" for f in RECORD_FIELDS if f not in record]
    status = record.get("status")
    if status in ("skipped", "error"):
        if not str(record.get("reason", "")).strip():
            problems.append(f"a {status} record needs a reason")
        if "contenders" in record:
            problems.append(f"a {status} record must not carry numbers")
        return problems
    if status != "ok":
        return [*problems, f"unknown status {status!r}"]
    problems += [f"missing {f!r}" for f in RESULT_FIELDS if f not in record]
    names = []
    for contender in record.get("contenders", []):
        names.append(contender.get("name"))
        problems += [
            f"contender {contender.get('name')!r} lacks {f!r}"
            for f in (*STATS_FIELDS, "samples")
            if f not in contender
        ]
    ratio = record.get("ratio", {})
    for side in ("numerator", "denominator"):
        if ratio.get(side) not in names:
            problems.append(f"the ratio's {side} {ratio.get(side)!r} is not a contender")
    if not isinstance(ratio.get("value"), float | int):
        problems.append("the ratio has no value")
    return problems


# -- environment -----------------------------------------------------------------------------


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what :mod:`platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or ``None`` where the OS has none."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


def _git(*args: str, root: Path = ROOT) -> str:
    """The stripped output of ``git <args>`` run in ``root``."""
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=10
    ).stdout.strip()


def git_revision(root: Path = ROOT) -> str | None:
    """``<commit>`` (plus ``+dirty`` with uncommitted changes), or ``None`` outside git."""
    try:
        commit = _git("rev-parse", "--short=12", "HEAD", root=root)
        dirty = _git("status", "--porcelain", "--untracked-files=no", root=root)
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")


def environment(extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The machine and software a run happened on, without torch (see cases.py for that)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    record: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "load_average_start": load_average(),
        "git": git_revision(),
    }
    record.update(extra or {})
    return record


# -- output ----------------------------------------------------------------------------------


def new_results(env: Mapping[str, Any], mode: str) -> dict[str, Any]:
    """An empty results document."""
    return {
        "schema": SCHEMA_VERSION,
        "generator": "benchmarks/run.py",
        "mode": mode,
        "environment": dict(env),
        "benchmarks": [],
    }


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as indented UTF-8 JSON, atomically (a temporary file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(
        json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
    )
    temporary.replace(path)


def read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


class Progress:
    """Progress lines on stderr, each with the seconds since the run started."""

    def __init__(self, stream: Any = None) -> None:
        self.start = time.perf_counter()
        self.stream = stream

    def __call__(self, message: str) -> None:
        elapsed = time.perf_counter() - self.start
        print(f"[{elapsed:7.1f}s] {message}", file=self.stream or sys.stderr, flush=True)


# -- figures ---------------------------------------------------------------------------------

UNIT_SCALES = {
    "time": [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")],
    "memory": [(2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1.0, "B")],
    "throughput": [(1e9, "G samples/s"), (1e6, "M samples/s"), (1e3, "k samples/s")],
}


def scale_for(metric: str, value: float) -> tuple[float, str]:
    """The divisor and unit that show ``value`` of ``metric`` with 1 to 3 integer digits."""
    scales = UNIT_SCALES.get(metric)
    if not scales:
        return 1.0, METRICS.get(metric, "")
    for divisor, unit in scales:
        if abs(value) >= divisor:
            return divisor, unit
    if metric == "throughput":
        return 1.0, "samples/s"
    return scales[-1]


AXIS_LABELS = {
    "time": "time per call ({unit}), lower is better",
    "throughput": "throughput ({unit}), higher is better",
    "memory": "memory ({unit}), lower is better",
}


def _pyplot() -> Any:
    """:mod:`matplotlib.pyplot` on the Agg backend, imported late: only figures need it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> Path:
    """Write ``fig`` to ``path`` as a PNG (folders created), then close it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def figure(record: Mapping[str, Any], path: Path) -> Path | None:
    """A box plot of every contender's samples (median, quartiles, min/max) as a PNG."""
    if record.get("status") != "ok":
        return None
    plt = _pyplot()
    contenders = record["contenders"]
    metric = record["metric"]
    divisor, unit = scale_for(metric, max(c["median"] for c in contenders))
    data = [[v / divisor for v in c["samples"]] for c in contenders]
    names = [c["name"] for c in contenders]
    fig, ax = plt.subplots(figsize=(7.0, 1.2 + 0.6 * len(names)), layout="constrained")
    ax.boxplot(data, orientation="horizontal", tick_labels=names, whis=(0, 100))
    for row, values in enumerate(data, start=1):
        ax.plot(values, [row] * len(values), "o", alpha=0.4, markersize=3, color="tab:blue")
    ax.set_xlabel(AXIS_LABELS[metric].format(unit=unit))
    ratio = record["ratio"]
    ax.set_title(
        f"{record['title'].replace('`', '')}\n"
        f"ratio of medians {ratio['numerator']} / {ratio['denominator']} = {ratio['value']:.3g}\n"
        "box: quartiles, whiskers: min to max, dots: samples",
        fontsize=9,
    )
    ax.set_xlim(left=0)
    return _save(fig, path)


def summary_figure(records: Sequence[Mapping[str, Any]], path: Path) -> Path | None:
    """One bar per measured ratio, with its goal (if any) as a tick: the run at a glance."""
    measured = [r for r in records if r.get("status") == "ok"]
    if not measured:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.0, 1.0 + 0.5 * len(measured)), layout="constrained")
    labels = [r["id"] for r in measured]
    values = [r["ratio"]["value"] for r in measured]
    colors = []
    for r in measured:
        goal = r.get("goal")
        colors.append("tab:gray" if goal is None else "tab:green" if goal["met"] else "tab:red")
    rows = list(range(len(measured)))
    ax.barh(rows, values, color=colors)
    for row, r in zip(rows, measured, strict=True):
        goal = r.get("goal")
        if goal is not None:
            ax.plot([goal["value"]] * 2, [row - 0.4, row + 0.4], color="black", linewidth=2)
    ax.set_yticks(rows, labels)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.5, linestyle=":")
    ax.set_xscale("log")
    ax.set_xlabel("ratio of medians (numerator / denominator), log scale; black tick: goal")
    ax.set_title("ptnotes benchmarks: green = goal met, red = not met, grey = no goal")
    return _save(fig, path)
