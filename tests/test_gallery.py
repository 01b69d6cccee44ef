"""gallery/: every example script runs to the end as a plain Python program."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GALLERY = Path(__file__).resolve().parent.parent / "gallery"
SCRIPTS = sorted(GALLERY.glob("plot_*.py"))
TIMEOUT_S = 600  # the slowest script (torch.compile) needs about a minute on two busy cores
#: What the profiler prints on each start and stop unless ptnotes_dev.measure silences it.
PROFILER_CHATTER = ("profiler_start", "profiler_stop")


@pytest.fixture(scope="module")
def run_script() -> dict[Path, subprocess.CompletedProcess[str]]:
    """Each script's run, shared by the tests of this module (a script runs once)."""
    return {}


def _run(script: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["MPLBACKEND"] = "Agg"  # no display: plt.show() returns at once
    # One intra-op thread: the scripts' tensors are small, and several threads per process
    # slow to a crawl when parallel test runs oversubscribe the cores.
    env["OMP_NUM_THREADS"] = "1"
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,  # a script must not depend on, or write into, the repository
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


@pytest.fixture
def result(
    script: Path,
    run_script: dict[Path, subprocess.CompletedProcess[str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> subprocess.CompletedProcess[str]:
    if script not in run_script:
        run_script[script] = _run(script, tmp_path_factory.mktemp(script.stem))
    return run_script[script]


def test_gallery_has_scripts() -> None:
    assert SCRIPTS, f"no plot_*.py script found in {GALLERY}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[script.stem for script in SCRIPTS])
def test_gallery_script_runs_without_error(
    script: Path, result: subprocess.CompletedProcess[str]
) -> None:
    assert result.returncode == 0, f"{script.name} exited with {result.returncode}\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr


@pytest.mark.parametrize("script", SCRIPTS, ids=[script.stem for script in SCRIPTS])
def test_gallery_script_prints_no_profiler_chatter(
    script: Path, result: subprocess.CompletedProcess[str]
) -> None:
    noise = [
        line
        for line in result.stderr.splitlines()
        if any(chatter in line for chatter in PROFILER_CHATTER)
    ]
    assert noise == [], f"{script.name} printed profiler chatter:\n" + "\n".join(noise)
