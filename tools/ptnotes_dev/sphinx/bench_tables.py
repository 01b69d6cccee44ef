"""Measured numbers: ``docs/_data/bench.json`` (written by ``benchmarks/run.py``) as tables.

One directive, ``{bench-results}``, with the option ``:part:``:

``environment``
    the machine and software the numbers come from;
``summary``
    one row per benchmark: the ratio of medians, its goal and whether it was met;
``unmet``
    the goals this run did not meet, in a warning (a note with a dash when there are none);
``details``
    one table per benchmark: median, quartiles, min-max and sample count per contender,
    then its settings, ratio and further measured values;
``build-cost``
    the project's own costs measured by ``benchmarks/build_cost.py``.

The tables are written as MyST and parsed like the page, so their labels go through the
translation flow. Numbers, units, contender names, settings and whether a goal was met
(a tick or a cross) are data: they are inserted as nodes marked not translatable, and the
labels do not depend on the outcome, so a new run of the same suite adds no message to the
translation catalogs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from ptnotes_dev.settings import load as load_settings

PARTS = ("environment", "summary", "unmet", "details", "build-cost")
DEFAULT_FILE = "_data/bench.json"

#: A piece of data: ``("code", text)`` becomes a literal, ``("strong", text)`` bold text,
#: ``("text", text)`` plain text.
Segment = tuple[str, str]

TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
MEMORY_UNITS = ((2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1.0, "B"))
THROUGHPUT_UNITS = ((1e9, "G samples/s"), (1e6, "M samples/s"), (1e3, "k samples/s"))
OPS = {"<=": "\u2264", ">=": "\u2265", "==": "="}
TIMES = "\u00d7"  # multiplication sign, after a ratio
DASH = "\u2013"  # en dash, between the ends of a range
ARROW = "\u2192"  # from the start of a run to its end


def _significant(value: float) -> str:
    """Three significant digits without exponent for 0.001 <= |value| < 10 000."""
    if value == 0:
        return "0"
    text = f"{value:.3g}"
    if "e" in text:
        text = f"{value:.0f}" if abs(value) >= 1 else f"{value:.2e}"
    return text


def format_ratio(value: float) -> str:
    """Two decimals below 10 (``1.03``, ``0.25``), three significant digits above."""
    if abs(value) >= 10:
        return _significant(value)
    if abs(value) >= 0.1 or value == 0:
        return f"{value:.2f}"
    return f"{value:.2g}"


def _scaled(value: float, units: Sequence[tuple[float, str]], fallback: str) -> str:
    for divisor, unit in units:
        if abs(value) >= divisor:
            return f"{_significant(value / divisor)} {unit}"
    if fallback:
        return f"{_significant(value)} {fallback}"
    divisor, unit = units[-1]
    return f"{_significant(value / divisor)} {unit}"


def format_quantity(value: float, unit: str) -> str:
    """``value`` of ``unit`` (s, bytes, samples/s, %, x, or a count) for a reader."""
    if unit == "s":
        return _scaled(value, TIME_UNITS, "")
    if unit == "bytes":
        return _scaled(value, MEMORY_UNITS, "")
    if unit == "samples/s":
        return _scaled(value, THROUGHPUT_UNITS, "samples/s")
    if unit == "%":
        return f"{value:.1f} %"
    if unit == "x":
        return f"{format_ratio(value)}{TIMES}"
    return _significant(value) if isinstance(value, float) else str(value)


def format_goal(goal: Mapping[str, Any] | None, unit: str = "x") -> str:
    if not goal:
        return "—"
    return f"{OPS.get(goal['op'], goal['op'])} {format_quantity(goal['value'], unit)}"


def format_range(low: float, high: float, unit: str) -> str:
    """``low DASH high``, with the unit written once when both ends share it."""
    first, last = format_quantity(low, unit), format_quantity(high, unit)
    head, _, first_unit = first.partition(" ")
    if first_unit and last.partition(" ")[2] == first_unit:
        first = head
    return f"{first} {DASH} {last}"


def format_params(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in params.items())


def load_results(path: Path) -> dict[str, Any]:
    """Read a results file and check the little this extension relies on."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data.get("environment"), dict):
        raise ValueError(f"{path}: no 'environment' object")
    if not isinstance(data.get("benchmarks"), list):
        raise ValueError(f"{path}: no 'benchmarks' list")
    for record in data["benchmarks"]:
        if record.get("status") not in ("ok", "skipped", "error"):
            raise ValueError(f"{path}: benchmark {record.get('id')!r} has no valid status")
    return data


class _Writer:
    """Collects MyST lines; data cells become placeholders filled with nodes later."""

    PLACEHOLDER = "PTNOTESBENCHDATA{}"
    PATTERN = re.compile(r"^PTNOTESBENCHDATA(\d+)$")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.data: list[list[Segment]] = []

    def datum(self, *segments: Segment | str) -> str:
        """A placeholder for data: strings are plain text, tuples say their kind."""
        self.data.append([s if isinstance(s, tuple) else ("text", s) for s in segments])
        return self.PLACEHOLDER.format(len(self.data) - 1)

    def table(self, title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        self.lines += [f":::{{list-table}} {title}".rstrip(), ":header-rows: 1", ""]
        for row in [header, *rows]:
            self.lines.append(f"* - {row[0]}")
            self.lines += [f"  - {cell}" for cell in row[1:]]
        self.lines += [":::", ""]

    def fields(self, items: Sequence[tuple[str, str]]) -> None:
        self.lines += [f":{name}: {value}" for name, value in items]
        self.lines.append("")

    def fill(self, parsed: Sequence[nodes.Node]) -> None:
        """Put the data in place of the placeholders, marked not translatable."""
        for root in parsed:
            for paragraph in list(root.findall(nodes.paragraph)):
                match = self.PATTERN.match(paragraph.astext().strip())
                if not match:
                    continue
                paragraph.children = []
                for kind, text in self.data[int(match.group(1))]:
                    if kind == "code":
                        paragraph += nodes.literal(text, text)
                    elif kind == "strong":
                        paragraph += nodes.strong(text, text)
                    else:
                        paragraph += nodes.Text(text)
                paragraph["translatable"] = False


class BenchResults(SphinxDirective):
    """Render part of the measured results (see the module docstring)."""

    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {
        "part": lambda value: directives.choice(value, PARTS),
        "file": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        relative = self.options.get("file", self.config.ptnotes_bench_file)
        path = Path(self.env.srcdir) / relative
        self.env.note_dependency(str(path))
        try:
            results = load_results(path)
        except (OSError, ValueError) as error:
            raise self.error(f"bench-results: cannot read {relative}: {error}") from error
        writer = _Writer()
        part = self.options.get("part", "summary")
        getattr(self, "_" + part.replace("-", "_"))(writer, results)
        container = nodes.container()
        self.state.nested_parse(StringList(writer.lines, source=self.env.docname), 0, container)
        children = list(container.children)
        writer.fill(children)
        return children

    # -- parts -------------------------------------------------------------------------------

    def _environment(self, w: _Writer, results: Mapping[str, Any]) -> None:
        env = results["environment"]
        load = env.get("load_average_start")
        load_end = env.get("load_average_end")
        rows: list[tuple[str, str]] = [
            ("Date of the run (UTC)", w.datum(str(env.get("date", "?")))),
            ("Mode", w.datum(("code", str(results.get("mode", "?"))))),
            ("CPU", w.datum(str(env.get("cpu", "?")))),
            (
                "Logical CPUs usable / present",
                w.datum(f"{env.get('cpus_usable', '?')} / {env.get('cpu_count', '?')}"),
            ),
            (
                "Threads of torch",
                w.datum(
                    ("code", f"torch.get_num_threads() == {env.get('torch_num_threads', '?')}")
                ),
            ),
            ("torch", w.datum(str(env.get("torch", "?")))),
            ("Python", w.datum(f"{env.get('python', '?')} ({env.get('implementation', '?')})")),
            ("Platform", w.datum(str(env.get("platform", "?")))),
            ("CUDA device", w.datum(str(env.get("cuda_device") or "—"))),
            (
                "Load average (1, 5, 15 min) at start and end",
                w.datum(f"{_load(load)} {ARROW} {_load(load_end)}"),
            ),
            (
                "Duration of the run",
                w.datum(format_quantity(env["duration_s"], "s") if "duration_s" in env else "—"),
            ),
            ("Git revision", w.datum(("code", str(env.get("git") or "—")))),
        ]
        w.table("The machine of this run", ["Property", "Value"], rows)

    def _summary(self, w: _Writer, results: Mapping[str, Any]) -> None:
        rows = []
        for record in results["benchmarks"]:
            if record["status"] != "ok":
                status = "skipped" if record["status"] == "skipped" else "failed"
                rows.append([record["title"], w.datum("—"), w.datum("—"), w.datum("—"), status])
                continue
            ratio, goal = record["ratio"], record.get("goal")
            met = w.datum("—") if not goal else _met(w, goal)
            rows.append(
                [
                    record["title"],
                    w.datum(("code", f"{ratio['numerator']} / {ratio['denominator']}")),
                    w.datum(format_quantity(ratio["value"], "x")),
                    w.datum(format_goal(goal)),
                    met,
                ]
            )
        w.table(
            "Ratios of medians",
            ["Benchmark", "Ratio", "Value", "Goal", "Goal met"],
            rows,
        )

    def _unmet(self, w: _Writer, results: Mapping[str, Any]) -> None:
        unmet = [
            r["title"]
            for r in results["benchmarks"]
            if r["status"] == "ok" and r.get("goal") and not r["goal"]["met"]
        ]
        unmet += [label for label, goal, _, _ in _build_measures(results) if not goal["met"]]
        # One fixed sentence whatever the outcome, so that a new run adds no message.
        w.lines += [":::{warning}" if unmet else ":::{note}", "Goals not met in this run:", ""]
        w.lines += [f"- {title}" for title in unmet] or [f"- {w.datum('—')}"]
        w.lines += [":::", ""]

    def _details(self, w: _Writer, results: Mapping[str, Any]) -> None:
        for record in results["benchmarks"]:
            if record["status"] != "ok":
                w.lines += [f":::{{rubric}} {record['title']}", ":::", ""]
                label = "Skipped" if record["status"] == "skipped" else "Failed"
                w.fields([(label, record.get("reason", ""))])
                continue
            unit = record["unit"]
            rows = []
            for c in record["contenders"]:
                rows.append(
                    [
                        w.datum(("code", c["name"])),
                        w.datum(format_quantity(c["median"], unit)),
                        w.datum(format_range(c["q1"], c["q3"], unit)),
                        w.datum(format_range(c["min"], c["max"], unit)),
                        w.datum(str(c["n"])),
                    ]
                )
            header = [
                "Contender",
                HEADERS[record["metric"]],
                "Quartiles",
                f"Min {DASH} max",
                "Samples",
            ]
            w.table(record["title"], header, rows)
            ratio = record["ratio"]
            items = [
                ("Settings", w.datum(*_settings(record))),
                (
                    "Ratio of medians",
                    w.datum(
                        ("code", f"{ratio['numerator']} / {ratio['denominator']}"),
                        f" = {format_quantity(ratio['value'], 'x')}",
                    ),
                ),
            ]
            if record.get("goal"):
                goal = record["goal"]
                items.append(("Goal", w.datum(format_goal(goal))))
                items.append(("Goal met", _met(w, goal)))
            for extra in record.get("extra", []):
                items.append(
                    (extra["label"], w.datum(format_quantity(extra["value"], extra["unit"])))
                )
            if record.get("timing"):
                items.append(("Repeats", w.datum(("code", format_params(record["timing"])))))
            w.fields(items)

    def _build_cost(self, w: _Writer, results: Mapping[str, Any]) -> None:
        cost = results.get("build_cost")
        if not cost:
            w.lines += ["Not measured in this run.", ""]
            return
        sphinx = cost.get("sphinx", {})
        rows = [
            [label, w.datum(value), w.datum(format_goal(goal, "")), _met(w, goal), w.datum(detail)]
            for label, goal, value, detail in _build_measures(results)
        ]
        if sphinx.get("status") != "ok":
            dash = w.datum("—")
            rows.insert(0, ["Site builds", dash, dash, dash, "not measured"])
        d = cost.get("doctest")
        w.table("Costs of the project", ["Measure", "Ratio", "Goal", "Goal met", "Times"], rows)
        items = [
            (
                "Load average (1, 5, 15 min) at start and end",
                w.datum(
                    f"{_load(cost.get('load_average_start'))} {ARROW} "
                    f"{_load(cost.get('load_average_end'))}"
                ),
            )
        ]
        codes = [
            f"{language} {kind}={e.get(f'{kind}_returncode', '?')}"
            for language, e in sphinx.get("editions", {}).items()
            for kind in ("clean", "noop")
        ]
        if d:
            codes.append(f"pytest={d.get('doctest_returncode', '?')}")
        items.append(("Exit codes", w.datum(("code", ", ".join(codes) or "—"))))
        w.fields(items)


HEADERS = {"time": "Median time", "throughput": "Median throughput", "memory": "Median memory"}


def _met(w: _Writer, goal: Mapping[str, Any]) -> str:
    """A tick, or a bold cross: language-neutral data, so outcomes never touch the catalogs."""
    return w.datum("\u2713") if goal["met"] else w.datum(("strong", "\u2717"))


def _settings(record: Mapping[str, Any]) -> list[Segment]:
    segments: list[Segment] = [("code", format_params(record["params"]))]
    if record.get("fallback_reason"):
        segments.append(("text", f" ({record['fallback_reason']})"))
    return segments


def _noop_label(language: str) -> str:
    """The row of one edition's build cost, named as ``[tool.ptnotes] languages`` names it."""
    names = {lang.code: lang.name for lang in load_settings().languages}
    return f"No-op rebuild / clean build, {names.get(language, language)} edition"


def _load(values: Sequence[float] | None) -> str:
    return ", ".join(f"{v:.2f}" for v in values) if values else "—"


def _build_measures(
    results: Mapping[str, Any],
) -> list[tuple[str, Mapping[str, Any], str, str]]:
    """The measured build costs: ``(label, goal, value, detail)``, one per row of the table.

    The one list behind both the build-cost table and the unmet goals, so that a measure's
    label and goal are read in one place (the goals themselves come from the results file).
    """
    cost = results.get("build_cost") or {}
    measures: list[tuple[str, Mapping[str, Any], str, str]] = []
    sphinx = cost.get("sphinx", {})
    if sphinx.get("status") == "ok":
        for language, e in sphinx["editions"].items():
            times = f"{e['noop_s']:.1f} s / {e['clean_s']:.1f} s"
            measures.append((_noop_label(language), e["goal"], format_ratio(e["ratio"]), times))
        zh = sphinx["zh_gallery_executed"]
        measures.append(
            (
                "Gallery scripts executed by the Chinese build",
                zh["goal"],
                str(zh["value"]),
                ", ".join(zh["scripts"]) or "—",
            )
        )
    d = cost.get("doctest")
    if d:
        times = f"{d['doctest_s']['median']:.1f} s / {d['plain_s']['median']:.1f} s"
        measures.append(
            (
                "Doctest session / plain execution of the same examples",
                d["goal"],
                format_ratio(d["ratio"]),
                times,
            )
        )
    return measures


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("ptnotes_bench_file", DEFAULT_FILE, "env", types=[str])
    app.add_directive("bench-results", BenchResults)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
