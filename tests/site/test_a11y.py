"""Accessibility of the built site: an axe-core audit of a sample of pages in both editions.

axe-core is not vendored: `nox -s browser` installs the pinned release with npm into
``build/axe`` (``PTNOTES_AXE`` points at another ``axe.min.js``), and each test injects it into
the page. A page passes with no violation of impact ``serious`` or ``critical`` under axe's
default rules plus ``label-content-name-mismatch`` (experimental, so off by default): a
control's accessible name must contain the text it shows, or a speech-input user who says
what they see cannot reach it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.site.pages import LANGUAGES, REPO, PageProblems
from tests.site.test_browser import open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

#: The sample: home, a reference page, the gallery index, the claims ledger, the API index and
#: the compatibility page (the tables of the release matrix).
A11Y_PAGES = [
    "index.html",
    "tensors/tensor-vs-Tensor.html",
    "auto_examples/index.html",
    "claims.html",
    "api/index.html",
    "compatibility.html",
]
BLOCKING = frozenset({"serious", "critical"})
EXTRA_RULES = ("label-content-name-mismatch",)

AXE_RUN = """async (extraRules) => {
    const rules = Object.fromEntries(extraRules.map((id) => [id, { enabled: true }]));
    const results = await axe.run(document, { rules, resultTypes: ["violations"] });
    return results.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })),
    }));
}"""


def axe_script() -> Path:
    """axe-core's ``axe.min.js``: ``PTNOTES_AXE``, else where `nox -s browser` installs it."""
    default = REPO / "build" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
    path = Path(os.environ.get("PTNOTES_AXE") or default)
    if not path.is_file():
        pytest.fail(
            f"axe-core not found at {path}: `nox -s browser` installs it (npm install --prefix "
            "build/axe axe-core@<pin in noxfile.py>), or set PTNOTES_AXE to an axe.min.js",
            pytrace=False,
        )
    return path


def audit(page: Page) -> list[dict[str, Any]]:
    """axe's violations on the page as it is now."""
    page.add_script_tag(path=str(axe_script()))
    violations: list[dict[str, Any]] = page.evaluate(AXE_RUN, list(EXTRA_RULES))
    return violations


def report(violations: list[dict[str, Any]]) -> str:
    lines = []
    for violation in violations:
        lines.append(f"{violation['impact']}: {violation['id']} ({violation['help']})")
        lines.extend(f"    {node['target']}: {node['summary']}" for node in violation["nodes"])
    return "\n".join(lines)


@pytest.mark.parametrize("path", A11Y_PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_page_has_no_serious_accessibility_violation(lang: str, path: str, page: Page) -> None:
    problems = PageProblems().watch(page)
    open_page(page, f"{lang}/{path}")
    violations = audit(page)
    blocking = [v for v in violations if v["impact"] in BLOCKING]
    assert blocking == [], f"/{lang}/{path}: axe found\n{report(blocking)}"
    assert not problems.problems, str(problems)
