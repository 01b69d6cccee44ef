"""The claims ledger (docs/claims/*.toml): well-formed, every claim verified by an example,
quoting its note verbatim, and agreeing with the project's measurements when it cites them."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from ptnotes_dev.sphinx.claims import STATUSES, Claim, borne_out, load_claims
from sphinx.config import eval_config_file
from sphinx.util.tags import Tags

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONF = eval_config_file(DOCS / "conf.py", Tags())

CLAIMS = load_claims(DOCS / CONF["ptnotes_claims_dir"], CONF["ptnotes_claim_seeds"])
FENCE = "`" * 3
#: The source notes, as they were handed over (``<seed>_<hash>.txt``). ptnotes quotes them
#: but does not redistribute them: they live beside the repository, in the project's shared
#: folder (``PTNOTES_SEEDS`` names another place).
NOTES = Path(os.environ.get("PTNOTES_SEEDS") or ROOT.parent / "shared" / "seeds")
BENCH = {
    b["id"]: b for b in json.loads((DOCS / CONF["ptnotes_bench_file"]).read_text())["benchmarks"]
}
MEASURED = [c for c in CLAIMS if c.measured]
QUOTE_MAX = 160
OK = 'id = "a"\nseed = "000"\nclaim = "c"\nquote = "q"\n'


def note_text(seed: str) -> str:
    if not NOTES.is_dir():
        pytest.skip(f"the source notes are not here ({NOTES}): quotes cannot be checked")
    (path,) = NOTES.glob(f"{seed}_*.txt")
    return path.read_text(encoding="utf-8")


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
        (
            'id = "a"\nseed = "000"\nclaim = "c"\nquote = "q"\nstatus = "holds"\npage = "p"',
            "missing field",
        ),
        (
            'id = "a"\nseed = "000"\nclaim = "c"\nstatus = "holds"\npage = "p"\nanchor = "x"',
            "quote",
        ),
        (OK + 'status = "maybe"\npage = "p"\nanchor = "x"', "status 'maybe'"),
        (OK + 'status = "changed"\npage = "p"\nanchor = "x"', "status 'changed'"),
        (OK.replace("000", "001") + 'status = "holds"\npage = "p"\nanchor = "x"', "seed '001'"),
        (OK + 'status = "partly"\npage = "p"\nanchor = "x"', "needs a 'reality' line"),
        (OK + 'status = "holds"\npage = "p"\nanchor = "x"\ncolour = "red"', "unknown field"),
        (OK + 'status = "holds"\npage = "p"\nanchor = "x"\nmeasured = { b = "faster" }', "faster"),
        (OK + 'status = "holds"\npage = "p"\nanchor = "x"\nmeasured = "b"', "must map"),
        (
            OK + 'status = "unverified"\npage = "p"\nanchor = "x"\nreality = "r"\n'
            'measured = { b = "lower" }',
            "unverified claim cites no measurement",
        ),
    ],
)
def test_bad_ledger_entry_is_rejected(tmp_path: Path, entry: str, message: str) -> None:
    (tmp_path / "x.toml").write_text(f"[[claim]]\n{entry}\n")
    with pytest.raises(ValueError, match=message):
        load_claims(tmp_path, CONF["ptnotes_claim_seeds"])


def test_duplicate_claim_id_is_rejected(tmp_path: Path) -> None:
    entry = OK + 'status = "holds"\npage = "p"\nanchor = "x"\n'
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


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim_quotes_its_note_verbatim(claim: Claim) -> None:
    assert claim.quote in note_text(claim.seed), f"{claim.id}: quote not in note {claim.seed}"


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim_quote_is_short(claim: Claim) -> None:
    assert len(claim.quote) <= QUOTE_MAX, f"{claim.id}: quote a phrase, not a passage"


def test_notes_are_the_seeds_the_ledger_names() -> None:
    if not NOTES.is_dir():
        pytest.skip(f"the source notes are not here ({NOTES})")
    assert sorted(p.name[:3] for p in NOTES.glob("*.txt")) == sorted(CONF["ptnotes_claim_seeds"])


def test_some_verdicts_cite_measurements() -> None:
    assert len(MEASURED) >= 3


@pytest.mark.parametrize("claim", MEASURED, ids=[c.id for c in MEASURED])
def test_cited_benchmarks_exist_and_ran(claim: Claim) -> None:
    for bench, _ in claim.measured:
        assert bench in BENCH, f"{claim.id}: no benchmark {bench!r} in bench.json"
        assert BENCH[bench]["status"] == "ok", f"{claim.id}: benchmark {bench} did not run"
        assert isinstance(BENCH[bench].get("ratio"), dict), f"{claim.id}: {bench} has no ratio"


@pytest.mark.parametrize("claim", MEASURED, ids=[c.id for c in MEASURED])
def test_measured_verdict_agrees_with_the_bench_data(claim: Claim) -> None:
    """``holds`` needs every cited ratio to show what the claim predicts, ``wrong`` none."""
    shown = {
        bench: borne_out(prediction, BENCH[bench]["ratio"]["value"])
        for bench, prediction in claim.measured
    }
    if claim.status == "holds":
        assert all(shown.values()), f"{claim.id} holds, but bench.json disagrees: {shown}"
    if claim.status == "wrong":
        assert not any(shown.values()), f"{claim.id} is wrong, but bench.json agrees: {shown}"


@pytest.mark.parametrize(
    ("prediction", "ratio", "expected"),
    [
        ("lower", 0.89, True),
        ("lower", 1.0, False),
        ("higher", 13.1, True),
        ("higher", 1.03, False),
        ("same", 1.03, True),
        ("same", 0.08, False),
    ],
)
def test_borne_out_reads_a_ratio(prediction: str, ratio: float, expected: bool) -> None:
    assert borne_out(prediction, ratio) is expected


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_reality_that_cites_the_project_benchmark_names_it(claim: Claim) -> None:
    """A verdict resting on "the project's benchmark" says which one (``measured``)."""
    if "project's" in claim.reality and "benchmark" in claim.reality:
        assert claim.measured or claim.status == "unverified", claim.id


@pytest.mark.parametrize("status", [s for s in STATUSES if s != "holds"])
def test_errata_page_has_a_section_per_status(status: str) -> None:
    assert f":status: {status}\n" in (DOCS / "errata.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("status", STATUSES)
def test_ledger_filter_has_a_css_rule_per_status(status: str) -> None:
    css = (DOCS / "_static" / "ptnotes.css").read_text(encoding="utf-8")
    assert f"#ptnotes-show-{status}:checked" in css
