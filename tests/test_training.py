"""ptnotes.training: one optimisation step, and gradient accumulation that equals it."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from torch import nn

from ptnotes.training import accumulate_step, train_step

Batch = tuple[torch.Tensor, torch.Tensor]


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).double()


def make_batch(n: int = 8) -> Batch:
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(n, 3, dtype=torch.float64, generator=generator)
    y = torch.randn(n, 2, dtype=torch.float64, generator=generator)
    return x, y


def split(batch: Batch, sizes: list[int]) -> list[Batch]:
    x, y = batch
    return list(zip(x.split(sizes), y.split(sizes), strict=True))


def total_grad_norm(model: nn.Module) -> float:
    norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
    return float(torch.stack(norms).norm())


def parameters_after(step: Any, data: Any, **kwargs: Any) -> tuple[list[torch.Tensor], float]:
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    loss = step(model, data, nn.MSELoss(), optimizer, **kwargs)
    return [p.detach().clone() for p in model.parameters()], loss


# -- train_step -------------------------------------------------------------------------


def test_train_step_returns_the_loss_before_the_step() -> None:
    model, batch = make_model(), make_batch()
    expected = nn.MSELoss()(model(batch[0]), batch[1]).item()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    assert train_step(model, batch, nn.MSELoss(), optimizer) == expected


def test_train_step_lowers_the_loss() -> None:
    model, batch = make_model(), make_batch()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = [train_step(model, batch, nn.MSELoss(), optimizer) for _ in range(3)]
    assert losses[2] < losses[1] < losses[0]


def test_train_step_ignores_stale_gradients() -> None:
    clean, _ = parameters_after(train_step, make_batch())
    model = make_model()
    for p in model.parameters():
        p.grad = torch.full_like(p, 100.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    train_step(model, make_batch(), nn.MSELoss(), optimizer)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), clean, strict=True))


@pytest.mark.parametrize("max_grad_norm", [0.01, 0.1])
def test_clipping_bounds_the_total_gradient_norm(max_grad_norm: float) -> None:
    model, batch = make_model(), make_batch()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step(model, batch, nn.MSELoss(), optimizer, max_grad_norm=max_grad_norm)
    assert total_grad_norm(model) <= max_grad_norm * (1 + 1e-6)


def test_clipping_leaves_small_gradients_unchanged() -> None:
    model, batch = make_model(), make_batch()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    train_step(model, batch, nn.MSELoss(), optimizer)
    unclipped = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    train_step(model, batch, nn.MSELoss(), optimizer, max_grad_norm=1e6)
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), unclipped, strict=True))


# -- accumulate_step --------------------------------------------------------------------


@pytest.mark.parametrize(
    "sizes",
    [[8], [4, 4], [2, 2, 2, 2], [1, 3, 4], [5, 2, 1], [1, 7]],
    ids=["one", "2-equal", "4-equal", "unequal-3", "unequal-3-desc", "unequal-2"],
)
def test_accumulation_matches_one_big_batch_step(sizes: list[int]) -> None:
    batch = make_batch()
    want, want_loss = parameters_after(train_step, batch)
    got, got_loss = parameters_after(accumulate_step, split(batch, sizes))
    assert all(torch.allclose(g, w, rtol=1e-12, atol=1e-14) for g, w in zip(got, want, strict=True))
    assert math.isclose(got_loss, want_loss, rel_tol=1e-12)


def test_averaging_over_micro_batch_count_is_wrong_for_unequal_sizes() -> None:
    model, batch = make_model(), make_batch()
    loss_fn = nn.MSELoss()
    with torch.no_grad():
        naive = sum(loss_fn(model(x), y).item() for x, y in split(batch, [1, 7])) / 2
        whole = loss_fn(model(batch[0]), batch[1]).item()
    assert not math.isclose(naive, whole)


@pytest.mark.parametrize("sizes", [[4, 4], [1, 7]])
def test_accumulation_with_clipping_matches_clipped_big_batch(sizes: list[int]) -> None:
    batch = make_batch()
    want, _ = parameters_after(train_step, batch, max_grad_norm=0.05)
    got, _ = parameters_after(accumulate_step, split(batch, sizes), max_grad_norm=0.05)
    assert all(torch.allclose(g, w, rtol=1e-12, atol=1e-14) for g, w in zip(got, want, strict=True))


def test_accumulation_works_with_cross_entropy_on_float32() -> None:
    torch.manual_seed(0)
    x, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
    results = []
    for data, step in [
        ((x, y), train_step),
        (list(zip(x.split([2, 4]), y.split([2, 4]), strict=True)), accumulate_step),
    ]:
        torch.manual_seed(1)
        model = nn.Linear(4, 3)
        step(model, data, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=1.0))
        results.append(model.weight.detach())
    assert torch.allclose(results[0], results[1], atol=1e-6)


# -- bad inputs -------------------------------------------------------------------------


def sgd(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.1)


@pytest.mark.parametrize("step", [train_step, accumulate_step])
@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (
            {"max_grad_norm": 0.0},
            ValueError,
            "max_grad_norm to be a number > 0, got float 0.0",
        ),
        ({"max_grad_norm": -1}, ValueError, "max_grad_norm to be a number > 0, got int -1"),
        ({"max_grad_norm": math.inf}, ValueError, "a finite number, got float inf"),
        ({"max_grad_norm": math.nan}, ValueError, "not NaN, got float nan"),
        ({"max_grad_norm": "1"}, TypeError, "max_grad_norm to be an int or float, got str"),
        ({"model": lambda x: x}, TypeError, "model to be a torch.nn.Module, got function"),
        ({"optimizer": "sgd"}, TypeError, "optimizer to be a torch.optim.Optimizer, got str"),
        ({"loss_fn": "mse"}, TypeError, "loss_fn to be callable, got str"),
        (
            {"loss_fn": nn.MSELoss(reduction="none")},
            ValueError,
            r"scalar \(0-dim\) tensor .*, got shape \(\d, 2\)",
        ),
    ],
    ids=[
        "clip-zero",
        "clip-negative",
        "clip-inf",
        "clip-nan",
        "clip-str",
        "model",
        "optimizer",
        "loss-fn",
        "loss-not-scalar",
    ],
)
def test_steps_reject_bad_arguments(
    step: Any, bad: dict[str, Any], error: type[Exception], message: str
) -> None:
    model = make_model()
    data: Any = make_batch() if step is train_step else split(make_batch(), [4, 4])
    arguments: dict[str, Any] = {
        "model": model,
        "loss_fn": nn.MSELoss(),
        "optimizer": sgd(model),
        **bad,
    }
    max_grad_norm = arguments.pop("max_grad_norm", None)
    with pytest.raises(error, match=message):
        step(
            arguments["model"],
            data,
            arguments["loss_fn"],
            arguments["optimizer"],
            max_grad_norm=max_grad_norm,
        )


@pytest.mark.parametrize(
    "batch", [torch.zeros(4, 3), (torch.zeros(4, 3),), None], ids=["tensor", "1-tuple", "none"]
)
def test_train_step_rejects_batch_that_is_not_a_pair(batch: Any) -> None:
    model = make_model()
    with pytest.raises(TypeError, match=r"batch to be an \(inputs, targets\) pair"):
        train_step(model, batch, nn.MSELoss(), sgd(model))


@pytest.mark.parametrize(
    ("micro_batches", "error", "message"),
    [
        ([], ValueError, "at least one micro-batch, got none"),
        (
            (mb for mb in [make_batch()]),
            TypeError,
            "micro_batches to be a sequence .* got generator",
        ),
        (
            [make_batch(), torch.zeros(3)],
            TypeError,
            r"micro_batches\[1\] to be an \(inputs, targets\) pair",
        ),
        (
            [(torch.zeros(0, 3), torch.zeros(0, 2))],
            ValueError,
            r"micro_batches\[0\] to be a batch with at least one sample",
        ),
        (
            [([1.0, 2.0], torch.zeros(2, 2))],
            TypeError,
            r"inputs of micro_batches\[0\] to be a tensor",
        ),
    ],
    ids=["empty", "generator", "not-a-pair", "no-sample", "inputs-list"],
)
def test_accumulate_step_rejects_bad_micro_batches(
    micro_batches: Any, error: type[Exception], message: str
) -> None:
    model = make_model()
    with pytest.raises(error, match=message):
        accumulate_step(model, micro_batches, nn.MSELoss(), sgd(model))


@pytest.mark.parametrize("accumulate", [False, True], ids=["train_step", "accumulate_step"])
def test_value_error_from_the_loss_names_the_batch_and_changes_nothing(accumulate: bool) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 2), nn.BatchNorm1d(2))
    optimizer = sgd(model)
    before = [t.detach().clone() for t in [*model.parameters(), *model.buffers()]]
    inputs = torch.tensor([[1.0], [2.0]])
    good, bad = (inputs, torch.tensor([0, 1])), (inputs, torch.tensor([0, 1, 1]))

    # three targets against two outputs: torch's own ValueError from cross_entropy
    def step() -> float:
        if accumulate:
            return accumulate_step(model, [good, bad], nn.CrossEntropyLoss(), optimizer)
        return train_step(model, bad, nn.CrossEntropyLoss(), optimizer)

    message = r"(batch|\]) to be a batch .* ValueError from loss_fn: Expected"
    with pytest.raises(ValueError, match=message):
        step()
    after = [*model.parameters(), *model.buffers()]
    assert all(torch.equal(a, b) for a, b in zip(after, before, strict=True))
    assert all(p.grad is None for p in model.parameters())
