"""The torch-specific measuring primitives of the benchmarks and the gallery.

:mod:`ptnotes_dev.bench` times contenders and keeps records without knowing torch; this
module adds what needs torch: the bytes a region allocates, read from the profiler's
allocator events (:func:`allocations`), deterministic measurements alternated like the
timer's (:func:`measure_alternating`), the profiler's start/stop chatter kept off stderr
(:func:`quiet_stderr`), and the benchmarks' full-or-quick timer settings (:func:`timing`).
``benchmarks/cases.py`` and the gallery scripts use the same functions, so a figure and the
"Measured numbers" page count the same way.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from ptnotes_dev.bench import Timer, schedule

T = TypeVar("T")

__all__ = [
    "MEMORY_METHOD",
    "Allocation",
    "allocations",
    "measure_alternating",
    "quiet_stderr",
    "timing",
    "timing_fields",
]

#: How :func:`allocations` counts, in the words the results file and the page use.
MEMORY_METHOD = (
    "CPU allocator accounting: torch.profiler with profile_memory=True records every "
    "allocation and free of the CPU allocator as a [memory] event; their running sum, in "
    "time order and starting from 0 when the profiled region begins, gives the bytes "
    "allocated within the region. Memory held before the region (inputs, parameters) is "
    "not counted."
)

#: Lines the profiler (its C++ side, straight to file descriptor 2) writes on every start
#: and stop; :func:`quiet_stderr` drops them and passes anything else on.
PROFILER_NOISE = (b"USDT:", b"profiler_start", b"profiler_stop", b"Memory block of unknown")


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Hide the profiler's start/stop chatter while the block runs.

    The chatter is written by C++ to file descriptor 2, below :data:`sys.stderr`, so the
    descriptor itself is redirected to a temporary file; when the block ends, every line
    that is not profiler chatter is written back to :data:`sys.stderr`.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            for line in sink.read().splitlines():
                if line.strip() and not any(noise in line for noise in PROFILER_NOISE):
                    sys.stderr.write(line.decode(errors="replace") + "\n")


@dataclass(frozen=True)
class Allocation:
    """Bytes allocated within a profiled region.

    Attributes:
        peak: the most bytes alive at once during the region.
        end: the bytes still alive when the region ends (what it returned, plus whatever
            it left behind, such as tensors autograd saved for a backward pass).
    """

    peak: int
    end: int


def allocations(fn: Callable[[], object]) -> Allocation:
    """Run ``fn`` under :class:`torch.profiler.profile` and count what the CPU allocator did.

    What ``fn`` returns stays alive until the region ends, so it counts in
    :attr:`Allocation.end`. The method is :data:`MEMORY_METHOD`.
    """
    from torch.profiler import ProfilerActivity, profile

    gc.collect()
    with (
        quiet_stderr(),
        profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof,
    ):
        kept = fn()
    del kept
    events = [
        event
        for event in prof.profiler.kineto_results.events()
        if event.name() == "[memory]" and str(event.device_type()).endswith("CPU")
    ]
    events.sort(key=lambda event: event.start_ns())
    current = peak = 0
    for event in events:
        current += event.nbytes()
        peak = max(peak, current)
    return Allocation(peak=peak, end=current)


def measure_alternating(
    contenders: Mapping[str, Callable[[], T]], repeats: int, warmup: int
) -> dict[str, list[T]]:
    """Alternate deterministic measurements (bytes, for example) as :class:`Timer` does time.

    Each contender returns its measurement (a number, or an :class:`Allocation`); the order
    is :func:`ptnotes_dev.bench.schedule`'s (warm-up rounds first, then A B A B ...), and the
    warm-up values are dropped.
    """
    samples: dict[str, list[T]] = {name: [] for name in contenders}
    for round_, name in schedule(list(contenders), repeats, warmup):
        value = contenders[name]()
        if round_ >= 0:
            samples[name].append(value)
    return samples


def timing(quick: bool, *, repeats: int, warmup: int, inner: int) -> Timer:
    """A :class:`Timer` with the given settings, or 2 repeats of 1 call in quick mode."""
    if quick:
        return Timer(repeats=2, warmup=1, inner=1)
    return Timer(repeats=repeats, warmup=warmup, inner=inner)


def timing_fields(timer: Timer) -> dict[str, int]:
    """The ``timing`` field of a record: the timer's repeats, warm-up and inner loop."""
    return {"repeats": timer.repeats, "warmup": timer.warmup, "inner": timer.inner}
