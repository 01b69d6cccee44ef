"""ptnotes.distributed.run_parallel and DDP itself, on CPU with gloo and two processes.

Starting workers costs a full ``import torch`` (in the forkserver, at the first call; in every
worker where only spawn exists), so the DDP checks share one ``run_parallel`` call (the
module-scoped ``ddp_run`` fixture) and each test reads its own part of the outcome.
DistributedSampler needs no process group when ``num_replicas`` and
``rank`` are given, so its tests run in this process.
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import TensorDataset
from torch.utils.data.distributed import DistributedSampler

from ptnotes.ddp_example import ddp_step, make_dataset, make_model
from ptnotes.distributed import WorkerError, find_free_port, run_parallel

WORLD_SIZE = 2


# -- worker functions: module level, so that spawned processes can import them ----------------


def rank_sum(rank: int, world_size: int) -> float:
    """The example of run_parallel's docstring."""
    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value)  # sums across the group by default
    return value.item()


def _grads(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def ddp_checks(rank: int, world_size: int) -> dict[str, Any]:
    """Everything the DDP tests need, computed in one process group."""
    x, y = make_dataset()[:]
    half = len(x) // world_size
    x_mine, y_mine = x[rank * half : (rank + 1) * half], y[rank * half : (rank + 1) * half]

    sharded = DistributedDataParallel(make_model())
    F.mse_loss(sharded(x_mine), y_mine).backward()

    # Gradient accumulation: two micro-batches, the first without communication.
    accumulated = DistributedDataParallel(make_model())
    (x0, x1), (y0, y1) = x_mine.chunk(2), y_mine.chunk(2)
    with accumulated.no_sync():
        (F.mse_loss(accumulated(x0), y0) / 2).backward()
    local = _grads(accumulated.module)
    (F.mse_loss(accumulated(x1), y1) / 2).backward()  # this backward all-reduces

    default_sampler: DistributedSampler[int] = DistributedSampler(make_dataset(), seed=3)
    return {
        "rank": dist.get_rank(),
        "world_size": dist.get_world_size(),
        "rank_sum": rank_sum(rank, world_size),
        "sharded_grads": _grads(sharded.module),
        "no_sync_local_grads": local,
        "no_sync_grads": _grads(accumulated.module),
        "default_sampler": (default_sampler.rank, default_sampler.num_replicas),
        "default_sampler_indices": list(default_sampler),
        "train_step": ddp_step(rank, world_size),
    }


def raise_on_rank_one(rank: int, world_size: int) -> None:
    if rank == 1:
        raise ValueError("boom on rank one")
    dist.barrier()  # would wait for rank 1 until the process group's timeout


def exit_without_result(rank: int, world_size: int) -> None:
    os._exit(3)


def block_forever(rank: int, world_size: int) -> None:
    threading.Event().wait()


def takes_args(rank: int, world_size: int, scale: float) -> float:
    return scale * rank


def ignore_sigterm_and_hang(rank: int, world_size: int, ready: str) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    Path(ready, str(rank)).touch()
    threading.Event().wait()


def start_a_child(rank: int, world_size: int, fail: bool) -> int:
    """Start a long-lived child process and leave it running; return its pid."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    if fail:
        raise RuntimeError(f"failing with child {child.pid} alive")
    return child.pid


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    return inodes


def _address(hex_address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    host = bytes.fromhex(hex_address.split(":")[0])
    # /proc/net/tcp* print each 32-bit word of the address in host (little-endian) order
    raw = b"".join(host[i : i + 4][::-1] for i in range(0, len(host), 4))
    address = ipaddress.ip_address(raw)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def tcp_sockets(rank: int, world_size: int, caller_pid: int) -> list[tuple[str, str, str]]:
    """(local, remote, state) of the TCP sockets of the caller and of every worker, mid-run."""
    dist.barrier()  # every rank has joined: the store and the backend's pairs are open
    pids = [None] * world_size
    dist.all_gather_object(pids, os.getpid())
    inodes = _socket_inodes(caller_pid).union(*(_socket_inodes(p) for p in pids))
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                found.append((str(_address(fields[1])), str(_address(fields[2])), fields[3]))
    dist.barrier()
    return found


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ddp_run() -> list[dict[str, Any]]:
    return run_parallel(ddp_checks, WORLD_SIZE)


@pytest.fixture(scope="module")
def reference_grads() -> dict[str, torch.Tensor]:
    """Gradients of the mean loss over the whole dataset, in one process, no DDP."""
    return ddp_step(0, 1).grads


# -- run_parallel ---------------------------------------------------------------------------------


def test_results_come_back_in_rank_order(ddp_run: list[dict[str, Any]]) -> None:
    assert [(r["rank"], r["world_size"]) for r in ddp_run] == [(0, 2), (1, 2)]


def test_docstring_example_all_reduce_sums_across_ranks(ddp_run: list[dict[str, Any]]) -> None:
    assert [r["rank_sum"] for r in ddp_run] == [3.0, 3.0]


def test_worker_exception_raises_worker_error_with_rank_and_traceback() -> None:
    start = time.monotonic()
    with pytest.raises(WorkerError, match="rank 1") as caught:
        run_parallel(raise_on_rank_one, WORLD_SIZE, timeout=120.0)
    elapsed = time.monotonic() - start
    assert caught.value.rank == 1
    assert "Traceback (most recent call last)" in str(caught.value)
    assert "ValueError: boom on rank one" in str(caught.value)
    # Rank 0 was stuck in a barrier: it was terminated, not waited for until the timeout.
    assert elapsed < 60.0
    assert multiprocessing.active_children() == []


def test_worker_that_exits_without_a_result_raises_worker_error() -> None:
    with pytest.raises(WorkerError, match="exited with code 3 before sending a result"):
        run_parallel(exit_without_result, 1)


def test_call_past_its_timeout_raises_timeout_error_and_leaves_no_process() -> None:
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"rank\(s\) \[0\] did not finish within 1 s"):
        run_parallel(block_forever, 1, timeout=1.0)
    assert time.monotonic() - start < 30.0
    assert multiprocessing.active_children() == []


LISTEN = "0A"


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux's /proc/net/tcp")
def test_store_and_backend_use_the_loopback_interface_only() -> None:
    sockets = [s for rank in run_parallel(tcp_sockets, WORLD_SIZE, os.getpid()) for s in rank]
    listeners = [local for local, _, state in sockets if state == LISTEN]
    assert listeners, "the store's listening socket was not found"
    not_loopback = [
        (local, remote)
        for local, remote, state in sockets
        if not ipaddress.ip_address(local).is_loopback
        or (state != LISTEN and not ipaddress.ip_address(remote).is_loopback)
    ]
    assert not_loopback == []  # no listener on 0.0.0.0 or a public address, no traffic out


def _dead(pid: int) -> bool:
    """Gone, or a zombie waiting for init to reap it (it no longer runs)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def _wait_dead(pid: int, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while not _dead(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_children_of_a_worker_do_not_outlive_the_call() -> None:
    pids = run_parallel(start_a_child, 1, False)
    assert _wait_dead(pids[0])


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_children_of_a_failing_worker_do_not_outlive_the_call() -> None:
    with pytest.raises(WorkerError, match=r"failing with child (\d+) alive") as caught:
        run_parallel(start_a_child, 1, True)
    pid = int(re.search(r"failing with child (\d+) alive", str(caught.value)).group(1))
    assert _wait_dead(pid)


GRACE_S = 2.0  # run_parallel's documented grace, shared by all workers


def test_workers_that_ignore_sigterm_are_stopped_together_within_timeout_plus_grace(
    tmp_path: Path,
) -> None:
    """Stopped in parallel: timeout + one grace, not timeout + one grace per worker."""
    world_size, timeout = 3, 6.0
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        run_parallel(ignore_sigterm_and_hang, world_size, str(tmp_path), timeout=timeout)
    elapsed = time.monotonic() - start
    # every worker was ignoring SIGTERM when it was stopped, so the grace was spent once
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0", "1", "2"]
    assert timeout + GRACE_S - 0.5 < elapsed < timeout + GRACE_S + 1.5, elapsed
    assert multiprocessing.active_children() == []


def test_function_from_a_script_on_stdin_is_refused_before_starting_workers() -> None:
    script = (
        "from ptnotes.distributed import run_parallel\n"
        "def f(rank, world_size):\n"
        "    return rank\n"
        "try:\n"
        "    run_parallel(f, 1)\n"
        "except TypeError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "run_parallel() expects fn to be defined in a module or a script file" in done.stdout
    assert "<stdin>" in done.stdout


def test_find_free_port_rejects_a_host_that_is_not_a_str() -> None:
    with pytest.raises(
        TypeError, match="find_free_port\\(\\) expects host to be a str, got NoneType"
    ):
        find_free_port(None)  # type: ignore[arg-type]


def _local_function(rank: int, world_size: int) -> None:
    def nested(rank: int, world_size: int) -> None:
        pass

    run_parallel(nested, 2)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: run_parallel(rank_sum, 0), ValueError, "world_size to be an int >= 1, got int 0"),
        (lambda: run_parallel(rank_sum, -2), ValueError, "world_size to be an int >= 1"),
        (lambda: run_parallel(rank_sum, 2.0), TypeError, "world_size to be an int, got float"),
        (lambda: run_parallel(rank_sum, True), TypeError, "world_size to be an int, got bool"),
        (lambda: run_parallel(42, 2), TypeError, "fn to be callable, got int"),
        (lambda: run_parallel(lambda r, w: r, 2), TypeError, "fn to be picklable"),
        (lambda: _local_function(0, 1), TypeError, "fn to be picklable.*nested"),
        (lambda: run_parallel(takes_args, 2, lambda: 1), TypeError, "args to be picklable"),
        (lambda: run_parallel(rank_sum, 2, timeout=0), ValueError, "timeout to be a number > 0"),
        (lambda: run_parallel(rank_sum, 2, timeout=math.inf), ValueError, "timeout to be a finite"),
        (
            lambda: run_parallel(rank_sum, 2, timeout="5"),
            TypeError,
            "timeout to be an int or float",
        ),
        (
            lambda: run_parallel(rank_sum, 2, backend="carrier-pigeon"),
            ValueError,
            "backend to be a backend available",
        ),
        (
            lambda: run_parallel(rank_sum, 2, timeout=math.nan),
            ValueError,
            "timeout to be a number, not NaN",
        ),
        (lambda: run_parallel(rank_sum, 2, backend=None), TypeError, "backend to be a str"),
    ],
    ids=[
        "world_size-0",
        "world_size-negative",
        "world_size-float",
        "world_size-bool",
        "fn-not-callable",
        "fn-lambda",
        "fn-nested",
        "args-unpicklable",
        "timeout-0",
        "timeout-inf",
        "timeout-str",
        "backend-unknown",
        "timeout-nan",
        "backend-not-str",
    ],
)
def test_bad_input_is_rejected_before_any_process_starts(
    call: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        call()
    assert multiprocessing.active_children() == []


# -- DistributedDataParallel ----------------------------------------------------------------------


def test_ddp_gradients_on_sharded_data_equal_full_batch_gradients(
    ddp_run: list[dict[str, Any]], reference_grads: dict[str, torch.Tensor]
) -> None:
    for result in ddp_run:
        for name, grad in reference_grads.items():
            torch.testing.assert_close(result["sharded_grads"][name], grad)


def test_ddp_averages_gradients_rather_than_summing_them(
    ddp_run: list[dict[str, Any]], reference_grads: dict[str, torch.Tensor]
) -> None:
    grad = ddp_run[0]["sharded_grads"]["weight"]
    assert torch.allclose(grad, reference_grads["weight"])
    assert not torch.allclose(grad, WORLD_SIZE * reference_grads["weight"])


def test_ddp_leaves_bitwise_identical_gradients_on_every_rank(
    ddp_run: list[dict[str, Any]],
) -> None:
    first, second = (r["sharded_grads"] for r in ddp_run)
    assert all(torch.equal(first[name], second[name]) for name in first)


def test_no_sync_skips_the_all_reduce(ddp_run: list[dict[str, Any]]) -> None:
    first, second = (r["no_sync_local_grads"]["weight"] for r in ddp_run)
    assert not torch.allclose(first, second)


def test_no_sync_accumulation_then_synced_step_equals_big_batch_gradient(
    ddp_run: list[dict[str, Any]], reference_grads: dict[str, torch.Tensor]
) -> None:
    for result in ddp_run:
        for name, grad in reference_grads.items():
            torch.testing.assert_close(result["no_sync_grads"][name], grad)


def test_train_step_matches_the_single_process_step(ddp_run: list[dict[str, Any]]) -> None:
    reference = ddp_step(0, 1)
    for result in (r["train_step"] for r in ddp_run):
        assert result.grads_equal_across_ranks
        assert result.loss == pytest.approx(reference.loss)
        for name, grad in reference.grads.items():
            torch.testing.assert_close(result.grads[name], grad)
        torch.testing.assert_close(result.weight_after_step, reference.weight_after_step)


def test_ddp_step_without_a_process_group_needs_world_size_one() -> None:
    with pytest.raises(ValueError, match=r"the process group's rank and world size, \(0, 1\)"):
        ddp_step(0, 2)


# -- DistributedSampler ---------------------------------------------------------------------------


def shards(
    size: int, world_size: int, *, shuffle: bool, drop_last: bool = False, epoch: int = 0
) -> list[list[int]]:
    """The indices each rank's DistributedSampler yields for a dataset of ``size`` samples."""
    dataset = TensorDataset(torch.arange(size))
    result = []
    for rank in range(world_size):
        sampler: DistributedSampler[int] = DistributedSampler(
            dataset,
            num_replicas=world_size,
            rank=rank,
            shuffle=shuffle,
            drop_last=drop_last,
        )
        sampler.set_epoch(epoch)
        result.append(list(sampler))
    return result


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize(("size", "world_size"), [(16, 2), (12, 4), (9, 3)])
def test_sampler_covers_the_dataset_exactly_once_per_epoch(
    size: int, world_size: int, shuffle: bool
) -> None:
    parts = shards(size, world_size, shuffle=shuffle)
    assert all(len(part) == size // world_size for part in parts)
    assert sorted(i for part in parts for i in part) == list(range(size))


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize(("size", "world_size"), [(7, 2), (10, 4), (2, 5)])
def test_sampler_pads_an_uneven_dataset_by_repeating_its_first_indices(
    size: int, world_size: int, shuffle: bool
) -> None:
    """drop_last=False: every rank gets ceil(size / world_size) indices.

    The sampler appends the first ``padding`` indices of the epoch's order again (cycling
    when ``padding > size``), so a few samples are seen twice in the epoch and no rank
    waits on another with a shorter shard.
    """
    parts = shards(size, world_size, shuffle=shuffle)
    per_rank = math.ceil(size / world_size)
    padding = per_rank * world_size - size
    assert all(len(part) == per_rank for part in parts)
    counts = Counter(i for part in parts for i in part)
    assert set(counts) == set(range(size))  # every sample is seen
    assert sum(counts.values()) - size == padding  # ... and `padding` extra draws
    if not shuffle:  # the order is range(size): the repeated ones are the first
        expected = Counter(range(size)) + Counter(i % size for i in range(padding))
        assert counts == expected


def test_sampler_drop_last_drops_the_tail_instead_of_padding() -> None:
    parts = shards(7, 2, shuffle=False, drop_last=True)
    assert parts == [[0, 2, 4], [1, 3, 5]]


def test_sampler_without_shuffle_strides_rather_than_splits() -> None:
    assert shards(8, 2, shuffle=False) == [[0, 2, 4, 6], [1, 3, 5, 7]]


def test_sampler_set_epoch_reshuffles_identically_on_every_rank() -> None:
    first, second = shards(16, 2, shuffle=True, epoch=0), shards(16, 2, shuffle=True, epoch=1)
    assert first != second
    for parts in (first, second):
        assert sorted(parts[0] + parts[1]) == list(range(16))


def test_sampler_reads_rank_and_world_size_from_the_process_group(
    ddp_run: list[dict[str, Any]],
) -> None:
    assert [r["default_sampler"] for r in ddp_run] == [(0, 2), (1, 2)]
    first, second = (r["default_sampler_indices"] for r in ddp_run)
    assert sorted(first + second) == list(range(16))
