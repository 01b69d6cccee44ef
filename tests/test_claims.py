"""The claims ledger (docs/claims/*.toml): well-formed, and every claim verified by an example."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ptnotes_dev.sphinx.claims import Claim, load_claims
from sphinx.config import eval_config_file
from sphinx.util.tags import Tags

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONF = eval_config_file(DOCS / "conf.py", Tags())

CLAIMS = load_claims(DOCS / CONF["ptnotes_claims_dir"], CONF["ptnotes_claim_seeds"])
FENCE = "`" * 3


def section_after_label(page: Path, label: str) -> str | None:
    """The text from ``(label)=`` to the next heading of the same or a higher level."""
    text = page.read_text(encoding="utf-8")
    match = re.search(rf"^\({re.escape(label)}\)=\s*\n(#+) ", text, re.MULTILINE)
    if match is None:
        return None
    level = len(match.group(1))
    rest = text[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest


def test_the_ledger_holds_at_least_45_claims() -> None:
    assert len(CLAIMS) >= 45


def test_every_source_note_has_claims() -> None:
    assert {c.seed for c in CLAIMS} == {"000", "002", "003"}


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim_points_at_a_labelled_section_with_an_executed_example(claim: Claim) -> None:
    page = DOCS / f"{claim.page}.md"
    assert page.exists(), f"{claim.id}: no page {claim.page}.md"
    section = section_after_label(page, claim.anchor)
    assert section is not None, f"{claim.id}: no label ({claim.anchor})= before a heading"
    assert f"{FENCE}pycon" in section, f"{claim.id}: section {claim.anchor} has no pycon example"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('id = "a"\nseed = "000"\nclaim = "c"\nstatus = "holds"\npage = "p"', "missing field"),
        (
            'id = "a"\nseed = "000"\nclaim = "c"\nstatus = "maybe"\npage = "p"\nanchor = "x"',
            "status 'maybe'",
        ),
        (
            'id = "a"\nseed = "001"\nclaim = "c"\nstatus = "holds"\npage = "p"\nanchor = "x"',
            "seed '001'",
        ),
        (
            'id = "a"\nseed = "000"\nclaim = "c"\nstatus = "wrong"\npage = "p"\nanchor = "x"',
            "needs a 'reality' line",
        ),
        (
            'id = "a"\nseed = "000"\nclaim = "c"\nstatus = "holds"\npage = "p"\nanchor = "x"\n'
            'colour = "red"',
            "unknown field",
        ),
    ],
)
def test_bad_ledger_entry_is_rejected(tmp_path: Path, entry: str, message: str) -> None:
    (tmp_path / "x.toml").write_text(f"[[claim]]\n{entry}\n")
    with pytest.raises(ValueError, match=message):
        load_claims(tmp_path, CONF["ptnotes_claim_seeds"])


def test_duplicate_claim_id_is_rejected(tmp_path: Path) -> None:
    entry = 'id = "a"\nseed = "000"\nclaim = "c"\nstatus = "holds"\npage = "p"\nanchor = "x"\n'
    (tmp_path / "x.toml").write_text(f"[[claim]]\n{entry}\n[[claim]]\n{entry}")
    with pytest.raises(ValueError, match="duplicate id 'a'"):
        load_claims(tmp_path, CONF["ptnotes_claim_seeds"])


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim_text_has_no_markup_outside_code_spans(claim: Claim) -> None:
    """``<X>`` would render as HTML and ``__x__`` as bold: such text belongs in backticks."""
    for text in (claim.claim, claim.reality):
        prose = re.sub(r"`[^`]*`", "", text)
        assert "<" not in prose, text
        assert not re.search(r"__\w+__", prose), text
