"""Save a training run's state to one file and resume it exactly (loaded with weights_only)."""

from __future__ import annotations

import os
from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn

from ptnotes.validation import argument_error, check_type

__all__ = ["Stateful", "load_checkpoint", "save_checkpoint"]

_KEYS = ("model", "optimizer", "scheduler", "extra")
_SCHEDULER = "a scheduler (an object with state_dict() and load_state_dict())"


@runtime_checkable
class Stateful(Protocol):
    """What ``scheduler`` may be: an object with ``state_dict()`` and ``load_state_dict()``.

    Every scheduler of ``torch.optim.lr_scheduler`` is one.
    """

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state_dict: dict[str, Any], /) -> None: ...


def save_checkpoint(
    path: str | os.PathLike[str],
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Stateful | None = None,
    **extra: Any,
) -> None:
    """Write the state of ``model``, ``optimizer`` and ``scheduler`` (and ``extra``) to ``path``.

    The file holds state dicts, not objects: ``{"model": ..., "optimizer": ...,
    "scheduler": ... or None, "extra": {...}}``, which :func:`load_checkpoint` reads back with
    ``torch.load(weights_only=True)``. ``extra`` takes what else a resumed run needs, such as
    the epoch or ``torch.get_rng_state()``; its values must be of types that
    ``weights_only=True`` loads (tensors, numbers, strings, lists, tuples, dicts, ``None``).
    For a model wrapped in ``DistributedDataParallel`` pass ``ddp.module``.

    Args:
        path: the file to write (replaced if it exists).
        model: the model.
        optimizer: its optimizer (the state holds momentum buffers, Adam moments, step counts).
        scheduler: its learning-rate scheduler, if any (any :class:`Stateful` object).
        **extra: anything else to save, returned by :func:`load_checkpoint`.

    Raises:
        TypeError: if an argument is not of the type named above.

    Examples:
        >>> import os, tempfile, torch
        >>> from ptnotes.checkpoint import save_checkpoint
        >>> model = torch.nn.Linear(2, 1)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "ckpt.pt")
        ...     save_checkpoint(path, model, optimizer, epoch=3)
        ...     sorted(torch.load(path, weights_only=True))
        ['extra', 'model', 'optimizer', 'scheduler']
    """
    check_type(save_checkpoint, "path", path, (str, os.PathLike), expected="a str or os.PathLike")
    check_type(save_checkpoint, "model", model, nn.Module)
    check_type(save_checkpoint, "optimizer", optimizer, torch.optim.Optimizer)
    if scheduler is not None:
        check_type(save_checkpoint, "scheduler", scheduler, Stateful, expected=_SCHEDULER)
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": None if scheduler is None else scheduler.state_dict(),
        "extra": extra,
    }
    torch.save(state, path)


def load_checkpoint(
    path: str | os.PathLike[str],
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: Stateful | None = None,
    map_location: str | torch.device | None = "cpu",
) -> dict[str, Any]:
    """Restore ``model`` (and ``optimizer``, ``scheduler``) from a :func:`save_checkpoint` file.

    The file is read with ``torch.load(path, map_location=map_location, weights_only=True)``:
    tensors and plain containers only, so a file from an untrusted source cannot run code
    while it loads. Each object then gets its state through ``load_state_dict``, which copies
    the tensors onto the device of the object's own parameters. Pass the objects built
    exactly as in the saved run; training then continues as if it had never stopped.

    Args:
        path: a file written by :func:`save_checkpoint`.
        model: the model to restore (strict: every key must match).
        optimizer: the optimizer to restore, or ``None`` to restore the model only (for
            evaluation).
        scheduler: the scheduler to restore, or ``None``.
        map_location: where to load the tensors first (``"cpu"`` by default, so a checkpoint
            saved on a GPU loads on a machine without one); ``None`` keeps the saved devices.

    Returns:
        The ``extra`` values given to :func:`save_checkpoint`.

    Raises:
        TypeError: if an argument is not of the type named above.
        ValueError: if the file is not a :func:`save_checkpoint` file, or ``scheduler`` is
            given but the checkpoint holds no scheduler state.

    Examples:
        >>> import os, tempfile, torch
        >>> from ptnotes.checkpoint import load_checkpoint, save_checkpoint
        >>> model = torch.nn.Linear(2, 1)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> copy = torch.nn.Linear(2, 1)
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "ckpt.pt")
        ...     save_checkpoint(path, model, optimizer, epoch=3)
        ...     load_checkpoint(path, copy)
        {'epoch': 3}
        >>> torch.equal(copy.weight, model.weight)
        True
    """
    check_type(load_checkpoint, "path", path, (str, os.PathLike), expected="a str or os.PathLike")
    check_type(load_checkpoint, "model", model, nn.Module)
    if optimizer is not None:
        check_type(load_checkpoint, "optimizer", optimizer, torch.optim.Optimizer)
    if scheduler is not None:
        check_type(load_checkpoint, "scheduler", scheduler, Stateful, expected=_SCHEDULER)
    if map_location is not None:
        check_type(
            load_checkpoint,
            "map_location",
            map_location,
            (str, torch.device),
            expected="a str, a torch.device or None",
        )
    state = torch.load(path, map_location=map_location, weights_only=True)
    if not isinstance(state, dict) or sorted(state) != sorted(_KEYS):
        raise argument_error(
            load_checkpoint,
            "path",
            os.fspath(path),
            "a file written by save_checkpoint",
            got=f"a file without the keys {', '.join(_KEYS)}",
        )
    if scheduler is not None and state["scheduler"] is None:
        raise argument_error(
            load_checkpoint,
            "scheduler",
            scheduler,
            "None, since the checkpoint was saved without a scheduler",
        )
    model.load_state_dict(state["model"])
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(state["scheduler"])
    extra: dict[str, Any] = state["extra"]
    return extra
