"""The package as pip meets it: the wheel built from this tree, and its metadata.

The wheel is built once per run with the test environment's own hatchling (no build
isolation, so nothing is downloaded); the tests then read the archive and its METADATA.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from ptnotes_dev.settings import load

SETTINGS = load()
ROOT = SETTINGS.root
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )  # fmt: skip
    (built,) = out.glob("ptnotes-*.whl")
    return built


@pytest.fixture(scope="module")
def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


@pytest.fixture(scope="module")
def metadata(wheel: Path, names: list[str]) -> Message:
    (path,) = [name for name in names if name.endswith(".dist-info/METADATA")]
    with zipfile.ZipFile(wheel) as archive:
        return Parser().parsestr(archive.read(path).decode("utf-8"))


def requirements(metadata: Message) -> dict[str, Requirement]:
    """The wheel's unconditional requirements (no ``extra ==`` marker), by project name."""
    found = {}
    for line in metadata.get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        if requirement.marker is None:
            found[requirement.name] = requirement
    return found


def test_wheel_ships_the_license(names: list[str]) -> None:
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names), names


def test_license_file_is_bsd_3_clause() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("BSD 3-Clause License")
    assert "ptnotes contributors" in text


def test_wheel_declares_spdx_license(metadata: Message) -> None:
    assert metadata["License-Expression"] == PYPROJECT["project"]["license"] == "BSD-3-Clause"


def test_wheel_ships_py_typed(names: list[str]) -> None:
    assert "ptnotes/py.typed" in names


def test_wheel_requires_numpy_for_to_numpy(metadata: Message) -> None:
    assert "numpy" in requirements(metadata)


def test_wheel_requires_the_supported_torch_range(metadata: Message) -> None:
    torch = requirements(metadata)["torch"]
    assert str(torch.specifier) == SETTINGS.torch_range


@pytest.mark.parametrize(
    "classifier",
    [
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Typing :: Typed",
    ],
)
def test_wheel_has_classifier(metadata: Message, classifier: str) -> None:
    assert classifier in (metadata.get_all("Classifier") or [])


def test_readme_import_example_is_a_doctest() -> None:
    """The README's `pip install` + import example runs in `nox -s doctest`."""
    assert "README.md" in SETTINGS.doctest_targets
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ">>> from ptnotes import to_numpy" in readme
