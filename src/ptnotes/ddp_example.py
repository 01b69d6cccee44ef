"""One DistributedDataParallel training step on the CPU, for ``torchrun`` and ``run_parallel``.

Run it on two processes with::

    torchrun --standalone --nproc-per-node 2 -m ptnotes.ddp_example

(``--standalone`` picks a free port, and so does a one-node run given no
``--master-port``; pass ``--master-port`` to choose the port.) Each
process trains a copy of a tiny linear model on its own share of a synthetic dataset
(:class:`~torch.utils.data.DistributedSampler`), and ``DistributedDataParallel``
averages the gradients during ``backward()``. Rank 0 prints one line: the loss,
whether every rank holds the same gradients, and whether they match the gradients of
one process on the whole dataset (:func:`torch.allclose`: in float64 they differ in
the last bits).

The step itself is :func:`ptnotes.training.train_step`; :func:`ddp_step` only sets it up,
and runs under :func:`ptnotes.distributed.run_parallel` too::

    run_parallel(ddp_step, 2)  # a list of two StepResult, one per rank
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from ptnotes.training import train_step
from ptnotes.validation import argument_error, check_int

__all__ = ["StepResult", "ddp_step", "main", "make_dataset", "make_model"]

DATASET_SIZE = 16
FEATURES = 4
LEARNING_RATE = 0.1


@dataclass(frozen=True)
class StepResult:
    """What one process saw during one training step.

    Attributes:
        rank: the process's rank (0 for the single-process reference).
        world_size: the number of processes.
        indices: the dataset indices this process trained on.
        loss: the mean loss over the whole dataset (averaged across processes).
        grads: parameter name to gradient, after ``backward()``.
        grads_equal_across_ranks: whether every rank holds exactly the same gradients.
        weight_after_step: the weight after one SGD step (``lr=0.1``).
    """

    rank: int
    world_size: int
    indices: list[int]
    loss: float
    grads: dict[str, torch.Tensor]
    grads_equal_across_ranks: bool
    weight_after_step: torch.Tensor


def make_dataset(size: int = DATASET_SIZE, features: int = FEATURES) -> TensorDataset:
    """A synthetic regression dataset in float64, the same in every process.

    Examples:
        >>> from ptnotes.ddp_example import make_dataset
        >>> x, y = make_dataset()[:]
        >>> x.shape, y.shape, x.dtype
        (torch.Size([16, 4]), torch.Size([16, 1]), torch.float64)
    """
    size = check_int(make_dataset, "size", size, minimum=1)
    features = check_int(make_dataset, "features", features, minimum=1)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(size, features, generator=generator, dtype=torch.float64, device="cpu")
    true_weight = torch.arange(1.0, features + 1, dtype=torch.float64, device="cpu")
    noise = torch.randn(size, 1, generator=generator, dtype=torch.float64, device="cpu")
    return TensorDataset(x, x @ true_weight.unsqueeze(1) + 0.1 * noise)


def make_model(features: int = FEATURES) -> nn.Linear:
    """A float64 linear model with the same initial weights in every process.

    The weights come from a private generator, so they are the same whatever the global
    random state; building the :class:`torch.nn.Linear` (whose own initialisation is then
    overwritten) still draws from the global generator and advances it.

    Examples:
        >>> import torch
        >>> from ptnotes.ddp_example import make_model
        >>> state = torch.get_rng_state()
        >>> make_model()
        Linear(in_features=4, out_features=1, bias=True)
        >>> torch.equal(torch.get_rng_state(), state)
        False
        >>> _ = torch.manual_seed(123)
        >>> torch.equal(make_model().weight, make_model().weight)
        True
    """
    features = check_int(make_model, "features", features, minimum=1)
    model = nn.Linear(features, 1, dtype=torch.float64, device="cpu")
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(
                0.1 * torch.randn(parameter.shape, generator=generator, dtype=torch.float64)
            )
    return model


def _equal_on_all_ranks(tensor: torch.Tensor, world_size: int) -> bool:
    gathered = [torch.empty_like(tensor) for _ in range(world_size)]
    dist.all_gather(gathered, tensor)
    return all(torch.equal(other, gathered[0]) for other in gathered)


def ddp_step(rank: int, world_size: int) -> StepResult:
    """One SGD step of :func:`make_model` on this rank's share of :func:`make_dataset`.

    The step itself is :func:`ptnotes.training.train_step`; this function only sets it
    up. In an initialised process group (``torchrun``,
    :func:`ptnotes.distributed.run_parallel`) the model is wrapped in
    ``DistributedDataParallel`` and each rank trains on its
    :class:`~torch.utils.data.DistributedSampler` share; without one, ``ddp_step(0, 1)``
    is the single-process reference on the whole dataset. The dataset size must be a
    multiple of ``world_size`` (16 samples: 1, 2, 4, 8 or 16 processes), so that every
    rank's mean loss weighs its samples like the full-batch mean.

    Args:
        rank: this process's rank, as :func:`torch.distributed.get_rank` reports it.
        world_size: the number of processes in the group.

    Returns:
        This rank's :class:`StepResult`.

    Raises:
        TypeError: if ``rank`` or ``world_size`` is not an int.
        ValueError: if ``rank``/``world_size`` disagree with the process group (or,
            without one, are not ``0, 1``), or the dataset does not split evenly.

    Examples:
        >>> from ptnotes.ddp_example import ddp_step
        >>> result = ddp_step(0, 1)  # no process group: the single-process reference
        >>> result.indices == list(range(16)), sorted(result.grads), round(result.loss, 4)
        (True, ['bias', 'weight'], 38.2168)
    """
    world_size = check_int(ddp_step, "world_size", world_size, minimum=1)
    rank = check_int(ddp_step, "rank", rank, minimum=0, maximum=world_size - 1)
    group = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    if (rank, world_size) != group:
        expected = f"the process group's rank and world size, {group}"
        got = f"{(rank, world_size)}"
        raise argument_error(ddp_step, "(rank, world_size)", (rank, world_size), expected, got=got)
    dataset = make_dataset()
    if len(dataset) % world_size:
        expected = f"a divisor of the dataset size, {len(dataset)}"
        raise argument_error(ddp_step, "world_size", world_size, expected)
    sampler: DistributedSampler[int] = DistributedSampler(
        dataset, num_replicas=world_size, rank=rank, shuffle=False
    )
    loader = DataLoader(dataset, batch_size=len(dataset) // world_size, sampler=sampler)
    batch = next(iter(loader))
    plain = make_model()
    # CPU: no device_ids. DDP all-reduces the gradients during backward().
    model = DistributedDataParallel(plain) if dist.is_initialized() else plain
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    loss = torch.tensor(train_step(model, batch, F.mse_loss, optimizer), dtype=torch.float64)
    grads = {n: p.grad.clone() for n, p in plain.named_parameters() if p.grad is not None}
    equal = True
    if dist.is_initialized():
        equal = all(_equal_on_all_ranks(grad, world_size) for grad in grads.values())
        dist.all_reduce(loss)
    return StepResult(
        rank=rank,
        world_size=world_size,
        indices=list(sampler),
        loss=loss.item() / world_size,
        grads=grads,
        grads_equal_across_ranks=equal,
        weight_after_step=plain.weight.detach().clone(),
    )


def _leave_group() -> None:
    """Destroy the process group once its worker threads have let go of every tensor.

    Gloo's worker threads drop a finished collective's tensors after waking its caller; the
    last reference to a tensor that Python has already let go of needs the GIL. Torch 2.4
    destroys the group holding the GIL while it joins those threads, so a drop still pending
    at that moment deadlocked. Sleeping releases the GIL long enough for the workers to
    finish first (no hang in 20 runs on a loaded machine, against 4 in 31 without).
    """
    dist.barrier()
    time.sleep(0.1)
    dist.destroy_process_group()


def main() -> int:
    """Entry point for ``torchrun -m ptnotes.ddp_example``; returns the exit status.

    Joins the process group described by ``torchrun``'s environment variables (gloo),
    runs :func:`ddp_step`, and on rank 0 prints the result: this is a script, and
    its output is the point. Exits with 1 if the gradients differ across ranks (compared
    exactly) or differ from the single-process reference beyond the tolerance of
    :func:`torch.allclose`.
    """
    dist.init_process_group("gloo")
    try:
        result = ddp_step(dist.get_rank(), dist.get_world_size())
    except BaseException:
        dist.destroy_process_group()  # no barrier: the other ranks may never reach it
        raise
    _leave_group()
    reference = ddp_step(0, 1)
    matches = all(torch.allclose(result.grads[n], g) for n, g in reference.grads.items())
    if result.rank == 0:
        print(
            f"ddp_example: world_size={result.world_size} loss={result.loss:.6f} "
            f"grads_equal_across_ranks={result.grads_equal_across_ranks} "
            f"matches_single_process={matches}",
            flush=True,
        )
    return 0 if result.grads_equal_across_ranks and matches else 1


if __name__ == "__main__":
    raise SystemExit(main())
