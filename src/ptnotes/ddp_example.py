"""One DistributedDataParallel training step on the CPU, for ``torchrun`` and ``run_parallel``.

Run it on two processes with::

    torchrun --standalone --nproc-per-node 2 -m ptnotes.ddp_example

(``--standalone`` picks a free port; without it ``torchrun`` uses port 29500.) Each
process trains a copy of a tiny linear model on its own share of a synthetic dataset
(:class:`~torch.utils.data.DistributedSampler`), and ``DistributedDataParallel``
averages the gradients during ``backward()``. Rank 0 prints one line: the loss,
whether every rank holds the same gradients, and whether they equal the gradients of
one process on the whole dataset.

The same step runs under :func:`ptnotes.distributed.run_parallel`::

    run_parallel(train_step, 2)  # a list of two StepResult, one per rank
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

__all__ = [
    "StepResult",
    "main",
    "make_dataset",
    "make_model",
    "single_process_step",
    "train_step",
]

DATASET_SIZE = 16
FEATURES = 4
LEARNING_RATE = 0.1


@dataclass(frozen=True)
class StepResult:
    """What one process saw during one training step.

    Attributes:
        rank: the process's rank (0 for :func:`single_process_step`).
        world_size: the number of processes.
        indices: the dataset indices this process trained on.
        loss: the mean loss over the whole dataset (averaged across processes).
        grads: parameter name to gradient, after ``backward()``.
        grads_equal_across_ranks: whether every rank holds exactly the same gradients.
        weight_after_step: the weight after one SGD step.
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
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive int, got {size!r}")
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(size, features, generator=generator, dtype=torch.float64, device="cpu")
    true_weight = torch.arange(1.0, features + 1, dtype=torch.float64, device="cpu")
    noise = torch.randn(size, 1, generator=generator, dtype=torch.float64, device="cpu")
    return TensorDataset(x, x @ true_weight.unsqueeze(1) + 0.1 * noise)


def make_model(features: int = FEATURES) -> nn.Linear:
    """A float64 linear model with the same initial weights in every process.

    The weights come from a private generator, so the global random state is left
    alone.

    Examples:
        >>> from ptnotes.ddp_example import make_model
        >>> make_model()
        Linear(in_features=4, out_features=1, bias=True)
    """
    model = nn.Linear(features, 1, dtype=torch.float64, device="cpu")
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(
                0.1 * torch.randn(parameter.shape, generator=generator, dtype=torch.float64)
            )
    return model


def _sgd_step(model: nn.Module) -> torch.Tensor:
    """Plain SGD, written out; return the weight after the step.

    ``torch.optim.SGD(model.parameters(), lr=LEARNING_RATE).step()`` computes the same
    update. Its first call imports the compiler stack (``torch._dynamo``), seconds of
    start-up for one step of a 5-parameter model in a process that has no other use
    for it, such as :func:`single_process_step` (DDP imports it anyway).
    """
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.grad is not None:
                parameter.sub_(LEARNING_RATE * parameter.grad)
    weight: torch.Tensor = next(model.parameters()).detach().clone()
    return weight


def single_process_step() -> StepResult:
    """The reference: one step of the same model on the whole dataset, in one process.

    Examples:
        >>> from ptnotes.ddp_example import single_process_step
        >>> result = single_process_step()
        >>> result.indices == list(range(16)), sorted(result.grads)
        (True, ['bias', 'weight'])
    """
    model = make_model()
    x, y = make_dataset()[:]
    loss = F.mse_loss(model(x), y)
    loss.backward()  # type: ignore[no-untyped-call]  # unannotated in torch
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    return StepResult(
        rank=0,
        world_size=1,
        indices=list(range(len(x))),
        loss=loss.item(),
        grads=grads,
        grads_equal_across_ranks=True,
        weight_after_step=_sgd_step(model),
    )


def _equal_on_all_ranks(tensor: torch.Tensor, world_size: int) -> bool:
    gathered = [torch.empty_like(tensor) for _ in range(world_size)]
    dist.all_gather(gathered, tensor)
    return all(torch.equal(other, gathered[0]) for other in gathered)


def train_step(rank: int, world_size: int) -> StepResult:
    """One DDP training step of :func:`make_model` on this rank's share of the data.

    Call it in every process of an initialised process group (``torchrun`` and
    :func:`ptnotes.distributed.run_parallel` both provide one). The dataset size must
    be a multiple of ``world_size`` (16 samples: 1, 2, 4, 8 or 16 processes), so that
    every rank's mean loss weighs its samples like the full-batch mean.

    Args:
        rank: this process's rank, as :func:`torch.distributed.get_rank` reports it.
        world_size: the number of processes in the group.

    Returns:
        This rank's :class:`StepResult`.

    Raises:
        RuntimeError: if no process group is initialised, or ``rank``/``world_size``
            disagree with it.
        ValueError: if the dataset does not split evenly across ``world_size`` ranks.
    """
    if not dist.is_initialized():
        raise RuntimeError("train_step() needs an initialised process group")
    if (rank, world_size) != (dist.get_rank(), dist.get_world_size()):
        raise RuntimeError(
            f"rank={rank}, world_size={world_size} disagree with the process group "
            f"({dist.get_rank()}, {dist.get_world_size()})"
        )
    dataset = make_dataset()
    if len(dataset) % world_size:
        raise ValueError(f"{len(dataset)} samples do not split evenly across {world_size} ranks")
    sampler: DistributedSampler[int] = DistributedSampler(
        dataset, num_replicas=world_size, rank=rank, shuffle=False
    )
    loader = DataLoader(dataset, batch_size=len(dataset) // world_size, sampler=sampler)
    x, y = next(iter(loader))
    model = DistributedDataParallel(make_model())  # CPU: no device_ids
    loss = F.mse_loss(model(x), y)
    # all-reduce: every rank ends with the average of the ranks' gradients
    loss.backward()  # type: ignore[no-untyped-call]  # unannotated in torch
    grads = {
        name: p.grad.clone() for name, p in model.module.named_parameters() if p.grad is not None
    }
    equal = all(_equal_on_all_ranks(grad, world_size) for grad in grads.values())
    mean_loss = loss.detach().clone()
    dist.all_reduce(mean_loss)
    return StepResult(
        rank=rank,
        world_size=world_size,
        indices=list(sampler),
        loss=mean_loss.item() / world_size,
        grads=grads,
        grads_equal_across_ranks=equal,
        weight_after_step=_sgd_step(model.module),
    )


def main() -> int:
    """Entry point for ``torchrun -m ptnotes.ddp_example``; returns the exit status.

    Joins the process group described by ``torchrun``'s environment variables (gloo),
    runs :func:`train_step`, and on rank 0 prints the result: this is a script, and
    its output is the point. Exits with 1 if the gradients differ across ranks or from
    the single-process reference.
    """
    dist.init_process_group("gloo")
    try:
        result = train_step(dist.get_rank(), dist.get_world_size())
    finally:
        dist.destroy_process_group()
    reference = single_process_step()
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
