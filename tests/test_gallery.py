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


def test_gallery_has_scripts() -> None:
    assert SCRIPTS, f"no plot_*.py script found in {GALLERY}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[script.stem for script in SCRIPTS])
def test_gallery_script_runs_without_error(script: Path, tmp_path: Path) -> None:
    env = dict(os.environ)
    env["MPLBACKEND"] = "Agg"  # no display: plt.show() returns at once
    # One intra-op thread: the scripts' tensors are small, and several threads per process
    # slow to a crawl when parallel test runs oversubscribe the cores.
    env["OMP_NUM_THREADS"] = "1"
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,  # a script must not depend on, or write into, the repository
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, f"{script.name} exited with {result.returncode}\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
