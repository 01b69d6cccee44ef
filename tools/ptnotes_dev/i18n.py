"""Checks that keep the translated editions complete and consistent with the English source.

Used two ways:

* by ``tests/test_translations.py`` (part of ``nox -s tests``) on the committed catalogs;
* as a command by ``nox -s docs``, after the English build, to fail when the source has
  messages the catalogs of a language lack: ``python -m ptnotes_dev.i18n sync build/gettext``.

The languages are the translations of ``[tool.ptnotes] languages``; a catalog folder is
``docs/locales/<code>/LC_MESSAGES``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

from ptnotes_dev.settings import load

ROOT = load().root
DOCS = ROOT / "docs"
GLOSSARY_SOURCE = DOCS / "glossary.md"


def locale_dir(language: str) -> Path:
    """The catalog folder of one translated edition."""
    return DOCS / "locales" / language / "LC_MESSAGES"


#: The catalogs of the first translated edition (zh_CN), the default of the checks below.
LOCALE = locale_dir(load().translations[0].code)


def read_catalog(path: Path) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle, abort_invalid=True)


def catalogs(locale_dir: Path = LOCALE) -> Iterator[tuple[Path, Catalog]]:
    for path in sorted(locale_dir.rglob("*.po")):
        yield path, read_catalog(path)


def messages(catalog: Catalog) -> Iterator[tuple[str, str, bool]]:
    """(msgid, msgstr, fuzzy) for every real message of a catalog (header excluded)."""
    for message in catalog:
        if not message.id:
            continue
        msgid = message.id if isinstance(message.id, str) else str(message.id[0])
        string = message.string
        msgstr = string if isinstance(string, str) else str(string[0]) if string else ""
        yield msgid, msgstr or "", message.fuzzy


def untranslated(catalog: Catalog) -> list[str]:
    return [msgid for msgid, msgstr, _ in messages(catalog) if not msgstr.strip()]


def fuzzy(catalog: Catalog) -> list[str]:
    return [msgid for msgid, _, is_fuzzy in messages(catalog) if is_fuzzy]


def source_documents() -> list[str]:
    """Docnames of the English pages and gallery scripts that need a zh twin."""
    names = [
        p.relative_to(DOCS).with_suffix("").as_posix()
        for p in [*DOCS.rglob("*.md"), *DOCS.rglob("*.rst")]
        if not any(
            part.startswith(("_", ".")) or part in {"locales", "auto_examples"}
            for part in p.relative_to(DOCS).parts
        )
    ]
    gallery = ROOT / "gallery"
    names += [f"auto_examples/{p.stem}" for p in gallery.glob("plot_*.py")]
    names.append("auto_examples/index")
    return sorted(names)


# -- glossary -------------------------------------------------------------------------

_CODE = re.compile(r"``.*?``|`[^`]*`|\{[a-z:]+\}`[^`]*`")


@dataclass(frozen=True)
class Term:
    english: str
    chinese: str

    @property
    def pattern(self) -> re.Pattern[str]:
        words = r"\s+".join(re.escape(w) for w in self.english.split())
        unless = NOT_THE_TERM.get(self.english, "")
        return re.compile(rf"(?<![\w-]){words}(?:s|es)?(?![\w-]){unless}", re.IGNORECASE)


#: Phrases that contain a term's words without meaning the term: "in place of" is "instead of".
NOT_THE_TERM = {"in place": r"(?!\s+of\b)"}


def glossary_terms(locale_dir: Path = LOCALE) -> list[Term]:
    """The glossary's terms, each with the Chinese the zh glossary page gives it."""
    english: list[str] = []
    inside = False
    for line in GLOSSARY_SOURCE.read_text(encoding="utf-8").splitlines():
        if line.startswith("```{glossary}"):
            inside = True
        elif inside and line.startswith("```"):
            inside = False
        elif inside and line and not line[0].isspace():
            english.append(line.strip())
    catalog = {m: s for m, s, _ in messages(read_catalog(locale_dir / "glossary.po"))}
    # The zh glossary writes each term as "中文" + FULLWIDTH "(" + "English" + ")": the part
    # before the fullwidth parenthesis is the Chinese term.
    return [Term(term, catalog.get(term, "").split("\uff08")[0].strip()) for term in english]


#: Terms that are also the name of a method a translation keeps in English: "a hand-written
#: backward" names ``Function.backward``, and the Chinese may write ``backward`` there.
IDENTIFIER_TERMS = frozenset({"backward"})

#: The stem a term takes in compounds: "backward node", "backward formula" and "full backward
#: hook" are 反向节点, 反向公式 and 完整反向钩子, not 反向传播节点.
COMPOUND_STEMS = {"backward": "反向", "hook": "钩"}


def glossary_violations(locale_dir: Path = LOCALE) -> list[str]:
    """Messages that use a glossary term in English but not the glossary's Chinese term."""
    terms = [t for t in glossary_terms(locale_dir) if t.chinese]
    problems = []
    for path, catalog in catalogs(locale_dir):
        for msgid, msgstr, _ in messages(catalog):
            if not msgstr or msgid in {t.english for t in terms}:
                continue
            prose = _CODE.sub(" ", msgid)
            for term in terms:
                stem = COMPOUND_STEMS.get(term.english)
                kept = (term.english in IDENTIFIER_TERMS and term.pattern.search(msgstr)) or (
                    stem is not None and stem in msgstr
                )
                if term.pattern.search(prose) and term.chinese not in msgstr and not kept:
                    rel = path.relative_to(locale_dir)
                    problems.append(
                        f"{rel}: {term.english!r} should be {term.chinese!r} in: {msgstr[:80]}"
                    )
    return problems


# -- spacing --------------------------------------------------------------------------

#: A space between two Chinese characters (ideographs or fullwidth punctuation): Chinese is
#: written without spaces, so one there is left over from a substituted term
#: ("通过 自动求导 一无所知"). Spaces between Chinese and Latin text or code are the convention.
_CJK = (
    r"\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
)
STRAY_SPACE = re.compile(rf"[{_CJK}][ \t]+[{_CJK}]")


def stray_spaces(locale_dir: Path = LOCALE) -> list[str]:
    """Translations with a space between two Chinese characters, each with its context."""
    problems = []
    for path, catalog in catalogs(locale_dir):
        for _msgid, msgstr, _ in messages(catalog):
            for match in STRAY_SPACE.finditer(msgstr):
                start = max(match.start() - 4, 0)
                context = msgstr[start : match.end() + 4]
                problems.append(f"{path.relative_to(locale_dir)}: {context!r}")
    return problems


# -- sync with the source -----------------------------------------------------------


def missing_messages(pot_dir: Path, locale_dir: Path = LOCALE) -> list[str]:
    """Messages of the freshly extracted templates that the catalogs lack."""
    problems = []
    for pot in sorted(pot_dir.rglob("*.pot")):
        rel = pot.relative_to(pot_dir).with_suffix(".po")
        po = locale_dir / rel
        wanted = {m for m, _, _ in messages(read_catalog(pot))}
        if not po.exists():
            problems.append(f"{rel}: no catalog ({len(wanted)} messages); run `nox -s i18n`")
            continue
        have = {m for m, s, f in messages(read_catalog(po)) if s and not f}
        for msgid in sorted(wanted - have):
            problems.append(f"{rel}: not translated: {msgid[:100]!r}")
    return problems


def update_pages(pages: list[str]) -> int:
    """Refresh the catalogs of ``pages`` only (``docs/autograd/inplace.md`` …), leaving the
    others alone: several people translate at once, and ``nox -s i18n`` rewrites them all.

    The messages are extracted by Sphinx's gettext builder from a copy of ``docs/`` under
    ``build/i18n-pages/`` (the gallery is not executed and ``docs/auto_examples`` is not
    touched), then merged into each page's catalog with ``sphinx-intl update``.
    """
    import hashlib
    import shutil
    import subprocess

    names: list[Path] = []
    for page in pages:
        path = Path(page).resolve()
        try:
            relative = path.relative_to(DOCS)
        except ValueError:
            print(f"not a page under {DOCS}: {page}", file=sys.stderr)
            return 2
        if path.suffix not in {".md", ".rst"} or not path.is_file():
            print(f"not a page (.md or .rst): {page}", file=sys.stderr)
            return 2
        names.append(relative)
    key = hashlib.sha256(" ".join(sorted(map(str, names))).encode()).hexdigest()[:12]
    work = ROOT / "build" / "i18n-pages" / key
    (work / "docs").mkdir(parents=True, exist_ok=True)
    for entry in ("pyproject.toml", "gallery", "src", "tools", "README.md"):
        link = work / entry
        if not link.exists():
            link.symlink_to(ROOT / entry)
    # copy2 keeps modification times: Sphinx re-reads only what changed since the last run.
    shutil.copytree(DOCS, work / "docs", dirs_exist_ok=True, copy_function=shutil.copy2)
    out = work / "gettext"
    shutil.rmtree(out, ignore_errors=True)
    build = [
        sys.executable, "-m", "sphinx", "-b", "gettext", "-q", "-D", "plot_gallery=0",
        "-d", str(work / "doctrees"), str(work / "docs"), str(out),
        *(str(work / "docs" / name) for name in names),
    ]  # fmt: skip
    if subprocess.run(build, check=False).returncode:
        return 1
    wanted = work / "pots"
    shutil.rmtree(wanted, ignore_errors=True)
    for name in names:
        pot = out / name.with_suffix(".pot")
        if not pot.exists():
            print(f"{name}: no messages extracted", file=sys.stderr)
            return 1
        (wanted / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(pot, wanted / name.with_suffix(".pot"))
    languages = [arg for language in load().translations for arg in ("-l", language.code)]
    update = [
        sys.executable, "-m", "sphinx_intl", "update", "-p", str(wanted),
        "-d", str(DOCS / "locales"), *languages, "-w", "0",
    ]  # fmt: skip
    return subprocess.run(update, check=False).returncode


def interview_translations(locale_dir: Path = LOCALE) -> dict[str, str]:
    """What the interview index's catalog must say: each page's title and answer, as that
    page's own catalog translates them (the index only gathers them; a second translation
    could drift from the page's).

    Keys are the index's msgids (answers with their release roles pointed at their page).
    """
    from ptnotes_dev.sphinx.interview import question_and_answer, toctree_entries
    from ptnotes_dev.sphinx.matrix import qualified

    wanted: dict[str, str] = {}
    interview = (DOCS / "interview.md").read_text(encoding="utf-8")
    for section in re.findall(r"^:section:\s*(\S+)", interview, re.MULTILINE):
        for entry in toctree_entries(DOCS / section / "index.md"):
            page = f"{section}/{entry}"
            catalog_path = locale_dir / f"{page}.po"
            if not catalog_path.exists():
                continue
            translated = {m: s for m, s, f in messages(read_catalog(catalog_path)) if not f}
            question, answer = question_and_answer(DOCS / f"{page}.md")
            wanted[question] = translated.get(question, "")
            wanted[qualified(answer, page)] = qualified(translated.get(answer, ""), page)
    return wanted


def interview_drift(locale_dir: Path = LOCALE) -> list[str]:
    """Entries of the interview index's catalog that differ from their page's translation."""
    index = {m: s for m, s, _ in messages(read_catalog(locale_dir / "interview.po"))}
    return [
        f"interview.po: {msgid[:70]!r} differs from its page's catalog"
        for msgid, msgstr in interview_translations(locale_dir).items()
        if msgid in index and index[msgid] != msgstr
    ]


def sync_interview(locale_dir: Path = LOCALE) -> int:
    """Copy each answer's translation from its page's catalog into the index's catalog."""
    from babel.messages.pofile import write_po

    path = locale_dir / "interview.po"
    catalog = read_catalog(path)
    wanted = interview_translations(locale_dir)
    changed = 0
    for message in catalog:
        msgid = message.id if isinstance(message.id, str) else ""
        if msgid in wanted and wanted[msgid] and (message.string != wanted[msgid] or message.fuzzy):
            message.string = wanted[msgid]
            message.flags.discard("fuzzy")
            message.previous_id = []
            changed += 1
    with path.open("wb") as handle:
        write_po(handle, catalog, width=0, ignore_obsolete=True)
    print(f"interview.po: {changed} entr{'y' if changed == 1 else 'ies'} copied from the pages")
    return 0


USAGE = (
    "usage: python -m ptnotes_dev.i18n sync <gettext output dir>\n"
    "       python -m ptnotes_dev.i18n update <page.md> [<page.md> ...]\n"
    "       python -m ptnotes_dev.i18n interview"
)


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "update":
        return update_pages(argv[1:])
    if argv == ["interview"]:
        return sync_interview()
    if len(argv) != 2 or argv[0] != "sync":
        print(USAGE, file=sys.stderr)
        return 2
    status = 0
    for language in load().translations:
        problems = missing_messages(Path(argv[1]), locale_dir(language.code))
        for problem in problems:
            print(f"{language.code}: {problem}", file=sys.stderr)
        if problems:
            print(
                f"{len(problems)} message(s) of the English source are missing from the "
                f"{language.code} catalogs: run `nox -s i18n`, translate, and rebuild.",
                file=sys.stderr,
            )
            status = 1
        else:
            print(f"{language.code} catalogs are in sync with the English source")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
