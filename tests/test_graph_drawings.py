"""The autograd graphs the site draws are ``ptnotes.graph.graph_dot``'s output, unchanged.

The pages draw them through ``{autograd-graph}`` (tools/ptnotes_dev/sphinx/autograd_graph.py),
the gallery script through Graphviz's ``dot`` command; each drawing is compared with
``graph_dot`` for the same computation, written out in the tests as the page writes it
(the notes' example is ``tests/test_graph.py``'s).
"""

from __future__ import annotations

import re
import runpy
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from ptnotes_dev.sphinx.autograd_graph import EXAMPLES, example_dot

from ptnotes.graph import graph_dot
from tests.test_graph import notes_example

ROOT = Path(__file__).resolve().parent.parent
GALLERY_SCRIPT = ROOT / "gallery" / "plot_autograd_graph.py"
DIRECTIVE = re.compile(r"^```\{autograd-graph\}\s+(\S+)\s*$", re.MULTILINE)
PAGES = {"docs/autograd/graph.md": "exp-chain", "docs/autograd/worked-example.md": "notes-example"}


def exp_chain_dot() -> str:
    """docs/autograd/graph.md: ``loss = (w * 2 + 1).exp()``."""
    w = torch.tensor(3.0, requires_grad=True)
    loss = (w * 2 + 1).exp()
    return graph_dot(loss, {"w": w, "loss": loss})


def notes_example_dot() -> str:
    """docs/autograd/worked-example.md and the gallery: the notes' four-step example."""
    tensors = notes_example()
    return graph_dot(tensors["loss"], tensors)


EXPECTED: dict[str, Callable[[], str]] = {
    "exp-chain": exp_chain_dot,
    "notes-example": notes_example_dot,
}


def test_every_example_has_an_expected_drawing() -> None:
    assert sorted(EXAMPLES) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_directive_draws_graph_dot_output_of_the_same_computation(name: str) -> None:
    assert example_dot(name) == EXPECTED[name]()


def test_notes_example_drawing_shows_l1_once_with_two_incoming_edges() -> None:
    dot = example_dot("notes-example")
    (node,) = re.findall(r"(n\d+) \[label=\"MulBackward0 \(l1\)\"\]", dot)
    assert len(re.findall(rf"-> {node};", dot)) == 2


def test_directive_rejects_an_unknown_example() -> None:
    with pytest.raises(ValueError, match="unknown autograd graph example 'nope'"):
        example_dot("nope")


@pytest.mark.parametrize(("page", "name"), sorted(PAGES.items()))
def test_graph_page_draws_its_example(page: str, name: str) -> None:
    assert DIRECTIVE.findall((ROOT / page).read_text(encoding="utf-8")) == [name]


@pytest.fixture
def dot_inputs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """What the gallery script sends to ``dot`` (the real command still runs)."""
    import matplotlib

    matplotlib.use("Agg")  # plt.show() returns at once
    import matplotlib.pyplot as plt

    inputs: list[bytes] = []
    run = subprocess.run

    def recording_run(args: Any, *pargs: Any, **kwargs: Any) -> Any:
        if list(args)[:1] == ["dot"]:
            inputs.append(kwargs["input"])
        return run(args, *pargs, **kwargs)

    monkeypatch.setattr(subprocess, "run", recording_run)
    yield inputs
    plt.close("all")


def test_gallery_draws_graph_dot_output_of_the_notes_example(
    dot_inputs: list[bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    runpy.run_path(str(GALLERY_SCRIPT), run_name="__main__")
    capsys.readouterr()
    assert [text.decode() for text in dot_inputs] == [notes_example_dot()]
