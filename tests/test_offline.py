"""The zip of an edition (``ptnotes_dev.sphinx.offline.write_archive``), on a small folder.

``nox -s offline`` checks the real copies (tests/site/test_offline.py); these tests need no
build: they check what the archive holds and that its home page's links work inside it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from ptnotes_dev.sphinx.offline import main, write_archive

HOME = (
    '<p><a class="ptnotes-offline reference external" href="_offline/ptnotes-en.zip">the whole'
    ' edition</a> (ptnotes-en.zip), <a class="ptnotes-offline reference external"'
    ' href="_offline/ptnotes-en.pdf">a PDF</a> (ptnotes-en.pdf)</p>'
)


def _edition(root: Path) -> Path:
    edition = root / "en"
    (edition / "_offline").mkdir(parents=True)
    (edition / "index.html").write_text(HOME, encoding="utf-8")
    (edition / "autograd").mkdir()
    (edition / "autograd" / "inplace.html").write_text("<p>page</p>", encoding="utf-8")
    (edition / "_offline" / "ptnotes-en.pdf").write_bytes(b"%PDF-1.5")
    return edition


def test_the_archive_holds_the_edition_and_the_other_copies(tmp_path: Path) -> None:
    edition = _edition(tmp_path)
    (edition / "_offline" / "ptnotes-en.zip").write_bytes(b"an older archive")
    archive = write_archive(edition, "en")
    with zipfile.ZipFile(archive) as opened:
        names = sorted(opened.namelist())
        home = opened.read("ptnotes-en/index.html").decode()
    assert names == [
        "ptnotes-en/_offline/ptnotes-en.pdf",
        "ptnotes-en/autograd/inplace.html",
        "ptnotes-en/index.html",
    ]
    # Its own link is text inside it (an archive cannot hold itself); the PDF's still works.
    assert "<span>the whole edition</span> (ptnotes-en.zip)" in home
    assert 'href="_offline/ptnotes-en.pdf"' in home
    assert 'ptnotes-en.zip"' not in home
    # The site's own home page keeps its link.
    assert 'href="_offline/ptnotes-en.zip"' in (edition / "index.html").read_text()
    assert [p.name for p in (edition / "_offline").iterdir() if p.name.startswith(".")] == []


def test_a_failed_archive_leaves_the_previous_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edition = _edition(tmp_path)
    previous = edition / "_offline" / "ptnotes-en.zip"
    previous.write_bytes(b"the previous archive")

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(zipfile.ZipFile, "write", fail)
    with pytest.raises(OSError, match="disk full"):
        write_archive(edition, "en")
    assert previous.read_bytes() == b"the previous archive"
    assert sorted(p.name for p in previous.parent.iterdir()) == ["ptnotes-en.pdf", "ptnotes-en.zip"]


def test_the_command_refuses_a_folder_without_an_edition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        main([str(tmp_path), "en"])
    assert raised.value.code == 2
    assert "holds no built edition (no index.html)" in capsys.readouterr().err
