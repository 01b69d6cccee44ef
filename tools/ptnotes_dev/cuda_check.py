"""Fail fast, with a clear message, when the CUDA session has no CUDA device to run on.

Run by ``nox -s doctest_cuda`` (``python -m ptnotes_dev.cuda_check``) before the tests.
Prints the torch and CUDA versions the session will use.
"""

from __future__ import annotations

import sys


def main() -> int:
    try:
        import torch
    except ImportError:
        print(
            "doctest_cuda: CUDA is required, but no torch is importable. This session uses the "
            "CUDA build of torch already installed on a GPU machine; it never installs one.",
            file=sys.stderr,
        )
        return 1
    print(f"doctest_cuda: torch {torch.__version__}, CUDA build {torch.version.cuda}")
    if not torch.cuda.is_available():
        print(
            f"doctest_cuda: CUDA is required, but torch {torch.__version__} sees no CUDA device "
            "(torch.cuda.is_available() is False). Run this session on a machine with an "
            "NVIDIA GPU and a CUDA build of torch; on CPU use `nox -s doctest`.",
            file=sys.stderr,
        )
        return 1
    print(f"doctest_cuda: device 0 is {torch.cuda.get_device_name(0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
