"""`torchrun -m ptnotes.ddp_example` trains one DDP step on two CPU processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

TIMEOUT_S = 300  # the launcher and two workers each import torch: slow on a loaded machine
EXPECTED = (
    "ddp_example: world_size=2 loss=38.216766 "
    "grads_equal_across_ranks=True matches_single_process=True"
)


def test_torchrun_runs_the_ddp_example_on_two_processes() -> None:
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",  # what the `torchrun` script runs
        "--standalone",  # as the module's docstring says: a free local port, not 29500
        "--nproc-per-node",
        "2",
        "-m",
        "ptnotes.ddp_example",
    ]
    # OMP_NUM_THREADS set: otherwise torchrun sets it to 1 itself and logs a warning.
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    # Its own process group: on a timeout the workers are killed with the launcher, not left.
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    ) as launcher:  # fmt: skip
        try:
            stdout, stderr = launcher.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(launcher.pid, signal.SIGKILL)
            stdout, stderr = launcher.communicate()
            pytest.fail(f"torchrun did not finish in {TIMEOUT_S} s:\n{stdout}{stderr}")
    assert launcher.returncode == 0, stdout + stderr
    assert stdout.splitlines() == [EXPECTED]  # rank 0 prints, rank 1 does not
