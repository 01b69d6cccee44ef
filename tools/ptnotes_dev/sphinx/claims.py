"""The claims ledger: ``docs/claims/*.toml`` rendered as the ledger and errata pages.

Config: ``ptnotes_claims_dir`` (the ledger's folder, relative to the source folder) and
``ptnotes_claim_seeds`` (source note id to its title).

Each entry names a claim made by one of the source notes, its status on the installed torch
(holds / wrong / changed / typo) and the labelled section whose doctests verify it. Two
directives render the ledger as MyST, so the text goes through the normal translation flow:

``{claims-ledger}`` (option ``:seed:``)
    the claims of one source note as a table;
``{claims-errata}`` (option ``:status:``)
    the claims of one status other than ``holds``, with what really happens.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

STATUSES = ("holds", "wrong", "changed", "typo")
FIELDS = ("id", "seed", "claim", "status", "page", "anchor")


@dataclass(frozen=True)
class Claim:
    id: str
    seed: str
    claim: str
    status: str
    page: str
    anchor: str
    reality: str = ""
    source: str = ""


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
            unknown = set(entry) - set(FIELDS) - {"reality"}
            if unknown:
                raise ValueError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
            if entry["status"] not in STATUSES:
                raise ValueError(f"{where}: status {entry['status']!r} not in {STATUSES}")
            if entry["seed"] not in known:
                raise ValueError(f"{where}: seed {entry['seed']!r} not in {known}")
            if entry["status"] != "holds" and not str(entry.get("reality", "")).strip():
                raise ValueError(f"{where}: status {entry['status']} needs a 'reality' line")
            if entry["id"] in seen:
                raise ValueError(f"{where}: duplicate id {entry['id']!r}")
            seen.add(entry["id"])
            claims.append(Claim(**entry, source=path.name))
    return claims


def _cell(text: str) -> str:
    return " ".join(text.split())


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


class ClaimsLedger(_ClaimsDirective):
    """A table of the claims of one source note (``:seed:``), or of all notes."""

    option_spec: ClassVar[dict[str, Any]] = {"seed": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        seed = self.options.get("seed", "").strip("\"' ") or None
        claims = [c for c in self.claims() if seed is None or c.seed == seed]
        if not claims:
            raise self.error(f"the ledger (docs/claims/*.toml) has no claim for seed {seed!r}")
        lines = [":::{list-table}", ":header-rows: 1", ":widths: 55 12 33", ""]
        lines += ["* - Claim", "  - Status", "  - Verified in"]
        for claim in claims:
            lines += [
                f"* - {_cell(claim.claim)}",
                f"  - {claim.status}",
                f"  - {{ref}}`{claim.anchor}`",
            ]
        lines += [":::", ""]
        return self.render(lines)


class ClaimsErrata(_ClaimsDirective):
    """The claims of one ``:status:`` (wrong, changed or typo), with what really happens."""

    option_spec: ClassVar[dict[str, Any]] = {
        "status": lambda value: directives.choice(value, STATUSES[1:])
    }

    def run(self) -> list[nodes.Node]:
        status = self.options.get("status", "wrong")
        lines: list[str] = []
        for claim in self.claims():
            if claim.status == status:
                lines += [
                    f"- **{_cell(claim.claim)}**",
                    "",
                    f"  {_cell(claim.reality)} ({{ref}}`{claim.anchor}`)",
                    "",
                ]
        nodes_ = self.render(lines)
        if status == "changed" and "ptnotes_dev.sphinx.matrix" in self.config.extensions:
            self._date_changes(nodes_)
        return nodes_

    def _date_changes(self, rendered: list[nodes.Node]) -> None:
        """Add to each changed claim the release its current behaviour dates from (matrix)."""
        from ptnotes_dev.sphinx.matrix import since_sentence

        claims = [c for c in self.claims() if c.status == "changed"]
        items = [n for node in rendered for n in node.findall(nodes.list_item)]
        for claim, item in zip(claims, items, strict=False):
            sentence = since_sentence(self.env.app, claim.page, claim.anchor)
            if sentence is not None:
                since = nodes.paragraph("", sentence, classes=["ptnotes-since"])
                since["translatable"] = False  # in the edition's language already
                item += since


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("ptnotes_claims_dir", "claims", "env", types=[str])
    app.add_config_value("ptnotes_claim_seeds", {}, "env", types=[dict])
    app.add_directive("claims-ledger", ClaimsLedger)
    app.add_directive("claims-errata", ClaimsErrata)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
