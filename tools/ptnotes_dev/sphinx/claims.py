"""The claims ledger: ``docs/claims/*.toml`` rendered as the ledger and errata pages.

Config: ``ptnotes_claims_dir`` (the ledger's folder, relative to the source folder) and
``ptnotes_claim_seeds`` (source note id to its title).

Each entry names a claim made by one of the source notes, the note's own words (``quote``), its
status (:data:`STATUSES`) and the labelled section whose examples verify it; a verdict that
rests on a benchmark names it (``measured``, checked against ``docs/_data/bench.json`` by the
tests). Three directives render the ledger as MyST, so the English text goes through the normal
translation flow; what is data (the quotes, claim ids, counts, measured ratios) is added as
nodes marked not translatable, shown as is in every edition:

``{claims-summary}``
    the statuses, their meaning and the number of claims of each, per note; in HTML each
    status is also a radio button that shows only the ledger rows of that status (CSS only);
``{claims-ledger}`` (option ``:seed:``)
    the claims of one source note as a table, one row per claim (label ``claim-<id>``);
``{claims-errata}`` (option ``:status:``)
    the claims of one status other than ``holds``, with what really happens (label
    ``erratum-<id>``); each links to its ledger row, and each ledger row to its erratum.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

#: Every status a claim can have: (sphinx-design badge colour, meaning). The meanings are
#: rendered on the ledger page by ``{claims-summary}``.
STATUSES: dict[str, tuple[str, str]] = {
    "holds": ("success", "true today, as the note states it."),
    "partly": (
        "info",
        "true at its core, but overstated, incomplete or misleading as the note states it.",
    ),
    "outdated": (
        "warning",
        "true once (in an older torch, or another framework's older release), not today: "
        "the behaviour, the message or the printed output changed.",
    ),
    "discouraged": (
        "secondary",
        "still works as written, but the official documentation recommends something else.",
    ),
    "wrong": ("danger", "never true, in any release."),
    "typo": ("dark", "the note's code or names fail as written; spelled correctly, they work."),
    "unverified": (
        "muted",
        "would need a measurement or a run these pages cannot make (a GPU, another "
        "framework), and no documentation settles it: the verdict is reasoned, not observed.",
    ),
}
#: What a claim that cites a benchmark predicts for the benchmark's ratio (numerator over
#: denominator): clearly below 1, clearly above 1, or within :data:`SAME_WITHIN` of 1.
PREDICTIONS = ("lower", "higher", "same")
SAME_WITHIN = 0.05
FIELDS = ("id", "seed", "claim", "status", "page", "anchor", "quote")
OPTIONAL = ("reality", "measured")
ALL_LABEL = "all"


@dataclass(frozen=True)
class Claim:
    id: str
    seed: str
    claim: str
    status: str
    page: str
    anchor: str
    quote: str
    reality: str = ""
    #: (benchmark id, prediction) pairs, see :data:`PREDICTIONS`.
    measured: tuple[tuple[str, str], ...] = ()
    source: str = ""

    @property
    def ledger_label(self) -> str:
        return f"claim-{self.id}"

    @property
    def erratum_label(self) -> str:
        return f"erratum-{self.id}"


def borne_out(prediction: str, ratio: float) -> bool:
    """Whether a benchmark's ratio shows what a claim predicts (see :data:`PREDICTIONS`)."""
    if prediction == "lower":
        return ratio < 1 - SAME_WITHIN
    if prediction == "higher":
        return ratio > 1 + SAME_WITHIN
    if prediction == "same":
        return abs(ratio - 1) <= SAME_WITHIN
    raise ValueError(f"prediction {prediction!r} not in {PREDICTIONS}")


def _measured(where: str, value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"{where}: 'measured' must map benchmark ids to {PREDICTIONS}")
    bad = {k: v for k, v in value.items() if v not in PREDICTIONS}
    if bad:
        raise ValueError(f"{where}: measured prediction(s) {bad} not in {PREDICTIONS}")
    return tuple((str(k), str(v)) for k, v in value.items())


def load_claims(folder: Path, seeds: Iterable[str]) -> list[Claim]:
    """Read and validate every ledger file of ``folder``; raise ValueError on a bad entry.

    ``seeds`` are the ids of the source notes a claim may name.
    """
    known = sorted(seeds)
    claims: list[Claim] = []
    seen: set[str] = set()
    for path in sorted(folder.glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for index, entry in enumerate(data.get("claim", [])):
            where = f"{path.name}, claim #{index + 1}"
            missing = [f for f in FIELDS if not str(entry.get(f, "")).strip()]
            if missing:
                raise ValueError(f"{where}: missing field(s) {', '.join(missing)}")
            unknown = set(entry) - set(FIELDS) - set(OPTIONAL)
            if unknown:
                raise ValueError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
            status = entry["status"]
            if status not in STATUSES:
                raise ValueError(f"{where}: status {status!r} not in {tuple(STATUSES)}")
            if entry["seed"] not in known:
                raise ValueError(f"{where}: seed {entry['seed']!r} not in {known}")
            if status != "holds" and not str(entry.get("reality", "")).strip():
                raise ValueError(f"{where}: status {status} needs a 'reality' line")
            measured = _measured(where, entry["measured"]) if "measured" in entry else ()
            if measured and status == "unverified":
                raise ValueError(f"{where}: an unverified claim cites no measurement")
            if entry["id"] in seen:
                raise ValueError(f"{where}: duplicate id {entry['id']!r}")
            seen.add(entry["id"])
            fields = {k: v for k, v in entry.items() if k != "measured"}
            claims.append(Claim(**fields, measured=measured, source=path.name))
    return claims


def _cell(text: str) -> str:
    return " ".join(text.split())


def _data(text: str, classes: list[str], *children: nodes.Node) -> nodes.paragraph:
    """A paragraph of data: shown as is in every edition, never extracted for translation."""
    paragraph = nodes.paragraph("", text, *children, classes=classes)
    paragraph["translatable"] = False
    return paragraph


def _quote(claim: Claim) -> nodes.paragraph:
    """The note's own words, in Chinese in both editions (``lang`` from the class)."""
    return _data(f"\u300c{_cell(claim.quote)}\u300d", ["ptnotes-quote", "language-zh-CN"])


def _link(docname: str, label: str, text: str) -> addnodes.pending_xref:
    """A reference to a label, with ``text`` (data) as its visible text."""
    xref = addnodes.pending_xref(
        "",
        nodes.literal(text, text),
        refdomain="std",
        reftype="ref",
        reftarget=label,
        refexplicit=True,
        refwarn=True,
        refdoc=docname,
    )
    return xref


class _ClaimsDirective(SphinxDirective):
    has_content = False

    def claims(self) -> list[Claim]:
        folder = Path(self.env.srcdir) / self.config.ptnotes_claims_dir
        for path in folder.glob("*.toml"):
            self.env.note_dependency(str(path))
        return load_claims(folder, self.config.ptnotes_claim_seeds)

    def render(self, lines: list[str]) -> list[nodes.Node]:
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=self.env.docname), 0, container)
        return list(container.children)

    def label(self, node: nodes.Element, name: str) -> None:
        """Make ``node`` the target of the label ``name`` (for ``{ref}`text <name>```)."""
        node["names"].append(name)
        self.state.document.note_explicit_target(node, node)

    def ratios(self) -> dict[str, float]:
        """The ratio of every benchmark of the bench data file, by id (empty without one)."""
        path = Path(self.env.srcdir) / getattr(self.config, "ptnotes_bench_file", "")
        if not path.is_file():
            return {}
        self.env.note_dependency(str(path))
        data = json.loads(path.read_text(encoding="utf-8"))
        return {
            b["id"]: float(b["ratio"]["value"])
            for b in data.get("benchmarks", [])
            if isinstance(b.get("ratio"), Mapping)
        }


def _mark_badge(paragraph: nodes.Element, status: str) -> None:
    paragraph["classes"] += ["ptnotes-badge", f"ptnotes-badge-{status}"]


def _rows(table: nodes.Node) -> list[nodes.row]:
    return [row for body in table.findall(nodes.tbody) for row in body.children]


def _cells(row: nodes.row) -> list[nodes.entry]:
    return list(row.children)


class ClaimsSummary(_ClaimsDirective):
    """The statuses with their meaning and the number of claims of each, per source note."""

    def run(self) -> list[nodes.Node]:
        claims = self.claims()
        seeds = list(self.config.ptnotes_claim_seeds)
        names = [str(self.config.ptnotes_claim_seeds[s]).split(" \u2014 ")[0] for s in seeds]
        widths = " ".join(["14", "50"] + ["9"] * (len(seeds) + 1))
        lines = [":::{list-table}", ":header-rows: 1", f":widths: {widths}", ""]
        lines += ["* - Status", "  - Meaning"] + [f"  - {name}" for name in names]
        lines += ["  - All"]
        for status, (_, meaning) in STATUSES.items():
            lines += [f"* - {status}", f"  - {meaning}"] + ["  - 0"] * (len(seeds) + 1)
        lines += [f"* - {ALL_LABEL}", "  - every claim, whatever its status."] + ["  - 0"] * (
            len(seeds) + 1
        )
        lines += [":::", ""]
        rendered = self.render(lines)
        table = next(n for node in rendered for n in node.findall(nodes.table))
        table["classes"] += ["ptnotes-claims-summary"]
        for row, status in zip(_rows(table), [*STATUSES, ALL_LABEL], strict=True):
            cells = _cells(row)
            first = next(cells[0].findall(nodes.paragraph))
            _mark_badge(first, status)
            first["classes"].append("ptnotes-filter")
            counts = [
                sum(c.seed == seed and status in (ALL_LABEL, c.status) for c in claims)
                for seed in seeds
            ]
            for cell, count in zip(cells[2:], [*counts, sum(counts)], strict=True):
                cell.children = [_data(str(count), ["ptnotes-count"])]
        return rendered


class ClaimsLedger(_ClaimsDirective):
    """A table of the claims of one source note (``:seed:``), or of all notes."""

    option_spec: ClassVar[dict[str, Any]] = {"seed": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        seed = self.options.get("seed", "").strip("\"' ") or None
        claims = [c for c in self.claims() if seed is None or c.seed == seed]
        if not claims:
            raise self.error(f"the ledger (docs/claims/*.toml) has no claim for seed {seed!r}")
        lines = [":::{list-table}", ":header-rows: 1", ":widths: 58 14 28", ""]
        lines += ["* - Claim", "  - Status", "  - Verified in"]
        for claim in claims:
            lines += [
                f"* - {_cell(claim.claim)}",
                f"  - {claim.status}",
                f"  - {{ref}}`{claim.anchor}`",
            ]
        lines += [":::", ""]
        rendered = self.render(lines)
        table = next(n for node in rendered for n in node.findall(nodes.table))
        table["classes"] += ["ptnotes-ledger"]
        ratios = self.ratios()
        for row, claim in zip(_rows(table), claims, strict=True):
            row["classes"] += ["ptnotes-claim", f"ptnotes-status-{claim.status}"]
            self.label(row, claim.ledger_label)
            text, status, verified = _cells(row)
            text.insert(0, self._id_line(claim))
            text.append(_quote(claim))
            _mark_badge(next(status.findall(nodes.paragraph)), claim.status)
            if claim.measured:
                verified.append(self._measured_line(claim, ratios))
        return rendered

    def _id_line(self, claim: Claim) -> nodes.paragraph:
        """The claim's id; for a claim in the errata, a link to its erratum."""
        if claim.status == "holds":
            return _data("", ["ptnotes-claim-id"], nodes.literal(claim.id, claim.id))
        link = _link(self.env.docname, claim.erratum_label, claim.id)
        return _data("", ["ptnotes-claim-id"], link)

    def _measured_line(self, claim: Claim, ratios: Mapping[str, float]) -> nodes.paragraph:
        """The benchmarks the verdict cites, with their measured ratio (data)."""
        parts: list[nodes.Node] = []
        for bench, _ in claim.measured:
            if parts:
                parts.append(nodes.Text(", "))
            ratio = ratios.get(bench)
            text = bench if ratio is None else f"{bench} \u00d7{ratio:.2f}"
            parts.append(_link(self.env.docname, "bench-details", text))
        return _data("", ["ptnotes-measured"], nodes.Text("\u23f1 "), *parts)


class ClaimsErrata(_ClaimsDirective):
    """The claims of one ``:status:`` other than holds, with what really happens."""

    option_spec: ClassVar[dict[str, Any]] = {
        "status": lambda value: directives.choice(value, [s for s in STATUSES if s != "holds"])
    }

    def run(self) -> list[nodes.Node]:
        status = self.options.get("status", "wrong")
        claims = [c for c in self.claims() if c.status == status]
        if not claims:
            return [_data("\u2013", ["ptnotes-none"])]
        lines: list[str] = []
        for claim in claims:
            lines += [
                f"- **{_cell(claim.claim)}**",
                "",
                f"  {_cell(claim.reality)} ({{ref}}`{claim.anchor}`)",
                "",
            ]
        rendered = self.render(lines)
        items = next(n for node in rendered for n in node.findall(nodes.bullet_list)).children
        for item, claim in zip(items, claims, strict=True):
            assert isinstance(item, nodes.list_item)
            self.label(item, claim.erratum_label)
            item["classes"] += ["ptnotes-erratum", f"ptnotes-status-{claim.status}"]
            item.insert(0, _data("", ["ptnotes-claim-id"], self._back_link(claim)))
            item.insert(2, _quote(claim))
        if status == "outdated" and "ptnotes_dev.sphinx.matrix" in self.config.extensions:
            self._date_changes(items, claims)
        return rendered

    def _back_link(self, claim: Claim) -> addnodes.pending_xref:
        return _link(self.env.docname, claim.ledger_label, claim.id)

    def _date_changes(self, items: Iterable[nodes.Node], claims: list[Claim]) -> None:
        """Add to each outdated claim the release its current behaviour dates from (matrix)."""
        from ptnotes_dev.sphinx.matrix import since_sentence

        for claim, item in zip(claims, items, strict=True):
            sentence = since_sentence(self.env.app, claim.page, claim.anchor)
            if sentence is not None:
                since = nodes.paragraph("", sentence, classes=["ptnotes-since"])
                since["translatable"] = False  # in the edition's language already
                item += since


def _badge_classes(colour: str, outline: bool) -> list[str]:
    """The classes of a sphinx-design badge (what its ``{bdg-<colour>}`` role writes)."""
    kind = ("sd-outline-", "sd-text-") if outline else ("sd-bg-", "sd-bg-text-")
    return ["sd-sphinx-override", "sd-badge", *(prefix + colour for prefix in kind)]


class ClaimsBadges(SphinxPostTransform):
    """In HTML, turn the marked status paragraphs into sphinx-design badges, and the
    summary's badges into the radio buttons of the ledger's status filter.

    Runs after translation, so a badge shows the status word of the edition.
    """

    default_priority = 200
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        colours = {status: colour for status, (colour, _) in STATUSES.items()}
        colours[ALL_LABEL] = "primary"
        for paragraph in list(self.document.findall(nodes.paragraph)):
            if "ptnotes-badge" not in paragraph["classes"]:
                continue
            status = next(
                c.removeprefix("ptnotes-badge-")
                for c in paragraph["classes"]
                if c.startswith("ptnotes-badge-")
            )
            badge = nodes.inline("", "", *paragraph.children)
            badge["classes"] = _badge_classes(colours[status], outline=status == ALL_LABEL)
            if "ptnotes-filter" in paragraph["classes"]:
                checked = " checked" if status == ALL_LABEL else ""
                opening = (
                    '<label class="ptnotes-filter"><input type="radio" '
                    f'name="ptnotes-claims-filter" id="ptnotes-show-{status}" '
                    f'value="{status}"{checked}>'
                )
                paragraph.children = []
                paragraph += nodes.raw("", opening, format="html")
                paragraph += badge
                paragraph += nodes.raw("", "</label>", format="html")
            else:
                paragraph.children = [badge]
            badge.parent = paragraph


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("ptnotes_claims_dir", "claims", "env", types=[str])
    app.add_config_value("ptnotes_claim_seeds", {}, "env", types=[dict])
    app.add_directive("claims-summary", ClaimsSummary)
    app.add_directive("claims-ledger", ClaimsLedger)
    app.add_directive("claims-errata", ClaimsErrata)
    app.add_post_transform(ClaimsBadges)
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}
