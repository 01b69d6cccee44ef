"""What a Sphinx extension of the project translates: the literal messages it passes to ``_``."""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType


def messages_used(extension: ModuleType) -> set[str]:
    """The string literals ``extension`` passes to its ``_()`` (the edition's translation)."""
    tree = ast.parse(Path(extension.__file__ or "").read_text(encoding="utf-8"))
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "_"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }
