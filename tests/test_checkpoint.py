"""ptnotes.checkpoint: a resumed run equals the uninterrupted one, bit for bit."""

from __future__ import annotations

import datetime
import io
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
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


def test_save_refuses_an_object_weights_only_would_not_load(tmp_path: Path) -> None:
    model, optimizer, _ = make_run()
    with pytest.raises(TypeError, match=r"expects evil to be a value that torch.load"):
        save_checkpoint(tmp_path / "c.pt", model, optimizer, evil=NotAWeight())
    assert list(tmp_path.iterdir()) == []


def test_load_refuses_arbitrary_pickled_objects_without_recommending_weights_only_false(
    tmp_path: Path,
) -> None:
    model, optimizer, _ = make_run()
    payload = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": None,
        "extra": {"evil": NotAWeight()},
    }
    torch.save(payload, tmp_path / "c.pt")
    with pytest.raises(ValueError, match="NotAWeight object that weights_only=True refuses") as e:
        load_checkpoint(tmp_path / "c.pt", model)
    assert "weights_only=False" not in str(e.value)


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


# -- saving is atomic: a failed or killed save never damages the file it replaces -------


def _good_file(path: Path) -> bytes:
    model, optimizer, scheduler = make_run()
    save_checkpoint(path, model, optimizer, scheduler, epoch=1)
    return path.read_bytes()


def _temporary_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(".*.tmp"))


@pytest.mark.parametrize(
    ("value", "kind", "where"),
    [
        (np.mean([1.0, 2.0]), "numpy.float64", "value"),
        (np.random.get_state(), "numpy.ndarray", "value[1]"),
        (datetime.datetime(2026, 1, 1), "datetime.datetime", "value"),
        (np.zeros(3), "numpy.ndarray", "value"),
        ({"history": [1.0, np.float32(2.0)]}, "numpy.float32", "value['history'][1]"),
        (lambda: 0, "function", "value"),
    ],
    ids=["np.mean", "np.random.get_state", "datetime", "ndarray", "nested-np.float32", "lambda"],
)
def test_failed_save_names_the_key_and_type_and_leaves_the_old_file_byte_identical(
    tmp_path: Path, value: object, kind: str, where: str, unchanged: Any
) -> None:
    path = tmp_path / "ckpt.pt"
    _good_file(path)
    model, optimizer, _ = make_run()
    with (
        pytest.raises(
            TypeError, match=rf"save_checkpoint\(\) expects value to be .* got {kind}"
        ) as e,
        unchanged(path, model, optimizer),
    ):
        save_checkpoint(path, model, optimizer, value=value)
    assert f" at {where}," in str(e.value)
    assert _temporary_files(tmp_path) == []
    load_checkpoint(path, make_run()[0])  # still the good file


@pytest.mark.parametrize("failing", ["fsync", "replace", "write"])
def test_save_failing_half_way_leaves_the_old_file_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str, unchanged: Any
) -> None:
    path = tmp_path / "ckpt.pt"
    _good_file(path)
    model, optimizer, scheduler = make_run()

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    if failing == "write":  # the disk fills up after the first megabyte
        real = tempfile.NamedTemporaryFile

        class FillsUp:
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                self.inner = real(*args, **kwargs)
                self.name = self.inner.name
                self.written = 0

            def write(self, data: bytes) -> int:
                if self.written:
                    fail()
                self.written += len(data)
                return self.inner.write(data)

            def __getattr__(self, name: str) -> Any:
                return getattr(self.inner, name)

            def __enter__(self) -> FillsUp:
                return self

            def __exit__(self, *exc: object) -> None:
                self.inner.close()

        monkeypatch.setattr(tempfile, "NamedTemporaryFile", FillsUp)
        extra = {"blob": torch.zeros(2**19)}  # 2 MiB: more than one chunk
    else:
        monkeypatch.setattr(os, failing, fail)
        extra = {}
    with pytest.raises(OSError, match="No space left") as e, unchanged(path):
        save_checkpoint(path, model, optimizer, scheduler, **extra)
    assert _temporary_files(tmp_path) == []
    assert str(path) in str(e.value)  # which save failed, not only why
    assert e.value.errno == 28
    assert isinstance(e.value.__cause__, OSError)
    assert e.value.__cause__.errno == 28


_CHILD = """
import os, sys, torch
from ptnotes.checkpoint import save_checkpoint
path, mode = sys.argv[1], sys.argv[2]
if mode == "stall-before-rename":  # the whole file written and fsynced, never renamed
    real_fsync = os.fsync
    def fsync(fd):
        real_fsync(fd)
        open(path + ".stalled", "w").close()
        while True:
            pass
    os.fsync = fsync
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
save_checkpoint(path, model, optimizer, blob=torch.ones(2**24))  # 64 MiB
"""


def _kill_when(process: subprocess.Popen[bytes], ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 120
    while not ready():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the save never started"
        time.sleep(0.001)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
@pytest.mark.parametrize("mode", ["mid-write", "stall-before-rename"])
def test_a_save_killed_mid_way_never_damages_the_file_it_replaces(
    tmp_path: Path, mode: str
) -> None:
    path = tmp_path / "ckpt.pt"
    old = _good_file(path)
    process = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    if mode == "mid-write":  # killed as soon as the temporary file has its first bytes
        _kill_when(process, lambda: any(p.stat().st_size > 0 for p in _temporary_files(tmp_path)))
    else:
        _kill_when(process, (tmp_path / "ckpt.pt.stalled").exists)
    assert process.returncode == -signal.SIGKILL
    left = _temporary_files(tmp_path)
    if left:  # killed before the rename: the old file, byte for byte
        assert path.read_bytes() == old
        assert left[0].stat().st_size < 2**26 or mode == "stall-before-rename"
        model = make_run()[0]
        assert load_checkpoint(path, model) == {"epoch": 1}
    else:  # the rename won the race: the new file, complete
        assert mode == "mid-write"
        assert list(load_checkpoint(path, nn.Linear(4, 2))) == ["blob"]


# -- loading is all-or-nothing ---------------------------------------------------------


def _saved(tmp_path: Path, run: Run | None = None, **extra: Any) -> Path:
    model, optimizer, scheduler = run or make_run()
    path = tmp_path / "ckpt.pt"
    save_checkpoint(path, model, optimizer, scheduler, **extra)
    return path


def _trained() -> Run:
    run = make_run()
    train(run, range(2))  # optimizer state and scheduler state are not the defaults
    return run


def _other_model() -> nn.Module:
    return nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.2), nn.Tanh(), nn.Linear(8, 1))


def _adam(run: Run) -> Run:
    model = run[0]
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    return model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)


def _with_scheduler(
    run: Run, make: Callable[[torch.optim.Optimizer], torch.optim.lr_scheduler.LRScheduler]
) -> Run:
    return run[0], run[1], make(run[1])


def _reordered(run: Run) -> Run:
    model = run[0]
    optimizer = torch.optim.AdamW(list(model.parameters())[::-1], lr=0.05)
    return model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)


def _two_groups(run: Run) -> Run:
    model = run[0]
    parameters = list(model.parameters())
    optimizer = torch.optim.AdamW([{"params": parameters[:2]}, {"params": parameters[2:]}])
    return model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)


def _bigger(run: Run) -> Run:
    model = nn.Sequential(nn.Linear(3, 9), nn.Dropout(0.2), nn.Tanh(), nn.Linear(9, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
    return model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)


def _double(run: Run) -> Run:
    model = _other_model().double()
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
    return model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)


def _shorter(run: Run) -> Run:
    model = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.2), nn.Tanh())
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
    return model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)


def _longer(run: Run) -> Run:
    model = nn.Sequential(
        nn.Linear(3, 8), nn.Dropout(0.2), nn.Tanh(), nn.Linear(8, 1), nn.Linear(1, 1)
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
    return model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)


def _optimizer_of_another_model(run: Run) -> Run:
    optimizer = torch.optim.AdamW(_other_model().parameters(), lr=0.05)
    return run[0], optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)


MISMATCHES: list[Any] = [
    pytest.param(_bigger, "model", "(8, 3) torch.float32 in the checkpoint", id="shapes"),
    pytest.param(
        _double, "model", "torch.float32 in the checkpoint, (8, 3) torch.float64", id="dtype"
    ),
    pytest.param(_shorter, "model", "not in model: 3.weight, 3.bias", id="unexpected-keys"),
    pytest.param(_longer, "model", "missing from the checkpoint: 4.weight", id="missing-keys"),
    pytest.param(
        lambda run: _with_scheduler(
            (run[0], torch.optim.SGD(run[0].parameters(), lr=0.1), run[2]),
            lambda o: torch.optim.lr_scheduler.StepLR(o, 2),
        ),
        "optimizer",
        "torch.optim.AdamW, as in the checkpoint",
        id="SGD-for-AdamW",
    ),
    pytest.param(_adam, "optimizer", "got a torch.optim.Adam", id="Adam-for-AdamW"),
    pytest.param(
        lambda run: _with_scheduler(run, lambda o: torch.optim.lr_scheduler.ExponentialLR(o, 0.9)),
        "scheduler",
        "torch.optim.lr_scheduler.StepLR, as in the checkpoint",
        id="ExponentialLR-for-StepLR",
    ),
    pytest.param(_reordered, "optimizer", "same order", id="parameters-reordered"),
    pytest.param(_two_groups, "optimizer", "sizes [4]", id="group-layout"),
    pytest.param(
        _optimizer_of_another_model, "optimizer", "not a parameter of model", id="another-model"
    ),
]


@pytest.mark.parametrize(("build", "argument", "fragment"), MISMATCHES)
def test_a_refused_load_names_both_sides_and_changes_nothing(
    tmp_path: Path, build: Callable[[Run], Run], argument: str, fragment: str, unchanged: Any
) -> None:
    path = _saved(tmp_path, _trained())
    torch.manual_seed(5)
    fresh = make_run()
    train(fresh, range(1))  # state that a half-done load would visibly overwrite
    model, optimizer, scheduler = build(fresh)
    with (
        pytest.raises(ValueError, match=rf"load_checkpoint\(\) expects {argument} to be") as e,
        unchanged(model, optimizer, scheduler),
    ):
        load_checkpoint(path, model, optimizer, scheduler)
    assert fragment in str(e.value)


def test_a_load_failing_inside_load_state_dict_is_rolled_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unchanged: Any
) -> None:
    path = _saved(tmp_path, _trained())
    model, optimizer, scheduler = make_run()
    train((model, optimizer, scheduler), range(1))

    def fail(self: object, state: object) -> None:
        raise RuntimeError("the scheduler broke")

    monkeypatch.setattr(torch.optim.lr_scheduler.StepLR, "load_state_dict", fail)
    with pytest.raises(RuntimeError, match="broke"), unchanged(model, optimizer):
        load_checkpoint(path, model, optimizer, scheduler)


class _Expanded(nn.Module):
    """A buffer that is an expanded view: ``load_state_dict`` cannot copy into it."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("b", torch.zeros(1).expand(8))


def test_a_load_failing_inside_the_models_load_state_dict_rolls_back_all_three(
    tmp_path: Path, unchanged: Any
) -> None:
    # the model loads last, after the optimizer and the scheduler; its own failure (here
    # also when putting it back) must not leave those two holding the file's state
    model, optimizer, scheduler = _trained()
    saved = nn.Sequential(*model, _Expanded())
    saved[-1].b = torch.ones(8)
    path = tmp_path / "ckpt.pt"
    save_checkpoint(path, saved, optimizer, scheduler)
    torch.manual_seed(5)
    fresh = make_run()
    train(fresh, range(1))
    target = nn.Sequential(*fresh[0], _Expanded())
    with (
        pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict"),
        unchanged(target, fresh[1], fresh[2]),
    ):
        load_checkpoint(path, target, fresh[1], fresh[2])
    assert fresh[1].param_groups[0]["lr"] != optimizer.param_groups[0]["lr"]


def test_load_refuses_a_scheduler_of_another_optimizer(tmp_path: Path, unchanged: Any) -> None:
    path = _saved(tmp_path)
    model, optimizer, _ = make_run()
    other = torch.optim.lr_scheduler.StepLR(torch.optim.SGD(model.parameters()), 2)
    with (
        pytest.raises(ValueError, match="expects scheduler to be a scheduler of the optimizer"),
        unchanged(model, optimizer, other),
    ):
        load_checkpoint(path, model, optimizer, other)


def test_save_refuses_an_optimizer_over_another_models_parameters(tmp_path: Path) -> None:
    model, _, _ = make_run()
    optimizer = torch.optim.SGD(_other_model().parameters(), lr=0.1)
    with pytest.raises(
        ValueError, match=r"save_checkpoint\(\) expects optimizer to be an optimizer"
    ):
        save_checkpoint(tmp_path / "c.pt", model, optimizer)
    assert list(tmp_path.iterdir()) == []


def test_a_checkpoint_records_what_it_holds(tmp_path: Path) -> None:
    meta = torch.load(_saved(tmp_path), weights_only=True)["meta"]
    assert meta["model"] == "torch.nn.Sequential"
    assert meta["optimizer"] == "torch.optim.AdamW"
    assert meta["scheduler"] == "torch.optim.lr_scheduler.StepLR"
    assert meta["torch"] == torch.__version__
    assert meta["optimizer_parameters"] == [["0.weight", "0.bias", "3.weight", "3.bias"]]


def test_a_checkpoint_written_before_the_record_still_loads(tmp_path: Path) -> None:
    reference = _trained()
    old_format = {
        "model": reference[0].state_dict(),
        "optimizer": reference[1].state_dict(),
        "scheduler": reference[2].state_dict(),
        "extra": {"step": 2},
    }
    torch.save(old_format, tmp_path / "old.pt")
    model, optimizer, scheduler = make_run()
    assert load_checkpoint(tmp_path / "old.pt", model, optimizer, scheduler) == {"step": 2}
    assert scheduler.state_dict() == reference[2].state_dict()
    sgd = torch.optim.SGD(model.parameters())  # without the record, options still tell
    with pytest.raises(ValueError, match="optimizer to be an object of the kind saved"):
        load_checkpoint(tmp_path / "old.pt", model, sgd)


def _truncated(path: Path) -> None:
    _good_file(path)
    path.write_bytes(path.read_bytes()[:200])


DAMAGED: list[Any] = [
    pytest.param(lambda p: p.write_bytes(b""), "which is empty", id="empty"),
    pytest.param(_truncated, "damaged or is not a torch.save file", id="truncated"),
    pytest.param(lambda p: p.write_bytes(b"\x00garbage" * 10), "damaged", id="garbage"),
    pytest.param(
        lambda p: p.write_bytes(pickle.dumps({1: 2})), "damaged or is not", id="plain-pickle"
    ),
    pytest.param(
        lambda p: torch.save({"weights": torch.zeros(1)}, p), "without the keys", id="foreign"
    ),
    pytest.param(lambda p: torch.save([torch.zeros(1)], p), "without the keys", id="foreign-list"),
]


@pytest.mark.parametrize(("damage", "fragment"), DAMAGED)
def test_a_damaged_or_foreign_file_gives_one_clear_error_naming_the_path(
    tmp_path: Path, damage: Callable[[Path], None], fragment: str, unchanged: Any
) -> None:
    path = tmp_path / "ckpt.pt"
    damage(path)
    model, optimizer, scheduler = make_run()
    with (
        pytest.raises(
            ValueError, match=r"load_checkpoint\(\) expects path to be a file written"
        ) as e,
        unchanged(model, optimizer, scheduler),
    ):
        load_checkpoint(path, model, optimizer, scheduler)
    assert fragment in str(e.value)
    assert "weights_only=False" not in str(e.value)


def test_a_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"expects path to be .* which does not exist"):
        load_checkpoint(tmp_path / "nope.pt", nn.Linear(1, 1))


def test_save_and_load_refuse_a_folder_as_path(tmp_path: Path) -> None:
    model, optimizer, _ = make_run()
    with pytest.raises(ValueError, match=r"expects path to be a file path, got .* a directory"):
        save_checkpoint(tmp_path, model, optimizer)
    with pytest.raises(ValueError, match="expects path to be a file path"):
        load_checkpoint(tmp_path, model)


def test_save_and_load_refuse_a_path_ending_in_a_separator(tmp_path: Path) -> None:
    model, optimizer, _ = make_run()
    with pytest.raises(ValueError, match=r"expects path to be a file path, got .* separator"):
        save_checkpoint(f"{tmp_path / 'new'}{os.sep}", model, optimizer)
    assert list(tmp_path.iterdir()) == []  # not a file named "new"
    _good_file(tmp_path / "c.pt")
    with pytest.raises(ValueError, match="separator"):
        load_checkpoint(f"{tmp_path / 'c.pt'}{os.sep}", model)


def test_save_refuses_a_path_in_a_missing_folder(tmp_path: Path) -> None:
    model, optimizer, _ = make_run()
    with pytest.raises(FileNotFoundError, match="expects path to be in an existing folder"):
        save_checkpoint(tmp_path / "no" / "c.pt", model, optimizer)


def test_save_keeps_the_permissions_of_the_file_it_replaces(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.pt"
    _good_file(path)
    path.chmod(0o640)
    _good_file(path)
    assert path.stat().st_mode & 0o777 == 0o640


def test_a_lazy_model_takes_its_shapes_from_the_checkpoint(tmp_path: Path) -> None:
    model = nn.Linear(3, 2)
    save_checkpoint(tmp_path / "c.pt", model, torch.optim.SGD(model.parameters(), lr=0.1))
    lazy = nn.LazyLinear(2)
    load_checkpoint(tmp_path / "c.pt", lazy)
    assert torch.equal(lazy.weight, model.weight)


def test_numpy_values_converted_first_are_saved_and_come_back(tmp_path: Path) -> None:
    model, optimizer, _ = make_run()
    state = np.random.get_state()
    rng = {"keys": torch.from_numpy(state[1].astype(np.int64)), "pos": int(state[2])}
    save_checkpoint(tmp_path / "c.pt", model, optimizer, loss=float(np.mean([1.0, 2.0])), rng=rng)
    extra = load_checkpoint(tmp_path / "c.pt", model)
    assert extra["loss"] == 1.5
    assert extra["rng"]["keys"].tolist() == state[1].tolist()
