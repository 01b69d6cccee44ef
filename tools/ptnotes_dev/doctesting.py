"""How ptnotes executes the examples of its pages and docstrings (Sybil).

One mechanism for both kinds of example:

* ``docs/**/*.md``: ```` ```pycon ```` fences, and ```` ```python ```` fences that start
  with ``>>>``, are doctests; other ```` ```python ```` fences are executed as code.
* ``src/ptnotes/**/*.py``: ``>>>`` examples in docstrings.

The target device comes from the ``PTNOTES_DOCTEST_DEVICE`` environment variable:

``cpu`` (default)
    Examples marked ``# doctest: +REQUIRES_CUDA`` are reported SKIPPED with a reason.
``cuda``
    Every example runs with CUDA as the default device, marked ones included, and
    outputs are compared device-agnostically (see :class:`DeviceAgnosticChecker`).
    Without a usable CUDA device the run stops with an error before any example runs.
"""

from __future__ import annotations

import doctest
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sybil import Document, Example, Sybil
from sybil.document import PythonDocStringDocument
from sybil.evaluators.doctest import DocTestEvaluator, OutputChecker
from sybil.parsers.abstract.codeblock import PythonDocTestOrCodeBlockParser
from sybil.parsers.abstract.doctest import DocTestStringParser
from sybil.parsers.myst import CodeBlockParser, SkipParser
from sybil.parsers.rest import DocTestParser as DocstringDocTestParser
from sybil.sybil import SybilCollection

#: Marks an example that needs a CUDA device: ``>>> x.cuda()  # doctest: +REQUIRES_CUDA``.
REQUIRES_CUDA = doctest.register_optionflag("REQUIRES_CUDA")

DEVICE_ENV = "PTNOTES_DOCTEST_DEVICE"
DEVICES = ("cpu", "cuda")
SKIP_REASON = "requires CUDA: run `nox -s doctest_cuda` on a machine with a GPU"

#: Relative tolerance for floats in CUDA mode: GPU kernels (TF32, other reduction
#: orders) may differ from the CPU in the last printed digits.
CUDA_RTOL = 1e-3
CUDA_ATOL = 1e-4

OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def target_device() -> str:
    """The device the examples run on, from ``PTNOTES_DOCTEST_DEVICE``."""
    device = os.environ.get(DEVICE_ENV, "cpu").strip().lower() or "cpu"
    if device not in DEVICES:
        raise pytest.UsageError(
            f"{DEVICE_ENV}={device!r} is not supported; expected one of {', '.join(DEVICES)}"
        )
    return device


def environment_summary(device: str) -> str:
    """One line naming the device, torch and CUDA versions the examples run with."""
    import torch

    line = (
        f"ptnotes doctests: device={device}, torch {torch.__version__}, CUDA {torch.version.cuda}"
    )
    if device == "cuda" and torch.cuda.is_available():
        line += f", GPU {torch.cuda.get_device_name(0)}"
    return line


def check_device(device: str) -> None:
    """Stop the run, before any example, when the target device is not usable."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise pytest.UsageError(
            f"{DEVICE_ENV}=cuda: CUDA is required, but torch {torch.__version__} "
            f"(CUDA build: {torch.version.cuda}) sees no CUDA device. Run the CUDA session "
            "on a machine with an NVIDIA GPU and a CUDA build of torch."
        )


@dataclass(frozen=True)
class Selection:
    """Whether an example runs on a target device, and why not if it does not."""

    run: bool
    reason: str = ""


def select(options: dict[int, bool], device: str) -> Selection:
    """Decide whether an example with these doctest ``options`` runs on ``device``."""
    if options.get(REQUIRES_CUDA, False) and device != "cuda":
        return Selection(run=False, reason=SKIP_REASON)
    return Selection(run=True)


_CUDA_DEVICE_RE = re.compile(r",\s*device='cuda(?::\d+)?'")
_NUMBER_RE = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def strip_cuda_device(text: str) -> str:
    """Remove the ``, device='cuda:0'`` suffix CUDA tensors add to their repr."""
    return _CUDA_DEVICE_RE.sub("", text)


def _numbers_close(want: str, got: str) -> bool:
    """True if ``want`` and ``got`` differ only in numbers, each within tolerance."""
    if _NUMBER_RE.sub("#", want).split() != _NUMBER_RE.sub("#", got).split():
        return False
    for w, g in zip(_NUMBER_RE.findall(want), _NUMBER_RE.findall(got), strict=True):
        a, b = float(w), float(g)
        if abs(a - b) > CUDA_ATOL + CUDA_RTOL * abs(a):
            return False
    return True


class DeviceAgnosticChecker(OutputChecker):
    """Sybil's checker, plus CUDA-mode leniency.

    In CUDA mode a difference is not a failure when it is only (a) a
    ``device='cuda:0'`` in a repr, on either side, or (b) floats that agree within
    :data:`CUDA_RTOL` / :data:`CUDA_ATOL`, printed with possibly different padding.
    """

    def __init__(self, device: str) -> None:
        super().__init__()
        self.device = device

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        if super().check_output(want, got, optionflags):
            return True
        if self.device != "cuda":
            return False
        want, got = strip_cuda_device(want), strip_cuda_device(got)
        return super().check_output(want, got, optionflags) or _numbers_close(want, got)


class DeviceAwareEvaluator(DocTestEvaluator):
    """Evaluate a doctest example, or skip it when the target device cannot run it."""

    def __init__(self, device: str, optionflags: int = OPTIONFLAGS) -> None:
        super().__init__(optionflags)
        self.device = device
        # Sybil's runner with our checker: doctest's public way to set one is the
        # constructor, so the runner is initialised again with the flags Sybil computed.
        doctest.DocTestRunner.__init__(
            self.runner,
            verbose=False,
            optionflags=self.runner.optionflags,
            checker=DeviceAgnosticChecker(device),
        )

    def __call__(self, example: Example) -> str:
        selection = select(example.parsed.options, self.device)
        if not selection.run:
            pytest.skip(selection.reason)
        return super().__call__(example)


class PyconParser:
    """Doctests in ```` ```pycon ```` fences (the lexer name Sphinx highlights as a session)."""

    def __init__(self, evaluator: DocTestEvaluator) -> None:
        self.blocks = CodeBlockParser(language="pycon", evaluator=lambda example: None)
        self.doctests = DocTestStringParser(evaluator)

    def __call__(self, document: Any) -> Any:
        for region in self.blocks(document):
            source = region.parsed
            for doctest_region in self.doctests(source, document.path):
                doctest_region.adjust(region, source)
                yield doctest_region


class PythonFenceParser(PythonDocTestOrCodeBlockParser):
    """```` ```python ```` fences: doctests when they start with ``>>>``, else plain code."""

    codeblock_parser_class = CodeBlockParser

    def __init__(self, evaluator: DocTestEvaluator) -> None:
        super().__init__()
        self.doctest_parser = DocTestStringParser(evaluator)


def reset_state(device: str) -> Callable[[dict[str, Any]], None]:
    """Sybil ``setup`` for ``device``: a known global state for each page, and a seed.

    Saves what :func:`restore_state` puts back in the page's namespace.
    """

    def setup(namespace: dict[str, Any]) -> None:
        import torch

        namespace["_ptnotes_saved_state"] = (
            torch.get_default_dtype(),
            torch.is_grad_enabled(),
        )
        torch.manual_seed(0)
        # Functions a page defines belong to an importable module: torch.compile (dynamo)
        # imports a function's module, and Sybil's default, "__test__", is not one.
        namespace["__name__"] = "__main__"
        if device == "cuda":
            torch.set_default_device("cuda")

    return setup


def restore_state(namespace: dict[str, Any]) -> None:
    """Sybil ``teardown``: undo whatever global state a page changed."""
    import torch

    dtype, grad_enabled = namespace.pop("_ptnotes_saved_state")
    torch.set_default_dtype(dtype)
    torch.set_grad_enabled(grad_enabled)
    torch.set_default_device(None)
    # Before torch 2.10, get_default_device() raises AttributeError once the context it reads
    # is None: leave no context at all, as in a fresh process.
    context = torch._GLOBAL_DEVICE_CONTEXT
    if getattr(context, "device_context", ...) is None:
        del context.device_context
    torch.set_printoptions(profile="default")


def sybils(
    root: Path, device: str | None = None, evaluator: DocTestEvaluator | None = None
) -> SybilCollection:
    """The Sybil instances for the pages (``root/docs``), docstrings (``root/src``), README.

    ``evaluator`` replaces the comparing :class:`DeviceAwareEvaluator` (the build-cost
    benchmark passes one that executes without comparing).
    """
    device = device or target_device()
    evaluator = evaluator or DeviceAwareEvaluator(device)
    setup, teardown = reset_state(device), restore_state
    docstring_parser = DocstringDocTestParser()
    docstring_parser.string_parser = DocTestStringParser(evaluator)
    pages = Sybil(
        parsers=[PyconParser(evaluator), PythonFenceParser(evaluator), SkipParser()],
        path=str(root / "docs"),
        patterns=["*.md"],
        excludes=["auto_examples/*.md"],
        setup=setup,
        teardown=teardown,
        name="pages",
    )
    docstrings = Sybil(
        parsers=[docstring_parser],
        path=str(root / "src"),
        patterns=["*.py"],
        document_types={".py": PythonDocStringDocument},
        setup=setup,
        teardown=teardown,
        name="docstrings",
    )
    readme = Sybil(
        parsers=[PyconParser(evaluator), PythonFenceParser(evaluator)],
        path=str(root),
        filenames=["README.md"],
        setup=setup,
        teardown=teardown,
        name="readme",
    )
    collection = pages + docstrings
    collection.append(readme)
    return collection


def documents(collection: SybilCollection, targets: Sequence[Path]) -> Iterator[Document]:
    """Every document under ``targets`` that one Sybil of ``collection`` parses, with examples.

    ``targets`` are the files and folders a doctest run is given (``[tool.ptnotes]
    doctest-targets``); only they are walked (the README Sybil's path is the repository root,
    whose virtual environments hold many README.md files).
    """
    paths: list[Path] = []
    for target in targets:
        paths += [target] if target.is_file() else sorted(target.rglob("*"))
    for sybil in collection:
        root = Path(sybil.path).resolve()
        for path in paths:
            resolved = path.resolve()
            if root in resolved.parents and path.is_file() and sybil.should_parse(resolved):
                document = sybil.parse(resolved)
                if next(iter(document.examples()), None) is not None:
                    yield document


__all__ = [
    "DEVICE_ENV",
    "REQUIRES_CUDA",
    "SKIP_REASON",
    "DeviceAgnosticChecker",
    "Selection",
    "check_device",
    "documents",
    "environment_summary",
    "reset_state",
    "restore_state",
    "select",
    "strip_cuda_device",
    "sybils",
    "target_device",
]
