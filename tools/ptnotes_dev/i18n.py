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
        return re.compile(rf"(?<![\w-]){words}(?:s|es)?(?![\w-])", re.IGNORECASE)


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
                if term.pattern.search(prose) and term.chinese not in msgstr:
                    rel = path.relative_to(locale_dir)
                    problems.append(
                        f"{rel}: {term.english!r} should be {term.chinese!r} in: {msgstr[:80]}"
                    )
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


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "sync":
        print("usage: python -m ptnotes_dev.i18n sync <gettext output dir>", file=sys.stderr)
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
