"""Collect the examples of the pages (docs/) and of the docstrings (src/) as tests.

The mechanism lives in tests/doctesting.py; `nox -s doctest` and `nox -s doctest_cuda`
run it (see docs/dev/contributing.md).
"""

from pathlib import Path

import pytest

from tests.doctesting import check_device, environment_summary, sybils, target_device

pytest_collect_file = sybils(Path(__file__).parent).pytest()


def pytest_configure(config: pytest.Config) -> None:
    check_device(target_device())


def pytest_report_header(config: pytest.Config) -> str:
    return environment_summary(target_device())
