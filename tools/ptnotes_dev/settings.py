"""The project's settings: the ``[tool.ptnotes]`` table of the root ``pyproject.toml``.

Every fact that more than one tool needs is written once, there, and read through
:func:`load`: the site's languages, the Sphinx flags, the doctest targets, the default torch
requirement. The supported torch range is the ``torch`` requirement of the ``ptnotes``
package itself (``[project] dependencies``): the bound users install against.

The noxfile reads the same table with :mod:`tomllib` (it runs before any session has
installed this package); everything else imports it from here.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["Language", "Settings", "find_root", "load"]

#: A requirement on torch in ``[project] dependencies``: ``torch>=2.4`` or ``torch>=2.4,<3``.
_TORCH_REQUIREMENT = re.compile(r"^\s*torch\s*(?P<spec>[<>=!~].*)?$")


@dataclass(frozen=True)
class Language:
    """One edition of the site.

    Attributes:
        code: Sphinx's ``language`` and the edition's folder (``en``, ``zh_CN``).
        name: how the language names itself in the switcher (``English``, ``简体中文``).
        html_lang: the BCP 47 tag of the edition's ``<html lang>`` (``en``, ``zh-CN``).
        browser: a regular expression matched against ``navigator.languages`` by the root
            page to send a reader to this edition (empty: only the fallback sends readers).
    """

    code: str
    name: str
    html_lang: str
    browser: str = ""


@dataclass(frozen=True)
class Repository:
    """Where the project lives on GitHub (``[tool.ptnotes.repository]``), for reader links.

    Attributes:
        url: ``https://github.com/<owner>/<name>``.
        branch: the branch the pages are edited on.
        pages_branch: the branch the built site is published to (its notebooks open in Colab
            from there).
    """

    url: str
    branch: str = "main"
    pages_branch: str = "gh-pages"

    @property
    def slug(self) -> str:
        """``<owner>/<name>``."""
        return self.url.removeprefix("https://github.com/")


@dataclass(frozen=True)
class Settings:
    """The ``[tool.ptnotes]`` table, checked and typed."""

    root: Path
    languages: tuple[Language, ...]
    sphinx_flags: tuple[str, ...]
    doctest_targets: tuple[str, ...]
    torch: str
    torch_range: str
    #: None when the table names no repository: the site then shows no edit/report links.
    repository: Repository | None = None

    @property
    def language_codes(self) -> tuple[str, ...]:
        return tuple(language.code for language in self.languages)

    @property
    def source_language(self) -> Language:
        """The language the pages are written in: the first of the table."""
        return self.languages[0]

    @property
    def translations(self) -> tuple[Language, ...]:
        """The languages made from gettext catalogs: all but the first."""
        return self.languages[1:]

    def language(self, code: str) -> Language:
        for language in self.languages:
            if language.code == code:
                return language
        raise ValueError(
            f"unknown language {code!r}; [tool.ptnotes] languages are "
            f"{', '.join(self.language_codes)}"
        )


def find_root(start: Path | None = None) -> Path:
    """The folder of the ``pyproject.toml`` with a ``[tool.ptnotes]`` table.

    Searched upwards from ``start`` (default: the working directory), then from this file
    (an editable install lives in the repository).
    """
    candidates = [(start or Path.cwd()).resolve(), Path(__file__).resolve().parent]
    for first in candidates:
        for folder in (first, *first.parents):
            path = folder / "pyproject.toml"
            if path.is_file() and "[tool.ptnotes]" in path.read_text(encoding="utf-8"):
                return folder
    raise FileNotFoundError(
        "no pyproject.toml with a [tool.ptnotes] table above "
        f"{candidates[0]} or {candidates[1]}: run from the ptnotes repository"
    )


def _strings(table: dict[str, Any], key: str) -> tuple[str, ...]:
    value = table.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError(f"[tool.ptnotes] {key} must be a non-empty list of strings, got {value!r}")
    return tuple(value)


def _language(entry: Any) -> Language:
    if not isinstance(entry, dict):
        raise ValueError(f"[tool.ptnotes] languages: each entry must be a table, got {entry!r}")
    unknown = set(entry) - {"code", "name", "html-lang", "browser"}
    if unknown:
        raise ValueError(f"[tool.ptnotes] languages: unknown key(s) {', '.join(sorted(unknown))}")
    code, name = entry.get("code"), entry.get("name")
    if not isinstance(code, str) or not re.fullmatch(r"[a-z]{2,3}(_[A-Z][A-Za-z]+)?", code):
        raise ValueError(
            f"[tool.ptnotes] languages: code must look like 'en' or 'zh_CN', got {code!r}"
        )
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"[tool.ptnotes] languages: {code} needs a name")
    html_lang = entry.get("html-lang", code.replace("_", "-"))
    return Language(code, name, str(html_lang), str(entry.get("browser", "")))


def _torch_range(project: dict[str, Any]) -> str:
    for requirement in project.get("dependencies", []):
        match = _TORCH_REQUIREMENT.match(requirement)
        if match:
            return (match.group("spec") or "").strip()
    raise ValueError("[project] dependencies names no torch requirement")


_GITHUB = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+$")


def _repository(table: dict[str, Any]) -> Repository | None:
    entry = table.get("repository")
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise ValueError("[tool.ptnotes] repository must be a table (url, branch, pages-branch)")
    unknown = set(entry) - {"url", "branch", "pages-branch"}
    if unknown:
        raise ValueError(f"[tool.ptnotes.repository] unknown key(s): {', '.join(sorted(unknown))}")
    url = entry.get("url")
    if not isinstance(url, str) or not _GITHUB.match(url):
        raise ValueError(
            f"[tool.ptnotes.repository] url must be https://github.com/<owner>/<name>, got {url!r}"
        )
    branches = {key: entry.get(key, default) for key, default in
                (("branch", "main"), ("pages-branch", "gh-pages"))}  # fmt: skip
    for key, value in branches.items():
        if not isinstance(value, str) or not value.strip():
            raise ValueError(
                f"[tool.ptnotes.repository] {key} must be a branch name, got {value!r}"
            )
    return Repository(url, branches["branch"], branches["pages-branch"])


def parse(data: dict[str, Any], root: Path) -> Settings:
    """Settings from a parsed ``pyproject.toml``; ValueError names the bad key."""
    table = data.get("tool", {}).get("ptnotes")
    if not isinstance(table, dict):
        raise ValueError("pyproject.toml has no [tool.ptnotes] table")
    languages = tuple(_language(entry) for entry in table.get("languages", []))
    if not languages:
        raise ValueError("[tool.ptnotes] languages must list at least one language")
    codes = [language.code for language in languages]
    if len(set(codes)) != len(codes):
        raise ValueError(f"[tool.ptnotes] languages: duplicate code in {codes}")
    torch = table.get("torch")
    if not isinstance(torch, str) or not torch.startswith("torch"):
        raise ValueError(f"[tool.ptnotes] torch must be a requirement on torch, got {torch!r}")
    return Settings(
        root=root,
        languages=languages,
        sphinx_flags=_strings(table, "sphinx-flags"),
        doctest_targets=_strings(table, "doctest-targets"),
        torch=torch,
        torch_range=_torch_range(data.get("project", {})),
        repository=_repository(table),
    )


@cache
def load(root: Path | None = None) -> Settings:
    """The settings of the repository at ``root`` (default: :func:`find_root`)."""
    folder = root or find_root()
    with (folder / "pyproject.toml").open("rb") as handle:
        return parse(tomllib.load(handle), folder)
