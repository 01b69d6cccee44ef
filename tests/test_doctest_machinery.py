"""The doctest machinery itself (ptnotes_dev.doctesting): it must be able to fail.

Each test writes a tiny site (a page or a module) into a temporary folder and runs pytest on
it in a subprocess, exactly as `nox -s doctest` runs pytest on docs/ and src/.
"""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from ptnotes_dev.doctesting import (
    DEVICE_ENV,
    REQUIRES_CUDA,
    SKIP_REASON,
    DeviceAgnosticChecker,
    select,
    strip_cuda_device,
)

ROOT = Path(__file__).resolve().parent.parent
FENCE = "`" * 3

CONFTEST = """
from pathlib import Path

from ptnotes_dev.doctesting import check_device, sybils, target_device

pytest_collect_file = sybils(Path(__file__).parent).pytest()


def pytest_configure(config):
    check_device(target_device())
"""


def page(body: str) -> str:
    return f"# A page\n\n{FENCE}pycon\n{textwrap.dedent(body).strip()}\n{FENCE}\n"


def run_site(
    tmp_path: Path, files: dict[str, str], device: str = "cpu"
) -> subprocess.CompletedProcess[str]:
    """Write ``files`` under ``tmp_path`` and run pytest on its docs/ and src/."""
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider -rs\n")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "src").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), DEVICE_ENV: device}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "docs", "src"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_page_with_correct_output_passes(tmp_path: Path) -> None:
    result = run_site(tmp_path, {"docs/ok.md": page(">>> 1 + 1\n2")})
    assert result.returncode == 0, result.stdout
    assert "1 passed" in result.stdout


def test_page_with_wrong_output_fails(tmp_path: Path) -> None:
    result = run_site(
        tmp_path, {"docs/wrong.md": page(">>> import torch\n>>> torch.ones(2)\ntensor([1., 3.])")}
    )
    assert result.returncode == 1, result.stdout
    assert "1 failed" in result.stdout
    assert "tensor([1., 1.])" in result.stdout  # the real output is reported


def test_docstring_with_wrong_output_fails(tmp_path: Path) -> None:
    module = 'def f():\n    """\n    >>> 2 * 3\n    7\n    """\n'
    result = run_site(tmp_path, {"src/mod.py": module})
    assert result.returncode == 1, result.stdout
    assert "1 failed" in result.stdout


def test_wrong_exception_message_fails(tmp_path: Path) -> None:
    body = """
    >>> import torch
    >>> torch.Tensor(3.0)
    Traceback (most recent call last):
      ...
    TypeError: a message torch never prints
    """
    result = run_site(tmp_path, {"docs/exc.md": page(body)})
    assert result.returncode == 1, result.stdout


def test_cuda_marked_example_is_skipped_with_reason_on_cpu(tmp_path: Path) -> None:
    body = ">>> 1 + 1\n2\n>>> torch_cuda = 'x'  # doctest: +REQUIRES_CUDA"
    result = run_site(tmp_path, {"docs/cuda.md": page(body)})
    assert result.returncode == 0, result.stdout
    assert "1 passed, 1 skipped" in result.stdout
    assert SKIP_REASON in result.stdout


def test_cuda_session_without_cuda_fails_before_running_anything(tmp_path: Path) -> None:
    result = run_site(tmp_path, {"docs/ok.md": page(">>> 1 + 1\n2")}, device="cuda")
    assert result.returncode != 0
    assert "CUDA is required" in result.stdout + result.stderr
    assert "passed" not in result.stdout


def test_unknown_device_is_rejected(tmp_path: Path) -> None:
    result = run_site(tmp_path, {"docs/ok.md": page(">>> 1 + 1\n2")}, device="tpu")
    assert result.returncode != 0
    assert "'tpu' is not supported" in result.stdout + result.stderr


def test_global_state_changed_by_one_page_is_restored_for_the_next(tmp_path: Path) -> None:
    first = """
    >>> import torch
    >>> torch.set_default_dtype(torch.float64)
    >>> _ = torch.set_grad_enabled(False)
    """
    second = """
    >>> import torch
    >>> torch.get_default_dtype(), torch.is_grad_enabled()
    (torch.float32, True)
    """
    result = run_site(tmp_path, {"docs/a.md": page(first), "docs/b.md": page(second)})
    assert result.returncode == 0, result.stdout


def test_a_default_device_left_by_one_page_is_undone_and_the_next_can_read_it(
    tmp_path: Path,
) -> None:
    """The next page finds the CPU default and ``get_default_device()`` working (before torch
    2.10, ``set_default_device(None)`` made it raise; the matrix runs this on the lowest)."""
    first = """
    >>> import torch
    >>> torch.set_default_device("meta")
    """
    second = """
    >>> import torch
    >>> torch.empty(()).device, torch.get_default_device()
    (device(type='cpu'), device(type='cpu'))
    """
    result = run_site(
        tmp_path, {"docs/a.md": page(first), "docs/b.md": page(second), "docs/c.md": page(second)}
    )
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize(
    ("options", "device", "runs"),
    [
        ({}, "cpu", True),
        ({}, "cuda", True),
        ({REQUIRES_CUDA: True}, "cpu", False),
        ({REQUIRES_CUDA: True}, "cuda", True),
    ],
)
def test_select_runs_cuda_marked_examples_only_when_the_target_is_cuda(
    options: dict[int, bool], device: str, runs: bool
) -> None:
    assert select(options, device).run is runs


def test_strip_cuda_device_removes_only_the_device_suffix() -> None:
    got = "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    assert strip_cuda_device(got) == "tensor([1., 2.], requires_grad=True)"


@pytest.mark.parametrize(
    ("want", "got", "device", "matches"),
    [
        ("tensor([1., 2.])", "tensor([1., 2.], device='cuda:0')", "cuda", True),
        ("tensor([1., 2.])", "tensor([1., 2.], device='cuda:0')", "cpu", False),
        ("tensor([0.1234, 2.0000])", "tensor([0.1235, 2.0000], device='cuda:0')", "cuda", True),
        ("tensor([0.1234, 2.0000])", "tensor([0.2234, 2.0000], device='cuda:0')", "cuda", False),
        ("tensor([1., 2.])", "tensor([1., 2., 3.], device='cuda:0')", "cuda", False),
        ("torch.float32", "torch.float64", "cuda", False),
    ],
)
def test_device_agnostic_checker(want: str, got: str, device: str, matches: bool) -> None:
    checker = DeviceAgnosticChecker(device)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    assert checker.check_output(want + "\n", got + "\n", flags) is matches


def test_cuda_check_script_exits_nonzero_without_cuda() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA; the check passes here by design")
    result = subprocess.run(
        [sys.executable, "-m", "ptnotes_dev.cuda_check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert "CUDA is required" in result.stderr
