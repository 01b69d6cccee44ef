"""ptnotes.checkpoint: a resumed run equals the uninterrupted one, bit for bit."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from ptnotes.checkpoint import load_checkpoint, save_checkpoint

Run = tuple[nn.Module, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]


def make_run() -> Run:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.2), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    return model, optimizer, scheduler


def train(run: Run, steps: range) -> None:
    model, optimizer, scheduler = run
    for step in steps:
        generator = torch.Generator().manual_seed(step)  # batch `step` is the same in both runs
        x, y = torch.randn(4, 3, generator=generator), torch.randn(4, 1, generator=generator)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()  # dropout draws from the global RNG
        optimizer.step()
        scheduler.step()


def test_resumed_training_equals_uninterrupted_training_bit_for_bit(tmp_path: Path) -> None:
    reference = make_run()
    train(reference, range(6))

    first = make_run()
    train(first, range(3))
    path = tmp_path / "ckpt.pt"
    save_checkpoint(path, *first, step=3, rng=torch.get_rng_state())

    torch.manual_seed(123)  # a fresh process: other weights, other RNG state
    model = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.2), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    extra = load_checkpoint(path, model, optimizer, scheduler)
    torch.set_rng_state(extra["rng"])
    train((model, optimizer, scheduler), range(extra["step"], 6))

    for resumed, uninterrupted in zip(model.parameters(), reference[0].parameters(), strict=True):
        assert torch.equal(resumed, uninterrupted)
    assert scheduler.get_last_lr() == reference[2].get_last_lr()
    assert (
        optimizer.state_dict()["state"][0]["step"] == reference[1].state_dict()["state"][0]["step"]
    )


def test_load_without_optimizer_restores_only_the_model(tmp_path: Path) -> None:
    model, optimizer, _ = make_run()
    save_checkpoint(tmp_path / "ckpt.pt", model, optimizer)
    copy = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.2), nn.Tanh(), nn.Linear(8, 1))
    assert load_checkpoint(tmp_path / "ckpt.pt", copy) == {}
    assert all(
        torch.equal(a, b) for a, b in zip(copy.parameters(), model.parameters(), strict=True)
    )


def test_extra_values_come_back(tmp_path: Path) -> None:
    model, optimizer, scheduler = make_run()
    save_checkpoint(tmp_path / "c.pt", model, optimizer, scheduler, epoch=7, note="best", loss=0.5)
    assert load_checkpoint(tmp_path / "c.pt", model) == {"epoch": 7, "note": "best", "loss": 0.5}


def test_load_refuses_a_scheduler_the_checkpoint_lacks(tmp_path: Path) -> None:
    model, optimizer, scheduler = make_run()
    save_checkpoint(tmp_path / "c.pt", model, optimizer)
    with pytest.raises(ValueError, match="saved without a scheduler"):
        load_checkpoint(tmp_path / "c.pt", model, optimizer, scheduler)


def test_load_refuses_a_file_save_checkpoint_did_not_write(tmp_path: Path) -> None:
    model, _, _ = make_run()
    torch.save(model.state_dict(), tmp_path / "weights.pt")
    with pytest.raises(
        ValueError,
        match="written by save_checkpoint, got a file without the keys",
    ):
        load_checkpoint(tmp_path / "weights.pt", model)


class NotAWeight:
    pass


def test_load_refuses_arbitrary_pickled_objects(tmp_path: Path) -> None:
    model, optimizer, _ = make_run()
    save_checkpoint(tmp_path / "c.pt", model, optimizer, evil=NotAWeight())
    with pytest.raises(Exception, match="Weights only load failed"):
        load_checkpoint(tmp_path / "c.pt", model)


MODEL, OPTIMIZER, SCHEDULER = make_run()

BAD_SAVE: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"path": 3}, TypeError, "path to be a str or os.PathLike, got int"),
    ({"path": io.BytesIO()}, TypeError, "path to be a str or os.PathLike, got BytesIO"),
    ({"model": MODEL.state_dict()}, TypeError, "model to be a torch.nn.Module, got OrderedDict"),
    ({"optimizer": None}, TypeError, "optimizer to be a torch.optim.Optimizer, got None"),
    ({"scheduler": "StepLR"}, TypeError, r"scheduler to be a scheduler \(an object with state"),
]

BAD_LOAD: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"path": None}, TypeError, "path to be a str or os.PathLike, got None"),
    ({"model": "model.pt"}, TypeError, "model to be a torch.nn.Module, got str"),
    ({"optimizer": SCHEDULER}, TypeError, "optimizer to be a torch.optim.Optimizer, got StepLR"),
    ({"scheduler": 1}, TypeError, r"scheduler to be a scheduler \(an object with state"),
    ({"map_location": 0}, TypeError, "map_location to be a str, a torch.device or None, got int"),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD_SAVE)
def test_save_checkpoint_names_the_bad_argument(
    tmp_path: Path, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"path": tmp_path / "c.pt", "model": MODEL, "optimizer": OPTIMIZER}
    with pytest.raises(error, match=f"save_checkpoint\\(\\) expects {message}"):
        save_checkpoint(**(arguments | kwargs))


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD_LOAD)
def test_load_checkpoint_names_the_bad_argument(
    tmp_path: Path, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    save_checkpoint(tmp_path / "c.pt", MODEL, OPTIMIZER, SCHEDULER)
    arguments: dict[str, Any] = {"path": tmp_path / "c.pt", "model": MODEL}
    with pytest.raises(error, match=f"load_checkpoint\\(\\) expects {message}"):
        load_checkpoint(**(arguments | kwargs))
