"""The pytest side of the doctest runs: collection of page, docstring and README examples,
``--page-order``, ``--record-results`` (the release matrix's format), and the environment
line of the report.

Loaded by the repository's ``conftest.py``; the mechanism itself is
:mod:`ptnotes_dev.doctesting`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from ptnotes_dev.doctesting import check_device, environment_summary, sybils, target_device
from ptnotes_dev.matrix import OUTPUT_LIMIT, KeyCounter, environment, example_text
from ptnotes_dev.settings import load

pytest_collect_file = sybils(load().root).pytest()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--page-order",
        default="source",
        help="'source' (default), or 'random[:SEED]' to run whole files (pages, modules) in a "
        "shuffled order while keeping the examples of each file in order",
    )
    parser.addoption(
        "--record-results",
        default=None,
        metavar="FILE",
        help="write every example's outcome (passed, failed with its output, skipped with "
        "why), keyed by the hash of its source, as JSON for the release matrix",
    )
    parser.addoption(
        "--release-label",
        default=None,
        help="the matrix column of this run (default: the installed torch's version)",
    )


def pytest_configure(config: pytest.Config) -> None:
    check_device(target_device())
    order = config.getoption("--page-order")
    if order != "source" and not order.startswith("random"):
        raise pytest.UsageError(f"--page-order={order!r}: expected 'source' or 'random[:SEED]'")


def page_order_seed(config: pytest.Config) -> int | None:
    order: str = config.getoption("--page-order")
    if not order.startswith("random"):
        return None
    _, _, seed = order.partition(":")
    if not seed:
        seed = str(random.SystemRandom().randrange(10**6))
        config.option.page_order = f"random:{seed}"
    if not seed.isdigit():
        raise pytest.UsageError(f"--page-order={order!r}: the seed must be an integer")
    return int(seed)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seed = page_order_seed(config)
    if seed is None:
        return
    files: dict[object, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.path, []).append(item)
    groups = list(files.values())
    random.Random(seed).shuffle(groups)
    items[:] = [item for group in groups for item in group]


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [environment_summary(target_device())]
    if page_order_seed(config) is not None:
        lines.append(f"page order: {config.getoption('--page-order')} (rerun with this value)")
    return lines


# -- --record-results ---------------------------------------------------------------------------

_RESULTS = pytest.StashKey[dict[str, dict[str, Any]]]()
_KEYS = pytest.StashKey[dict[str, tuple[str, str, int]]]()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Give every collected example its matrix key (file order, before any run)."""
    if not session.config.getoption("--record-results"):
        return
    root = load().root
    counter = KeyCounter()
    keys: dict[str, tuple[str, str, int]] = {}
    ordered = sorted(
        (item for item in session.items if hasattr(item, "example")),
        key=lambda item: (str(item.path), item.example.start),
    )
    for item in ordered:
        doc = Path(item.path).resolve().relative_to(root).as_posix()
        key = counter.key(doc, example_text(item.example.parsed))
        keys[item.nodeid] = (key, doc, item.example.line)
    session.config.stash[_KEYS] = keys
    session.config.stash[_RESULTS] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    keys = item.config.stash.get(_KEYS, None)
    if keys is None or item.nodeid not in keys:
        return
    report: pytest.TestReport = outcome.get_result()
    # The call's outcome; a skip or an error in setup (the example never ran) counts too.
    if not (report.when == "call" or (report.when == "setup" and not report.passed)):
        return
    key, doc, line = keys[item.nodeid]
    result: dict[str, Any] = {"doc": doc, "line": line, "outcome": report.outcome}
    if report.failed:
        result["output"] = str(report.longrepr)[:OUTPUT_LIMIT]
    elif report.skipped:
        longrepr = report.longrepr
        result["reason"] = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    item.config.stash[_RESULTS][key] = result


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--record-results")
    if not path or _RESULTS not in session.config.stash:
        return
    import torch

    device = target_device()
    release = session.config.getoption("--release-label") or torch.__version__.split("+")[0]
    data = {"run": environment(release, device), "results": session.config.stash[_RESULTS]}
    Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
