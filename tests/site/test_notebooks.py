"""Every page's notebook runs top to bottom in a real Jupyter kernel and prints what the page says.

The notebooks are written by the docs build (ptnotes_dev.sphinx.notebooks) into each
edition's ``_notebooks/``; run ``nox -s docs`` first. Each code cell keeps the page's expected
output in its metadata, compared here with what the kernel printed under the doctests' checker.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from ptnotes_dev.doctesting import OPTIONFLAGS, DeviceAgnosticChecker

from tests.site.pages import LANGUAGES, default_site_dir

SOURCE, *TRANSLATIONS = LANGUAGES
FOLDER = "_notebooks"  # ptnotes_dev.sphinx.notebooks.FOLDER (this session has no docutils)
SITE = default_site_dir()
NOTEBOOKS = sorted(
    path.relative_to(SITE / SOURCE / FOLDER).as_posix()
    for path in (SITE / SOURCE / FOLDER).rglob("*.ipynb")
)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MODULE = re.compile(r"^(?:[A-Za-z_]\w*\.)+(?=\w+(?::|$))")


def printed(cell: nbformat.NotebookNode) -> tuple[str, list[nbformat.NotebookNode]]:
    """What a cell printed to stdout or displayed, in order, and its error outputs."""
    text, errors = [], []
    for output in cell.get("outputs", []):
        if output.output_type == "stream" and output.name == "stdout":
            text.append(output.text)
        elif output.output_type in {"execute_result", "display_data"}:
            text.append(output.data.get("text/plain", "") + "\n")
        elif output.output_type == "error":
            errors.append(output)
    return "".join(text), errors


@pytest.mark.parametrize("name", NOTEBOOKS or ["<site not built>"])
def test_notebook_runs_and_prints_what_the_page_says(
    site_dir: Path, name: str, tmp_path: Path
) -> None:
    book = nbformat.read(site_dir / SOURCE / FOLDER / name, as_version=4)
    NotebookClient(
        book, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    checked = not_run = 0
    for index, cell in enumerate(book.cells):
        expected = cell.metadata.get("ptnotes") if cell.cell_type == "code" else None
        if expected is None:
            continue
        got, errors = printed(cell)
        where = f"{name}, cell {index}:\n{cell.source}"
        if "not_run" in expected:  # a page's `% notebook-skip:` block, with its reason
            assert expected["not_run"].strip(), where
            assert "skip-execution" in cell.metadata.get("tags", []), where
            not_run += 1
            continue
        import torch

        skipped = (expected["cuda"] and not torch.cuda.is_available()) or (
            "skip_if" in expected and eval(expected["skip_if"], {"torch": torch})
        )
        if skipped:
            assert got.startswith("Skipped:"), where
            assert not errors, where
            continue
        flags = OPTIONFLAGS
        for flag in expected["flags"]:
            flags |= doctest.OPTIONFLAGS_BY_NAME[flag]
        checker = DeviceAgnosticChecker("cpu")
        assert checker.check_output(expected["want"], got, flags), (
            f"{where}\nexpected:\n{expected['want']}\ngot:\n{got}"
        )
        if expected["exception"] is None:
            assert not errors, f"{where}\nunexpected error: {errors[0].ename}: {errors[0].evalue}"
        else:
            assert errors, f"{where}\nexpected {expected['exception']}, nothing was raised"
            raised = _ANSI.sub("", f"{errors[0].ename}: {errors[0].evalue}")
            # The kernel names the exception's class without its module, doctest with it.
            wanted = _MODULE.sub("", expected["exception"])
            assert checker.check_output(wanted + "\n", raised + "\n", flags), (
                f"{where}\nexpected {expected['exception']}\ngot {raised}"
            )
            assert "raises-exception" in cell.metadata.get("tags", [])
        checked += 1
    # A notebook may hold only `notebook-skip` cells, each with its reason (dev/layout's
    # examples read the repository's files); one without any code cell is a defect.
    assert checked > 0 or not_run > 0, f"{name}: no code cell compared or marked not run"


@pytest.mark.parametrize("lang", TRANSLATIONS)
@pytest.mark.parametrize("name", NOTEBOOKS or ["<site not built>"])
def test_translated_notebook_has_the_english_code_cells(
    site_dir: Path, lang: str, name: str
) -> None:
    english = nbformat.read(site_dir / SOURCE / FOLDER / name, as_version=4)
    path = site_dir / lang / FOLDER / name
    assert path.is_file(), f"{lang}: no notebook {name}"
    translated = nbformat.read(path, as_version=4)

    def code(book: nbformat.NotebookNode) -> list[str]:
        # The first code cell holds the notebook settings, with the edition's skip sentence.
        return [c.source for c in book.cells if c.cell_type == "code"][1:]

    assert code(translated) == code(english)
    prose = " ".join(c.source for c in translated.cells if c.cell_type == "markdown")
    assert re.search(r"[\u4e00-\u9fff]", prose), f"{lang}: {name} has no Chinese prose"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_with_examples_links_its_notebook(site_dir: Path, lang: str) -> None:
    """Pages with ``pycon`` blocks, and the API pages with their docstrings' examples."""
    marks = ('class="highlight-pycon', 'class="doctest highlight')
    pages = [
        p
        for p in (site_dir / lang).rglob("*.html")
        if "_offline" not in p.parts and any(m in p.read_text(encoding="utf-8") for m in marks)
    ]
    assert any(p.parent.name == "api" for p in pages)
    for page in pages:
        html = page.read_text(encoding="utf-8")
        if {"auto_examples", "practice"} & set(page.relative_to(site_dir / lang).parts[:1]):
            continue  # the gallery's own notebooks; the practice pages gather other pages' drills
        link = re.search(r'class="ptnotes-notebook" href="([^"]+)"', html)
        assert link, f"{lang}: {page.relative_to(site_dir)} has examples but no notebook link"
        assert (page.parent / link.group(1)).resolve().is_file(), link.group(1)
