"""The pytest side of the doctest runs: collection of page, docstring and README examples,
``--page-order``, and the environment line of the report.

Loaded by the repository's ``conftest.py``; the mechanism itself is
:mod:`ptnotes_dev.doctesting`.
"""

from __future__ import annotations

import random

import pytest

from ptnotes_dev.doctesting import check_device, environment_summary, sybils, target_device
from ptnotes_dev.settings import load

pytest_collect_file = sybils(load().root).pytest()


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
