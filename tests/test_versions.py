"""Prose that names a torch release agrees with the release matrix's data.

A release of the matrix's range named in a sentence ("since PyTorch 2.6") must be written as
``{torch-since}`PyTorch 2.6 <label>```, where ``(label)=`` marks the examples that show the
behaviour: the data must show that behaviour from that release on. "The releases where this
holds" is written ``{torch-span}`label``` and generated from the data. Releases older than
the range ("since PyTorch 2.0") may be plain; when written with the role, the examples must
pass on the whole range. The docs build warns (an error under ``-W``) on the same mismatches;
these tests say which sentence, without a build.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser
from ptnotes_dev import matrix
from ptnotes_dev.i18n import LOCALE, messages, read_catalog
from ptnotes_dev.settings import load

SETTINGS = load()
ROOT = SETTINGS.root
LOWER = matrix.lower_bound(SETTINGS)
DATA = matrix.load_data(ROOT / matrix.DATA_FILE)
EXAMPLES = matrix.current_examples(SETTINGS)
SKIPPED_FOLDERS = {"locales", "auto_examples", "_build"}
PAGES = [
    *sorted(
        p
        for p in (ROOT / "docs").rglob("*.md")
        if not SKIPPED_FOLDERS & set(p.relative_to(ROOT).parts)
    ),
    ROOT / "README.md",
]
PAGE_IDS = [p.relative_to(ROOT).as_posix() for p in PAGES]
ROLES = ("torch-since", "torch-span")
PARSER = create_md_parser(
    MdParserConfig(enable_extensions={"colon_fence", "deflist", "dollarmath", "fieldlist"}),
    RendererHTML,
)
#: Code spans (double backticks may hold single ones) and roles: not words of a sentence.
CODE_OR_ROLE = re.compile(r"``.+?``|\{[\w-]+\}`[^`]*`|`[^`]+`", re.DOTALL)


def prose(text: str) -> Iterator[tuple[int, str]]:
    """The sentences of a MyST page (line, text), code spans and roles left out."""
    for token in PARSER.parse(text):
        if token.type != "inline" or token.map is None:
            continue
        parts = []
        for child in token.children or []:
            if child.type == "text":
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
            else:  # code, roles, links' markup: not words of the sentence
                parts.append("\0")
        yield token.map[0] + 1, "".join(parts)


def roles(text: str) -> Iterator[tuple[int, str, str]]:
    """The ``torch-since`` and ``torch-span`` roles of a MyST page: (line, name, content)."""
    for token in PARSER.parse(text):
        for child in token.children or []:
            if child.type == "myst_role" and child.meta.get("name") in ROLES:
                yield (token.map or [0])[0] + 1, child.meta["name"], child.content


def keys_under(path: Path, label: str) -> list[str]:
    span = matrix.labelled_lines(path.read_text(encoding="utf-8"), label)
    assert span is not None, f"no target ({label})= above a heading or a code fence"
    doc = path.relative_to(ROOT).as_posix()
    return [e.key for e in EXAMPLES if e.doc == doc and span[0] <= e.line <= span[1]]


@pytest.mark.parametrize("path", PAGES, ids=PAGE_IDS)
def test_a_release_of_the_range_is_named_only_through_the_roles(path: Path) -> None:
    plain = [
        f"line {line}: {found} in {sentence.strip()[:100]!r}"
        for line, sentence in prose(path.read_text(encoding="utf-8"))
        for found in matrix.releases_named(sentence, LOWER)
    ]
    assert plain == [], "write it as {torch-since}`PyTorch X.Y <label>` or {torch-span}`label`"


def test_the_ledger_names_no_release_of_the_range() -> None:
    plain = []
    for path in sorted((ROOT / "docs" / "claims").glob("*.toml")):
        for claim in tomllib.loads(path.read_text(encoding="utf-8")).get("claim", []):
            for field, value in claim.items():
                if field != "quote" and isinstance(value, str):
                    text = CODE_OR_ROLE.sub("\0", value)
                    plain += [
                        f"{path.name} {field}: {r}" for r in matrix.releases_named(text, LOWER)
                    ]
    assert plain == []


def _docstrings(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node)
            if doc:
                yield "\n".join(
                    line
                    for line in doc.splitlines()
                    if not line.lstrip().startswith((">>>", "..."))
                )


def test_docstrings_and_gallery_name_no_release_of_the_range() -> None:
    plain = []
    for path in sorted((ROOT / "src").rglob("*.py")) + sorted((ROOT / "gallery").glob("*.py")):
        texts = list(_docstrings(path))
        if path.parent.name == "gallery":  # text cells are comments
            texts += [
                line.lstrip("# ") for line in path.read_text().splitlines() if line.startswith("#")
            ]
        for text in texts:
            found = matrix.releases_named(CODE_OR_ROLE.sub("\0", text), LOWER)
            plain += [f"{path.relative_to(ROOT)}: {r}" for r in found]
    assert plain == []


@pytest.mark.parametrize("path", sorted(LOCALE.rglob("*.po")), ids=lambda p: p.name)
def test_translations_name_releases_only_through_the_roles(path: Path) -> None:
    plain = [
        f"{r} in {msgstr[:80]!r}"
        for _msgid, msgstr, _ in messages(read_catalog(path))
        for r in matrix.releases_named(CODE_OR_ROLE.sub("\0", msgstr), LOWER)
    ]
    assert plain == []


ROLE_USES = [
    (path, line, name, content)
    for path in PAGES
    for line, name, content in roles(path.read_text(encoding="utf-8"))
]


def test_the_pages_use_the_roles() -> None:
    assert {name for _p, _l, name, _c in ROLE_USES} == set(ROLES)


@pytest.mark.matrix_data
@pytest.mark.parametrize(
    ("path", "line", "name", "content"),
    ROLE_USES,
    ids=[f"{p.relative_to(ROOT).as_posix()}:{line}" for p, line, _n, _c in ROLE_USES],
)
def test_a_named_release_agrees_with_the_data(
    path: Path, line: int, name: str, content: str
) -> None:
    match = re.fullmatch(r"(?s)(.*?)\s*<([\w-]+)>", content)
    label = match.group(2) if match else content
    keys = keys_under(path, label)
    assert keys, f"no example under ({label})="
    assert matrix.unrecorded(DATA, keys) == [], "not in the matrix data: run `nox -s matrix`"
    if name == "torch-span":
        assert matrix.page_status(DATA, keys, matrix.cpu_columns(DATA)).passed_on
        return
    assert match, "torch-since needs `text <label>`"
    named = matrix.RELEASE.findall(match.group(1))
    assert len(named) == 1, f"name one release: {match.group(1)!r}"
    assert matrix.since_problem(DATA, keys, named[0]) is None


# -- the check itself, on made-up data -------------------------------------------------------


def _data(outcomes: dict[str, str]) -> dict[str, object]:
    runs = {release: {} for release in outcomes}
    results = {release: {"outcome": o} for release, o in outcomes.items()}
    return {"runs": runs, "examples": {"k": {"doc": "d", "line": 1, "results": results}}}


CHANGED_AT_2_6 = _data({"2.4.1": "failed", "2.5.1": "failed", "2.6.0": "passed", "2.7.1": "passed"})
ALWAYS = _data({"2.4.1": "passed", "2.5.1": "passed", "2.6.0": "passed", "2.7.1": "passed"})


@pytest.mark.parametrize(
    ("data", "named", "agrees"),
    [
        (CHANGED_AT_2_6, ("2", "6"), True),
        (CHANGED_AT_2_6, ("2", "5"), False),
        (CHANGED_AT_2_6, ("2", "7"), False),
        (CHANGED_AT_2_6, ("2", "0"), False),  # "since 2.0", yet it changed inside the range
        (CHANGED_AT_2_6, ("2", "8"), False),  # newer than the newest release run
        (ALWAYS, ("2", "0"), True),
        (ALWAYS, ("1", "13"), True),
        (ALWAYS, ("2", "4"), True),
        (ALWAYS, ("2", "6"), False),
        (_data({"2.4.1": "passed", "2.5.1": "failed"}), ("2", "4"), False),  # fails on the newest
    ],
)
def test_since_problem(data: dict[str, object], named: tuple[str, str], agrees: bool) -> None:
    assert (matrix.since_problem(data, ["k"], named) is None) is agrees


def test_since_problem_waits_for_examples_without_results() -> None:
    data = _data({"2.4.1": "failed", "2.5.1": "passed"})
    data["runs"]["2.6.0"] = {}  # type: ignore[index]
    assert matrix.unrecorded(data, ["k"]) == ["k"]
    assert matrix.since_problem(data, ["k"], ("2", "9")) is None


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("the default since PyTorch 2.6, which", ["2.6"]),
        ("on torch 2.13.0 and", ["2.13.0"]),
        ("the default since 2.6)", ["2.6"]),
        ("since PyTorch 2.0 it", []),  # before the range
        ("from Python 3.14 on", []),
        ("torchvision 0.13 deprecated", []),
        ("scaled by 2.5 and", []),
        ("PyTorch 1.1.0 and later", []),
    ],
)
def test_releases_named(text: str, found: list[str]) -> None:
    assert matrix.releases_named(text, "2.4.1") == found


SECTION = """intro

(a-section)=
## Title

text

(a-block)=
```pycon
>>> 1
1
```

more

### Sub

(not-above-anything)=
words
"""


def test_labelled_lines() -> None:
    assert matrix.labelled_lines(SECTION, "a-section") == (4, 19)
    assert matrix.labelled_lines(SECTION, "a-block") == (9, 12)
    assert matrix.labelled_lines(SECTION, "not-above-anything") is None
    assert matrix.labelled_lines(SECTION, "missing") is None
