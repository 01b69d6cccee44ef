"""Collect the examples of the pages (docs/) and of the docstrings (src/) as tests.

The mechanism lives in tests/doctesting.py; `nox -s doctest` and `nox -s doctest_cuda`
run it (see docs/dev/contributing.md).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.doctesting import check_device, environment_summary, sybils, target_device

pytest_collect_file = sybils(Path(__file__).parent).pytest()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--page-order",
        default="source",
        help="'source' (default), or 'random[:SEED]' to run whole files (pages, modules) in a "
        "shuffled order while keeping the examples of each file in order",
    )


def pytest_configure(config: pytest.Config) -> None:
    check_device(target_device())
    order = config.getoption("--page-order")
    if order != "source" and not order.startswith("random"):
        raise pytest.UsageError(f"--page-order={order!r}: expected 'source' or 'random[:SEED]'")


def _page_order_seed(config: pytest.Config) -> int | None:
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
    seed = _page_order_seed(config)
    if seed is None:
        return
    files: dict[Path, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.path, []).append(item)
    groups = list(files.values())
    random.Random(seed).shuffle(groups)
    items[:] = [item for group in groups for item in group]


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [environment_summary(target_device())]
    if _page_order_seed(config) is not None:
        lines.append(f"page order: {config.getoption('--page-order')} (rerun with this value)")
    return lines
