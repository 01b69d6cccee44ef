"""The settings table ([tool.ptnotes]) is the one source of the facts the tools share."""

from __future__ import annotations

import ast
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from ptnotes_dev import settings as project_settings
from ptnotes_dev.site import root_page, switcher_entries

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = project_settings.load(ROOT)
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).is_file()]


def text_files(*suffixes: str) -> dict[Path, str]:
    texts = {}
    for path in tracked_files():
        if path.suffix in suffixes:
            texts[path] = path.read_text(encoding="utf-8")
    return texts


PYTHON = text_files(".py")
TEXT = text_files(".py", ".md", ".rst", ".toml", ".yaml", ".yml", ".json", ".html", ".txt", ".cfg")


def with_languages(*entries: str) -> dict[str, object]:
    table = "\n".join(f"[[tool.ptnotes.languages]]\n{entry}\n" for entry in entries)
    text = f"""
[project]
dependencies = ["torch>=2.4"]

[tool.ptnotes]
torch = "torch==2.13.0"
doctest-targets = ["docs"]
sphinx-flags = ["-W"]

{table}
"""
    return tomllib.loads(text)


# -- the table itself ----------------------------------------------------------------------


def test_repository_settings_name_the_two_editions() -> None:
    assert SETTINGS.language_codes == ("en", "zh_CN")
    assert SETTINGS.source_language.code == "en"
    assert SETTINGS.language("zh_CN").html_lang == "zh-CN"


def test_supported_torch_range_is_the_package_requirement() -> None:
    assert f"torch{SETTINGS.torch_range}" in PYPROJECT["project"]["dependencies"]


def test_a_third_language_is_one_entry_in_the_table(tmp_path: Path) -> None:
    data = with_languages(
        'code = "en"\nname = "English"',
        'code = "zh_CN"\nname = "简体中文"\nbrowser = "^zh"',
        'code = "ja"\nname = "日本語"\nbrowser = "^ja"',
    )
    added = project_settings.parse(data, tmp_path)

    assert added.language_codes == ("en", "zh_CN", "ja")
    assert [entry["version"] for entry in switcher_entries(added)] == ["en", "zh_CN", "ja"]
    assert {"name": "日本語", "version": "ja", "url": "/ja/"} in switcher_entries(added)
    page = root_page(added)
    assert 'href="ja/index.html" hreflang="ja">日本語</a>' in page
    assert '{"code": "ja", "browser": "^ja"}' in page
    assert 'window.location.replace("en/index.html")' in page


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ((), "at least one language"),
        (('code = "en"\nname = "English"', 'code = "en"\nname = "Again"'), "duplicate"),
        (('code = "english"\nname = "English"',), "code must look like"),
        (('code = "en"',), "needs a name"),
        (('code = "en"\nname = "English"\ncolour = "red"',), "unknown key"),
    ],
)
def test_bad_language_table_is_rejected(entries: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        project_settings.parse(with_languages(*entries), Path())


def test_missing_table_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"no \[tool.ptnotes\] table"):
        project_settings.parse({"project": {}}, Path())


# -- one source for each fact --------------------------------------------------------------


#: This file writes settings tables of its own as test input.
HERE = Path(__file__).resolve().relative_to(ROOT).as_posix()


def copies(pattern: str, allowed: set[str], texts: dict[Path, str] = TEXT) -> list[str]:
    regex = re.compile(pattern)
    found = []
    for path, text in texts.items():
        relative = path.relative_to(ROOT).as_posix()
        # recorded data (the matrix's results, recorded index listings) is not a setting
        if relative in allowed | {HERE} or relative.startswith(("docs/_data/", "tests/data/")):
            continue
        found += [f"{relative}: {m.group(0)!r}" for m in regex.finditer(text)]
    return found


def test_torch_pin_is_written_once() -> None:
    version = re.escape(SETTINGS.torch.split("==")[-1])
    assert copies(rf"torch=={version}|{version}\+cpu", {"pyproject.toml"}) == []


def test_languages_are_listed_once() -> None:
    codes = SETTINGS.language_codes
    listing = r"""["']{}["']\s*,\s*["']{}["']""".format(*map(re.escape, codes[:2]))
    assert copies(listing, {"pyproject.toml"}) == []
    assert not (ROOT / "docs" / "_static" / "switcher.json").exists()
    assert not (ROOT / "docs" / "_root").exists()


def test_sphinx_flags_are_listed_once() -> None:
    assert copies(r"""["']--keep-going["']""", {"pyproject.toml"}, PYTHON) == []


def test_doctest_targets_are_listed_once() -> None:
    targets = r"""["']README\.md["']\s*,\s*["']docs["']"""
    assert copies(targets, {"pyproject.toml"}, PYTHON) == []


def test_version_is_written_once() -> None:
    assert "version" not in PYPROJECT["project"]
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert copies(r"__version__\s*=", {"src/ptnotes/__init__.py"}, PYTHON) == []


# -- the machinery is imported, not reached by path -------------------------------------------


def test_no_sys_path_manipulation() -> None:
    places = ("docs/", "tests/", "benchmarks/", "tools/", "noxfile.py", "conftest.py")
    found = [
        path.relative_to(ROOT).as_posix()
        for path, text in PYTHON.items()
        if path.relative_to(ROOT).as_posix().startswith(places)
        and "sys.path" in text
        and path != Path(__file__)
    ]
    assert found == []


def private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno} {alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and alias.name != "__future__"
            ]
    return found


def test_no_module_imports_a_private_name() -> None:
    found = [problem for path in PYTHON for problem in private_imports(path)]
    assert found == []
