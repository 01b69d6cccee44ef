"""The README tells the truth about the repository: the paths it names exist, the nox
sessions it names are defined in noxfile.py.

Paths are read from the README's code spans (and relative link targets); build outputs
(``build/…``) are allowed by name, since a fresh checkout has not built them yet. The
sessions are read from noxfile.py with :mod:`ast` (functions decorated ``@nox.session``),
so the test neither imports nox nor runs anything.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from ptnotes_dev.settings import load

ROOT = load().root
README = (ROOT / "README.md").read_text(encoding="utf-8")

#: Paths the README may name that a fresh checkout does not have: what `nox -s docs` writes.
BUILD_OUTPUTS = ("build/",)
#: Suffixes that make a word without a slash a file name (``pyproject.toml``).
FILE_SUFFIXES = (".py", ".md", ".toml", ".txt", ".json", ".cfg", ".yml", ".yaml", ".html")


def code_spans(text: str) -> list[str]:
    """The inline code spans and fenced blocks' contents of a Markdown text."""
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    unfenced = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    return fenced + re.findall(r"`([^`\n]+)`", unfenced)


def named_paths(text: str) -> list[str]:
    """Repository paths named in ``text``: words of code spans, and relative link targets."""
    found: list[str] = []
    for span in code_spans(text):
        for word in span.split():
            if word.startswith(("/", "-", "<", ">>>", "http")) or "=" in word or "[" in word:
                continue  # absolute placeholders, options, env assignments, extras, urls
            if "/" in word or word.endswith(FILE_SUFFIXES):
                found.append(word)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"^[a-z][a-z0-9+.-]*:|^#", target):
            found.append(target.split("#")[0])
    return sorted(set(found))


def named_sessions(text: str) -> list[str]:
    return sorted(set(re.findall(r"\bnox -s ([A-Za-z0-9_-]+)", text)))


def nox_sessions(noxfile: Path) -> set[str]:
    """The session names noxfile.py defines (``@nox.session``, ``@nox.session(name=...)``)."""
    sessions: set[str] = set()
    for node in ast.walk(ast.parse(noxfile.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = call.func if call else decorator
            if ast.unparse(target) not in {"nox.session", "session"}:
                continue
            name = node.name
            for keyword in call.keywords if call else []:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    name = str(keyword.value.value)
            sessions.add(name)
    return sessions


SESSIONS = nox_sessions(ROOT / "noxfile.py")


def test_readme_parsers_find_what_they_should() -> None:
    sample = (
        "Run `nox -s docs`, open `build/html/index.html`, see `gallery/plot_x.py`"
        " and [a](docs/a.md)."
    )
    assert named_sessions(sample) == ["docs"]
    assert named_paths(sample) == ["build/html/index.html", "docs/a.md", "gallery/plot_x.py"]
    assert {"docs", "tests", "doctest_cuda"} <= SESSIONS


@pytest.mark.parametrize("path", named_paths(README))
def test_path_named_in_readme_exists(path: str) -> None:
    if path.startswith(BUILD_OUTPUTS):
        return  # a build output: allowed by name
    matches = list(ROOT.glob(path)) if any(c in path for c in "*?[") else [ROOT / path]
    assert any(match.exists() for match in matches), f"README.md names {path}, which is not there"


@pytest.mark.parametrize("session", named_sessions(README))
def test_session_named_in_readme_exists(session: str) -> None:
    assert session in SESSIONS, f"README.md names `nox -s {session}`; noxfile.py has {SESSIONS}"
