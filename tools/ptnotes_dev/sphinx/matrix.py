"""What the release matrix verified, on the site: page stamps, the compatibility page, ledger dates.

Reads the matrix's data file (``ptnotes_matrix_file``, written by ``nox -s matrix``) and the
examples the doctest sessions collect today (:func:`ptnotes_dev.matrix.current_examples`):

* **a stamp under every page title** (pages with examples): the releases (and devices) on
  which all of the page's examples passed, and the date of the last run; examples edited
  after that run are stamped with the torch that CI checks them on (``[tool.ptnotes]
  torch``) until the matrix runs again;
* ``{matrix-compatibility}``: pages by releases, and every example whose outcome differs
  between releases, with the release from which the current output holds and the output of
  the releases where it does not;
* :func:`since_sentence`: the release from which all examples of a labelled section pass (the
  claims ledger dates its "changed" claims with it);
* releases named in prose: ``{torch-since}`PyTorch 2.6 <label>``` shows its text and warns
  when the examples under the target ``(label)=`` (a section or a code block) do not show
  today's behaviour from that release on; ``{torch-span}`label``` writes the releases on which
  those examples pass. ``tests/test_versions.py`` requires every release of the range named
  in prose to go through them.

Every sentence this extension writes comes from its own message catalog
(``locales/<language>/LC_MESSAGES/ptnotes_dev.po`` under the source folder), compiled at
start-up, so each edition reads it in its language. Numbers and releases are data.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import NoUri
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.docutils import ReferenceRole, SphinxDirective

from ptnotes_dev import matrix as data_model
from ptnotes_dev.doctesting import SKIP_REASON
from ptnotes_dev.settings import load

CATALOG = "ptnotes_dev"
logger = logging.getLogger(__name__)
_translate = get_translation(CATALOG)


def _(message: str) -> str:
    """``message`` in the language of the edition being built."""
    return str(_translate(message))


#: Every message this extension writes (a test checks that each catalog translates them all).
MESSAGES = (
    "Verified by the release matrix:",
    "all {count} examples pass on torch {releases}",
    "on {devices}",
    "last run {date}",
    "1 of {count} examples differs on torch {releases}: see its note below",
    "{failed} of {count} examples differ on torch {releases}: see their notes below",
    "{count} example(s) changed since the last matrix run: checked by CI on {torch} until the "
    "matrix runs again",
    "see the compatibility page",
    "Page",
    "Examples",
    "Example",
    "Holds from",
    "Does not hold on",
    "Output on {release}",
    "Line {line}: holds from torch {since}; differs on {releases}",
    "Line {line}: does not hold on the newest release; differs on {releases}",
    "not on the newest release",
    "No example differs between releases.",
    "Today's behaviour since torch {release} (matrix).",
    "Today's behaviour already on torch {release}, the oldest release the matrix runs.",
    "Not yet checked by the release matrix.",
    "{count} CUDA-only example(s) not yet run on a GPU",
    "Generated from the release matrix: the releases on which these examples pass.",
)

PASS, FAIL, NONE = "\u2713", "\u2717", "\u2013"


def _para(text: str) -> nodes.paragraph:
    """A paragraph of generated text: already in the edition's language, never extracted
    into the page's catalog (it changes with every matrix run)."""
    paragraph = nodes.paragraph("", text)
    paragraph["translatable"] = False
    return paragraph


@cache
def _loaded(
    data_file: str, root: str
) -> tuple[dict[str, Any], dict[str, list[str]], dict[str, int]]:
    path = Path(data_file)
    data = data_model.load_data(path)
    keys: dict[str, list[str]] = {}
    lines: dict[str, int] = {}
    for example in data_model.current_examples(load(Path(root))):
        keys.setdefault(example.doc, []).append(example.key)
        lines[example.key] = example.line
    return data, keys, lines


def matrix_data(app: Sphinx) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The data file and the keys of today's examples per file (read once per build)."""
    data, keys, _lines = _current(app)
    return data, keys


def _current(app: Sphinx) -> tuple[dict[str, Any], dict[str, list[str]], dict[str, int]]:
    root = Path(app.srcdir).parent
    return _loaded(str(Path(app.srcdir) / app.config.ptnotes_matrix_file), str(root))


def release_span(columns: Sequence[str], all_columns: Sequence[str]) -> str:
    """First and last column joined by an en dash for a run of consecutive columns.

    Any other set of columns is written as a comma-separated list.
    """
    if not columns:
        return NONE
    indices = [all_columns.index(c) for c in columns]
    if len(columns) > 2 and indices == list(range(indices[0], indices[0] + len(indices))):
        return f"{columns[0]} \u2013 {columns[-1]}"
    return ", ".join(columns)


def stamp_text(app: Sphinx, doc: str) -> str | None:
    """The stamp of one source file, or None when it has no example."""
    data, keys = matrix_data(app)
    page_keys = keys.get(doc, [])
    if not page_keys:
        return None
    cpu = data_model.cpu_columns(data)
    status = data_model.page_status(data, page_keys, cpu)
    parts = [_("Verified by the release matrix:")]
    if status.passed_on:
        text = _("all {count} examples pass on torch {releases}").format(
            count=len(data_model.passing(data, page_keys, status.passed_on)),
            releases=release_span(list(status.passed_on), cpu),
        )
        devices = data_model.device_columns(data)
        passing_devices = [
            d for d in devices if d in data_model.page_status(data, page_keys, devices).passed_on
        ]
        if passing_devices:
            text += " " + _("on {devices}").format(devices=", ".join(passing_devices))
        parts.append(text)
    if status.failed_on:
        # How many examples differ, not "fails": most of a page holds on those releases too,
        # and each example that differs has its own note under the stamp.
        failed = sum(
            any(data_model.outcome(data, key, c) == "failed" for c in cpu) for key in page_keys
        )
        message = (
            _("1 of {count} examples differs on torch {releases}: see its note below")
            if failed == 1
            else _("{failed} of {count} examples differ on torch {releases}: see their notes below")
        )
        parts.append(
            message.format(
                failed=failed,
                count=len(page_keys),
                releases=release_span(list(status.failed_on), cpu),
            )
        )
    cuda_only = cuda_examples(data, page_keys)
    if cuda_only:
        parts.append(_("{count} CUDA-only example(s) not yet run on a GPU").format(count=cuda_only))
    dates = sorted({data["runs"][c].get("date", "") for c in status.ran_on} - {""})
    if dates:
        parts.append(_("last run {date}").format(date=dates[-1]))
    if status.unrecorded:
        torch = load(Path(app.srcdir).parent).torch
        parts.append(
            _(
                "{count} example(s) changed since the last matrix run: checked by CI on {torch} "
                "until the matrix runs again"
            ).format(count=status.unrecorded, torch=torch)
        )
    return " ".join(parts[:1]) + " " + "; ".join(parts[1:]) + "."


def cuda_examples(data: dict[str, Any], keys: Sequence[str]) -> int:
    """How many of ``keys`` the CPU runs skip for want of CUDA and no GPU run has passed."""
    cpu = data_model.cpu_columns(data)
    devices = data_model.device_columns(data)
    count = 0
    for key in keys:
        results = data.get("examples", {}).get(key, {}).get("results", {})
        newest = results.get(cpu[-1], {}) if cpu else {}
        if SKIP_REASON in str(newest.get("reason", "")) and not any(
            data_model.outcome(data, key, d) == "passed" for d in devices
        ):
            count += 1
    return count


def _add_stamp(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    source = Path(app.env.doc2path(docname))
    try:
        doc = source.relative_to(Path(app.srcdir).parent).as_posix()
    except ValueError:
        return
    modules = app.config.ptnotes_matrix_api_pages
    if docname.startswith(modules[0]) and source.suffix == ".rst":
        # An API page shows one module's docstrings: the module's examples are its examples.
        doc = modules[1].format(name=docname.removeprefix(modules[0]))
    text = stamp_text(app, doc)
    section = next(iter(doctree.findall(nodes.section)), None)
    if text is None or section is None:
        return
    paragraph = _para("")
    paragraph += nodes.Text(text)
    stamp = nodes.container("", paragraph, classes=["ptnotes-stamp"])
    data, keys = matrix_data(app)
    status = data_model.page_status(data, keys.get(doc, []), data_model.cpu_columns(data))
    if status.failed_on:
        ref: nodes.Node = nodes.reference("", _("see the compatibility page"), internal=True)
        try:
            ref["refuri"] = app.builder.get_relative_uri(docname, app.config.ptnotes_matrix_page)
        except NoUri:  # the LaTeX builder knows no URIs while reading: the words alone
            ref = nodes.Text(_("see the compatibility page"))
        paragraph += [nodes.Text(" ("), ref, nodes.Text(")")]
        lines = _current(app)[2]
        html_page = app.builder.format == "html"
        columns = data_model.cpu_columns(data)
        stamp += version_notes(data, keys.get(doc, []), columns, lines, collapsed=html_page)
    section.insert(1, stamp)
    app.env.note_dependency(str(Path(app.srcdir) / app.config.ptnotes_matrix_file))


def version_notes(
    data: dict[str, Any],
    keys: Sequence[str],
    columns: Sequence[str],
    lines: dict[str, int],
    collapsed: bool = True,
) -> list[nodes.Node]:
    """A note per example of the page that fails on some releases: from which release on the
    page's output holds, and what the newest failing release printed. ``collapsed``: inside
    an HTML ``<details>`` element; else (the PDF) printed open, its summary a paragraph."""
    notes: list[nodes.Node] = []
    for key in keys:
        failing = [c for c in columns if data_model.outcome(data, key, c) == "failed"]
        if not failing:
            continue
        line = lines.get(key, data["examples"][key]["line"])
        since = data_model.holds_since(data, [key], columns)
        span = release_span(failing, columns)
        if since:
            summary = _("Line {line}: holds from torch {since}; differs on {releases}").format(
                line=line, since=since, releases=span
            )
        else:
            summary = _(
                "Line {line}: does not hold on the newest release; differs on {releases}"
            ).format(line=line, releases=span)
        printed = data_model.failure_output(data, key, failing[-1])
        block = nodes.literal_block("", failure_excerpt(printed))
        block["language"] = "text"
        output = [_para(_("Output on {release}").format(release=failing[-1])), block]
        if collapsed:
            opening = f"<details><summary>{html.escape(summary)}</summary>"
            notes += [nodes.raw("", opening, format="html"), *output]
            notes.append(nodes.raw("", "</details>", format="html"))
        else:
            notes += [_para(summary), *output]
    return notes


# -- the compatibility page -----------------------------------------------------------------


def _table(header: Sequence[str], rows: Sequence[Sequence[nodes.Node | str]]) -> nodes.table:
    table = nodes.table(classes=["ptnotes-matrix"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for _column in header:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    head += nodes.row("", *(nodes.entry("", _para(h)) for h in header))
    body = nodes.tbody()
    group += body
    for row in rows:
        cells = []
        for cell in row:
            content = cell if isinstance(cell, nodes.Node) else _para(cell)
            cells.append(nodes.entry("", content))
        body += nodes.row("", *cells)
    return table


class MatrixCompatibility(SphinxDirective):
    """Pages by releases, then every example whose outcome differs between releases."""

    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        data, keys, lines = _current(self.env.app)
        self.env.note_dependency(str(Path(self.env.srcdir) / self.config.ptnotes_matrix_file))
        root = Path(self.env.srcdir).parent
        for doc in keys:  # the lines it shows move when a page is edited
            self.env.note_dependency(str(root / doc))
        columns = data_model.cpu_columns(data) + data_model.device_columns(data)
        rows: list[list[nodes.Node | str]] = []
        for doc in sorted(keys):
            status = data_model.page_status(data, keys[doc], columns)
            marks = [
                PASS if c in status.passed_on else FAIL if c in status.failed_on else NONE
                for c in columns
            ]
            rows.append([nodes.literal("", doc), str(len(keys[doc])), *marks])
        result: list[nodes.Node] = [_table([_("Page"), _("Examples"), *columns], rows)]
        differing = []
        for doc in sorted(keys):
            for key in keys[doc]:
                failing = [c for c in columns if data_model.outcome(data, key, c) == "failed"]
                if failing:
                    differing.append((doc, key, failing))
        if not differing:
            result.append(_para(_("No example differs between releases.")))
            return result
        # A table cell cannot break across pages in LaTeX: the PDF lists them one by one.
        listed = self.env.app.builder.format != "html"
        detail_rows: list[list[nodes.Node | str]] = []
        for doc, key, failing in differing:
            line = lines[key]
            since = data_model.holds_since(data, [key], data_model.cpu_columns(data))
            output = data_model.failure_output(data, key, failing[-1])
            block = nodes.literal_block("", failure_excerpt(output))
            block["language"] = "text"
            detail = nodes.container(
                "",
                _para(_("Output on {release}").format(release=failing[-1])),
                block,
            )
            cells = [
                nodes.literal("", f"{doc}:{line}"),
                since or _("not on the newest release"),
                release_span(failing, columns),
                detail,
            ]
            if listed:
                heading = nodes.paragraph("", "", nodes.strong("", "", cells[0]))
                heading["translatable"] = False
                for name, value in ((_("Holds from"), cells[1]), (_("Does not hold on"), cells[2])):
                    heading += nodes.Text(f" \N{EM DASH} {name}: {value}")
                result += [heading, *detail.children]
            else:
                detail_rows.append(cells)
        if not listed:
            header = [_("Example"), _("Holds from"), _("Does not hold on"), ""]
            result.append(_table(header, detail_rows))
        return result


_INSTALLED = re.compile(r"(?:/[^\s\"'<>]+)?/lib/python3\.\d+/(?:site-packages/)?")
_EXCEPTION = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit)(?::|$)")
_CHECKOUT = re.compile(r"(?<=<doctest )/\S*?/(?=(?:docs|src)/|README)")


def failure_excerpt(report: str, limit: int = 1200) -> str:
    """The Expected/Got part of a doctest failure report, shortened: an exception as its last
    line (the traceback's frames name the machine's folders), files by their path inside the
    environment (``torch/__init__.py``) or the checkout (``docs/x.md``)."""
    match = re.search(r"Expected:.*", report, re.DOTALL)
    raised = re.search(r"Exception raised:\n(.*)", report, re.DOTALL)
    if match:
        text = match.group(0)
    elif raised:
        lines = [line.strip() for line in raised.group(1).splitlines() if line.strip()]
        lines = [line for line in lines if not line.endswith("SybilFailure")]
        starts = [i for i, line in enumerate(lines) if _EXCEPTION.match(line)]
        shown = lines[starts[-1] :][:4] if starts else lines[-1:]  # its message may be long
        text = "\n    ".join(["Exception raised:", *shown])
    else:
        text = report
    text = _CHECKOUT.sub("", _INSTALLED.sub("", text))
    return text if len(text) <= limit else text[:limit] + "\n..."


def labelled_keys(app: Sphinx, page: str, label: str) -> list[str] | None:
    """The keys of today's examples under the target ``(label)=`` of ``page`` (a docname).

    None when the page has no such target above a heading or a code fence.
    """
    path = Path(app.srcdir) / f"{page}.md"
    if not path.exists():
        return None
    app.env.note_dependency(str(path))  # the page using the label is re-read when it changes
    span = data_model.labelled_lines(path.read_text(encoding="utf-8"), label)
    if span is None:
        return None
    _data, keys, lines = _current(app)
    doc = f"{Path(app.srcdir).name}/{page}.md"
    return [key for key in keys.get(doc, []) if span[0] <= lines[key] <= span[1]]


def since_sentence(app: Sphinx, page: str, label: str) -> str | None:
    """The ledger's sentence dating a changed claim from the matrix data, if it has any.

    ``page`` is the docname (``autograd/inplace``), ``label`` the target of the claim's
    section. None when the section has no example, or one fails on the newest release.
    """
    data = matrix_data(app)[0]
    keys = labelled_keys(app, page, label)
    columns = data_model.cpu_columns(data)
    if not keys or not columns or data_model.holds_since(data, keys, columns) is None:
        return None
    return since_note(data, keys)


# -- releases named in prose ------------------------------------------------------------------


def since_note(data: dict[str, Any], keys: Sequence[str]) -> str:
    """What the data shows of the examples ``keys``, in the edition's language."""
    columns = data_model.cpu_columns(data)
    if not columns or data_model.unrecorded(data, keys):
        return _("Not yet checked by the release matrix.")
    since = data_model.holds_since(data, keys, columns)
    if since is None:
        return _("not on the newest release")
    if since == columns[0]:
        return _(
            "Today's behaviour already on torch {release}, the oldest release the matrix runs."
        ).format(release=since)
    return _("Today's behaviour since torch {release} (matrix).").format(release=since)


def passing_span(data: dict[str, Any], keys: Sequence[str]) -> str | None:
    """The releases on which every example of ``keys`` passes, as a span; None if unrecorded."""
    columns = data_model.cpu_columns(data)
    status = data_model.page_status(data, keys, columns)
    if status.unrecorded or not status.passed_on:
        return None
    return release_span(list(status.passed_on), columns)


ROLE_TARGET = re.compile(r"(\{torch-(?:since|span)\}`(?:[^`<]*<)?)([\w-]+)(>?`)")


def qualified(text: str, docname: str) -> str:
    """``text`` with the targets of its release roles pointing into ``docname``.

    For text written on one page and shown on another (the interview index gathers answers):
    ``<label>`` becomes ``</docname#label>``.
    """
    return ROLE_TARGET.sub(lambda m: f"{m.group(1)}/{docname}#{m.group(2)}{m.group(3)}", text)


class _MatrixRole(ReferenceRole):
    """A role whose text links to the compatibility page, with what the data says as title."""

    def _examples(self) -> list[str] | None:
        page, _hash, label = self.target.rpartition("#")
        keys = labelled_keys(self.env.app, page.lstrip("/") or self.env.docname, label)
        if not keys:
            logger.warning(
                "%s: no example under the target (%s)= (put it above a heading or a code fence)",
                self.name,
                self.target,
                location=self.get_location(),
                type="ptnotes",
                subtype="version",
            )
        return keys

    def _link(self, text: str, note: str) -> list[nodes.Node]:
        self.env.note_dependency(str(Path(self.env.srcdir) / self.config.ptnotes_matrix_file))
        try:
            uri = self.env.app.builder.get_relative_uri(
                self.env.docname, self.config.ptnotes_matrix_page
            )
        except NoUri:  # the LaTeX builder knows no URIs while reading: the words alone
            return [nodes.Text(text)]
        return [
            nodes.reference(
                self.rawtext, text, internal=True, refuri=uri, reftitle=note,
                classes=["ptnotes-release"],
            )
        ]  # fmt: skip


class TorchSince(_MatrixRole):
    """``{torch-since}`PyTorch 2.6 <label>```: a release named in prose, checked by the data.

    The examples under the target ``(label)=`` must show today's behaviour from the named
    release on (on the whole range when the release predates it); otherwise the build warns.
    The text is shown as written, linked to the compatibility page.
    """

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        named = data_model.RELEASE.findall(self.title)
        if len(named) != 1 or not self.has_explicit_title:
            logger.warning(
                "torch-since needs `<text naming one release> <label>`, got %r",
                self.text,
                location=self.get_location(),
                type="ptnotes",
                subtype="version",
            )
            return [nodes.Text(self.title)], []
        keys = self._examples()
        if not keys:
            return [nodes.Text(self.title)], []
        data = matrix_data(self.env.app)[0]
        problem = data_model.since_problem(data, keys, named[0])
        note = since_note(data, keys)
        if problem:
            logger.warning(
                "torch-since %r: %s",
                self.title,
                problem,
                location=self.get_location(),
                type="ptnotes",
                subtype="version",
            )
        return self._link(self.title, note), []


class TorchSpan(_MatrixRole):
    """``{torch-span}`label```: the releases on which the examples under ``(label)=`` pass.

    Written from the data, as the stamps write releases (first and last of a run, joined by an
    en dash). Before the examples have run on the matrix it shows the torch CI runs them on,
    titled "not yet checked".
    """

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        keys = self._examples()
        if not keys:
            return [nodes.Text(self.target)], []
        span = passing_span(matrix_data(self.env.app)[0], keys)
        if span is None:
            pin = load(Path(self.env.srcdir).parent).torch
            return self._link(pin, _("Not yet checked by the release matrix.")), []
        note = _("Generated from the release matrix: the releases on which these examples pass.")
        return self._link(span, note), []


def _compile_catalogs(app: Sphinx) -> Path:
    """Compile this extension's catalog of the edition built into the doctree folder."""
    folder = Path(app.doctreedir) / "ptnotes_dev-locales"
    language = app.config.language or "en"
    po = Path(app.srcdir) / "locales" / language / "LC_MESSAGES" / f"{CATALOG}.po"
    if po.exists():
        target = folder / language / "LC_MESSAGES" / f"{CATALOG}.mo"
        target.parent.mkdir(parents=True, exist_ok=True)
        with po.open("rb") as source:
            catalog = read_po(source)
        with target.open("wb") as out:
            write_mo(out, catalog)
    return folder


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("ptnotes_matrix_file", "_data/matrix.json", "env", types=[str])
    app.add_config_value("ptnotes_matrix_page", "compatibility", "env", types=[str])
    #: API pages (docname prefix) and the source file of their module's docstrings.
    app.add_config_value(
        "ptnotes_matrix_api_pages", ("api/", "src/ptnotes/{name}.py"), "env", types=[tuple]
    )
    app.add_message_catalog(CATALOG, str(_compile_catalogs(app)))
    app.connect("doctree-read", _add_stamp)
    app.add_directive("matrix-compatibility", MatrixCompatibility)
    app.add_role("torch-since", TorchSince())
    app.add_role("torch-span", TorchSpan())
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
