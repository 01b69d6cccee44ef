"""Every public name of ptnotes is used by at least one page, gallery script or benchmark."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "ptnotes"
USERS = [
    *(ROOT / "docs").rglob("*.md"),
    *(ROOT / "gallery").glob("*.py"),
    *(ROOT / "benchmarks").glob("*.py"),
]


def public_names() -> list[str]:
    names = []
    for module in sorted(PACKAGE.glob("*.py")):
        if module.name.startswith("_"):
            continue
        for node in ast.parse(module.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                assert isinstance(node.value, ast.List)
                names += [
                    f"{module.stem}.{e.value}"
                    for e in node.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
    return names


TEXT = "\n".join(path.read_text(encoding="utf-8") for path in USERS)


@pytest.mark.parametrize("qualified", public_names())
def test_public_name_is_used_by_a_page_or_script(qualified: str) -> None:
    module, name = qualified.split(".")
    # `from ptnotes.m import a, b` or `from ptnotes.m import (\n...     a,\n... )`
    names = r"(?:\([^)]*\)|[^\n]*)"
    imports = re.findall(rf"from ptnotes\.{module} import {names}", TEXT)
    imported = any(re.search(rf"\b{re.escape(name)}\b", found) for found in imports)
    referenced = re.search(rf"ptnotes\.(?:{module}\.)?{re.escape(name)}\b", TEXT)
    entry_point = name == "main" and re.search(rf"-m ptnotes\.{module}\b", TEXT)
    assert imported or referenced or entry_point, (
        f"ptnotes.{qualified} is used by no page, gallery script or benchmark"
    )
