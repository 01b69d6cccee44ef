"""Save a training run's state to one file and resume it exactly (loaded with weights_only)."""

from __future__ import annotations

import contextlib
import copy
import io
import os
import re
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn
from torch.nn.parameter import is_lazy

from ptnotes.validation import (
    argument_error,
    builtin_optimizers,
    check_device,
    check_type,
    optimizer_defaults,
    public_name,
)

__all__ = ["Stateful", "load_checkpoint", "save_checkpoint"]

_KEYS = ("model", "optimizer", "scheduler", "extra")
#: The record of what a checkpoint holds; files written before it existed lack it.
_META = "meta"
_FORMAT = "ptnotes.checkpoint"
_FORMAT_VERSION = 1
_SCHEDULER = "a scheduler (an object with state_dict() and load_state_dict())"
_LOADABLE = (
    "a value that torch.load(weights_only=True) can read back (tensors, numbers, str, "
    "bytes, None, and lists, tuples and dicts of them)"
)
#: Per-parameter optimizer state that has the parameter's shape, in torch.optim.
_ELEMENTWISE_STATE = frozenset(
    {
        "momentum_buffer",
        "exp_avg",
        "exp_avg_sq",
        "max_exp_avg_sq",
        "exp_inf",
        "sum",
        "square_avg",
        "grad_avg",
        "acc_delta",
        "prev",
        "step_size",
        "ax",
    }
)
_CHUNK = 1 << 20
_SHOWN = 3


@runtime_checkable
class Stateful(Protocol):
    """What ``scheduler`` must be: an object with ``state_dict()`` and ``load_state_dict()``.

    Every scheduler of ``torch.optim.lr_scheduler`` is one.

    Examples:
        >>> import torch
        >>> from ptnotes.checkpoint import Stateful
        >>> optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> schedulers = torch.optim.lr_scheduler
        >>> isinstance(schedulers.ReduceLROnPlateau(optimizer), Stateful)
        True
        >>> isinstance(schedulers.StepLR(optimizer, step_size=1), Stateful), isinstance(1, Stateful)
        (True, False)
    """

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state_dict: dict[str, Any], /) -> None: ...


def _some(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f", ... ({len(items) - _SHOWN} more)" if len(items) > _SHOWN else "")


def _check_path(caller: Any, path: Any) -> str:
    check_type(caller, "path", path, (str, os.PathLike), expected="a str or os.PathLike")
    name = os.fspath(path)
    if not isinstance(name, str):  # an os.PathLike of bytes
        raise argument_error(caller, "path", path, "a str or os.PathLike of str", error=TypeError)
    if not name or "\0" in name:  # "" is the current folder; a NUL byte no file name holds
        raise argument_error(caller, "path", name, "a file path", got=f"{name!r}")
    if os.path.isdir(name):
        raise argument_error(caller, "path", name, "a file path", got=f"{name!r}, a directory")
    if name.endswith(tuple(sep for sep in (os.sep, os.altsep) if sep)):  # a folder's name
        got = f"{name!r}, which ends in a folder separator"
        raise argument_error(caller, "path", name, "a file path", got=got)
    return name


def _check_scheduler_type(caller: Any, scheduler: object) -> None:
    """A :class:`Stateful` that is neither an optimizer nor a module (any of them is refused,
    a loss module too: typically the model or the optimizer passed one place too far)."""
    check_type(caller, "scheduler", scheduler, Stateful, expected=_SCHEDULER)
    if isinstance(scheduler, torch.optim.Optimizer | nn.Module):  # Stateful too
        got = f"{public_name(type(scheduler))}, an optimizer or a model, not a scheduler"
        raise argument_error(caller, "scheduler", scheduler, _SCHEDULER, error=TypeError, got=got)


def _check_data(caller: Any, model: nn.Module) -> None:
    """Refuse a model on the meta device: its tensors have shapes and no values."""
    for key, tensor in model.state_dict().items():
        if isinstance(tensor, torch.Tensor) and not is_lazy(tensor) and tensor.is_meta:
            expected = (
                "a model with values (build it on a real device, or move it there with "
                "model.to_empty(device=...) and initialise it)"
            )
            got = f"{public_name(type(model))} whose {key} is on the meta device"
            raise argument_error(caller, "model", model, expected, got=got)


def _parameter_names(model: nn.Module) -> dict[int, str]:
    """``{id(parameter): name}`` over the model's parameters (a shared one: its first name)."""
    names: dict[int, str] = {}
    for name, parameter in model.named_parameters():
        names.setdefault(id(parameter), name)
    return names


def _optimizer_layout(
    caller: Any, model: nn.Module, optimizer: torch.optim.Optimizer
) -> list[list[str]]:
    """The model's name of every parameter the optimizer holds, group by group."""
    names = _parameter_names(model)
    layout: list[list[str]] = []
    for number, group in enumerate(optimizer.param_groups):
        row = []
        for position, parameter in enumerate(group["params"]):
            name = names.get(id(parameter))
            if name is None:
                expected = "an optimizer over model's parameters"
                got = (
                    f"one whose group {number} holds, at position {position}, a parameter of "
                    f"shape {tuple(parameter.shape)} that is not a parameter of model "
                    f"({type(model).__name__})"
                )
                raise argument_error(caller, "optimizer", optimizer, expected, got=got)
            row.append(name)
        layout.append(row)
    return layout


def _check_scheduler_drives(caller: Any, scheduler: object, optimizer: object) -> None:
    driven = getattr(scheduler, "optimizer", None)
    if isinstance(driven, torch.optim.Optimizer) and driven is not optimizer:
        expected = "a scheduler of the optimizer passed with it"
        got = f"{type(scheduler).__name__} of another {type(driven).__name__}"
        raise argument_error(caller, "scheduler", scheduler, expected, got=got)


def _round_trip_error(value: object) -> str | None:
    """Why ``value`` does not survive ``torch.save`` + ``torch.load(weights_only=True)``."""
    buffer = io.BytesIO()
    try:
        torch.save(value, buffer)
    except Exception as error:
        return f"which cannot be pickled ({type(error).__name__}: {error})"
    buffer.seek(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.load(buffer, weights_only=True)
    except Exception:
        return "which torch.load(weights_only=True) refuses to load"
    return None


def _unloadable(value: object, label: str) -> tuple[str, object, str] | None:
    """The innermost part of ``value`` that does not round-trip: (where, what, why)."""
    reason = _round_trip_error(value)
    if reason is None:
        return None
    children: list[tuple[str, object]] = []
    if isinstance(value, Mapping):
        children = [(f"{label}[{key!r}]", item) for key, item in value.items()]
    elif isinstance(value, list | tuple):
        children = [(f"{label}[{i}]", item) for i, item in enumerate(value)]
    for child_label, child in children:
        found = _unloadable(child, child_label)
        if found is not None:
            return found
    return label, value, reason


def _refuse_unloadable(name: str, value: object) -> None:
    found = _unloadable(value, name)
    if found is None:
        return
    where, part, reason = found
    kind = public_name(type(part))
    hint = ""
    if type(part).__module__.split(".")[0] == "numpy":
        hint = "; convert NumPy values first (torch.from_numpy(array), float(x), x.tolist())"
    got = f"{kind} at {where}, {reason}{hint}"
    raise argument_error(save_checkpoint, name, value, _LOADABLE, error=TypeError, got=got)


def _serialise(state: dict[str, Any], extra: Mapping[str, Any]) -> io.BytesIO:
    """``torch.save`` into memory, proved to load back with ``weights_only=True``."""
    buffer = io.BytesIO()
    try:
        torch.save(state, buffer)
        buffer.seek(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.load(buffer, weights_only=True)
    except Exception:
        for key, value in extra.items():
            _refuse_unloadable(key, value)
        _refuse_unloadable("model", state["model"])
        _refuse_unloadable("optimizer", state["optimizer"])
        _refuse_unloadable("scheduler", state["scheduler"])
        raise  # not a value's fault (out of memory, say): torch's own error
    return buffer


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_directory(folder: str) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _write_atomically(path: str, data: memoryview) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then rename it over ``path``.

    A failure or a killed process at any point leaves ``path`` as it was (at worst a
    ``.<name>.*.tmp`` file stays behind in the folder).
    """
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    try:
        temporary = tempfile.NamedTemporaryFile(  # noqa: SIM115  # closed below, before the rename
            mode="wb", dir=folder, prefix=f".{name}.", suffix=".tmp", delete=False
        )
    except OSError as error:  # a read-only folder: name the path given, not the temporary
        refusal = type(error)(
            f"save_checkpoint() expects path to be in a folder it can write to, got {path!r} "
            f"({error.strerror or error} creating a temporary file in {folder!r})"
        )
        refusal.errno = error.errno
        raise refusal from error
    try:
        with temporary:
            for start in range(0, len(data), _CHUNK):
                temporary.write(data[start : start + _CHUNK])
            temporary.flush()
            os.chmod(temporary.name, mode)
            os.fsync(temporary.fileno())
        os.replace(temporary.name, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary.name)
        if not isinstance(error, OSError):
            raise
        failure = type(error)(  # name the path, as the refusal above does
            f"save_checkpoint() could not write {path!r} ({error.strerror or error})"
        )
        failure.errno = error.errno
        raise failure from error
    _fsync_directory(folder)


def _version() -> str:
    import ptnotes  # the package, complete by the time a checkpoint is written

    return str(getattr(ptnotes, "__version__", "unknown"))


def save_checkpoint(
    path: str | os.PathLike[str],
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Stateful | None = None,
    **extra: Any,
) -> None:
    """Write the state of ``model``, ``optimizer`` and ``scheduler`` (and ``extra``) to ``path``.

    The file holds state dicts, not objects: ``{"model": ..., "optimizer": ...,
    "scheduler": ... or None, "extra": {...}, "meta": {...}}``, which :func:`load_checkpoint`
    reads back with ``torch.load(weights_only=True)``. ``meta`` records what the file holds:
    its format and format version, the classes of the three objects, the name in ``model`` of
    every parameter the optimizer holds, and the ptnotes and torch versions. ``extra`` takes
    what else a resumed run needs, such as the epoch or ``torch.get_rng_state()``; its values
    must be of types that ``weights_only=True`` loads (such as tensors, ``bool``, ``int``,
    ``float``, strings, ``None``, lists, tuples and plain dicts of them, and torch's
    ``dtype``, ``device`` and ``Size``: not NumPy values, a ``frozenset``, a
    :class:`~collections.defaultdict`, a :class:`~fractions.Fraction` or
    :class:`~decimal.Decimal`, ``datetime``, ``range`` or objects of a class of one's own, a
    :func:`~collections.namedtuple` included, although it is a tuple; a class named in
    ``torch.serialization.safe_globals`` around both the save and the load is loaded: see the
    example of a named tuple). For a model wrapped in ``DistributedDataParallel`` pass
    ``ddp.module``.

    The save is all-or-nothing, as a database writes: the payload is first serialised in
    memory and loaded back with ``weights_only=True`` (a value that this torch could not
    load back is refused now, not when resuming with it: see the example of a refused save),
    then written to a temporary file in the same folder, flushed, ``fsync``-ed and renamed
    over ``path`` with :func:`os.replace` (atomic; where ``path`` is a symbolic link, over
    the file it points to, and the link stays: see the example of a link). A failure or a
    killed process at any point leaves the previous file at ``path`` intact.

    Args:
        path: the file to write (replaced if it exists); its folder must exist.
        model: the model.
        optimizer: its optimizer (the state holds momentum buffers, Adam moments, step
            counts); every parameter it holds must be a parameter of ``model``.
        scheduler: its learning-rate scheduler, if any (a :class:`Stateful` object, but not
            an optimizer or a module, which are :class:`Stateful` too: see the example).
        **extra: anything else to save, returned by :func:`load_checkpoint`.

    Raises:
        TypeError: if an argument is not of the type named above, or a value (of ``extra``,
            or inside a state dict) would not load back with ``weights_only=True``: the
            message names the key and the type.
        ValueError: if ``path`` is a folder or ends in a folder separator, ``model`` is on
            the meta device, ``optimizer`` holds a parameter that is not one of ``model``, or
            ``scheduler`` drives another optimizer.
        FileNotFoundError: if the folder of ``path`` does not exist.
        OSError: if the folder cannot be written to (a :class:`PermissionError` for a
            folder this user may not write to) or the write fails (such as a full disk,
            ``errno`` 28). The error is of the class the system raised, with its ``errno``;
            its message names ``path`` and the system's reason, and the system's own error is
            its ``__cause__``. The file at ``path`` is as it was.

    Examples:
        >>> import os, tempfile, torch
        >>> from ptnotes.checkpoint import save_checkpoint
        >>> model = torch.nn.Linear(2, 1)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = os.path.join(folder.name, "ckpt.pt")
        >>> save_checkpoint(path, model, optimizer, epoch=3, dtype=torch.float16, seen=[1, 2])
        >>> saved = torch.load(path, weights_only=True)
        >>> sorted(saved)
        ['extra', 'meta', 'model', 'optimizer', 'scheduler']
        >>> saved["extra"]
        {'epoch': 3, 'dtype': torch.float16, 'seen': [1, 2]}
        >>> sorted(saved["meta"])  # doctest: +NORMALIZE_WHITESPACE
        ['format', 'format_version', 'model', 'optimizer', 'optimizer_parameters', 'ptnotes',
         'scheduler', 'torch']

        A ``frozenset``, a ``defaultdict`` and a ``Fraction`` are refused:

        >>> from collections import defaultdict
        >>> save_checkpoint(path, model, optimizer, counts=defaultdict(int, {"a": 1}))
        Traceback (most recent call last):
          ...
        TypeError: save_checkpoint() expects counts ... got collections.defaultdict at counts, ...
        >>> from fractions import Fraction
        >>> save_checkpoint(path, model, optimizer, seen=frozenset({1, 2}))
        Traceback (most recent call last):
          ...
        TypeError: save_checkpoint() expects seen ... got frozenset at seen, which ...
        >>> save_checkpoint(path, model, optimizer, share=Fraction(1, 3))
        Traceback (most recent call last):
          ...
        TypeError: save_checkpoint() expects share ... got fractions.Fraction at share, which ...

        A module has ``state_dict()`` and ``load_state_dict()`` too, but is refused as a
        scheduler (a loss module here, passed one place too far):

        >>> save_checkpoint(path, model, optimizer, torch.nn.MSELoss())
        Traceback (most recent call last):
          ...
        TypeError: save_checkpoint() expects scheduler ... got torch.nn.MSELoss, ...

        A path ending in a separator names a folder, not a file:

        >>> save_checkpoint(os.path.join(folder.name, "new") + os.sep, model, optimizer)
        Traceback (most recent call last):
          ...
        ValueError: save_checkpoint() expects path to be a file path, got ... folder separator

        A model on the meta device has no values to save:

        >>> empty = torch.nn.Linear(2, 1, device="meta")
        >>> save_checkpoint(path, empty, torch.optim.SGD(empty.parameters(), lr=0.1))
        Traceback (most recent call last):
          ...
        ValueError: save_checkpoint() expects model to be a model with values ...

        A refused save writes nothing: the file at ``path`` keeps the previous checkpoint.

        >>> import numpy as np
        >>> save_checkpoint(path, model, optimizer, epoch=4, loss=np.mean([1.0, 2.0]))
        Traceback (most recent call last):
          ...
        TypeError: save_checkpoint() expects loss to be a value that torch.load(...) can read ...
        >>> torch.load(path, weights_only=True)["extra"]["epoch"], os.listdir(folder.name)
        (3, ['ckpt.pt'])

        A named tuple is a tuple, but of a class of its own (here the standard library's
        ``difflib.Match``), which ``weights_only=True`` does not load:

        >>> from difflib import Match
        >>> isinstance(Match(0, 0, 4), tuple)
        True
        >>> save_checkpoint(path, model, optimizer, match=Match(0, 0, 4))
        Traceback (most recent call last):
          ...
        TypeError: save_checkpoint() expects match ... got difflib.Match ..., ... refuses to load
        >>> save_checkpoint(path, model, optimizer, match=tuple(Match(0, 0, 4)))
        >>> torch.load(path, weights_only=True)["extra"]
        {'match': (0, 0, 4)}

        Inside ``torch.serialization.safe_globals`` naming its class, it is saved, and the
        file loads only there too:

        >>> from ptnotes.checkpoint import load_checkpoint
        >>> with torch.serialization.safe_globals([Match]):
        ...     save_checkpoint(path, model, optimizer, match=Match(0, 0, 4))
        ...     extra = load_checkpoint(path, model)
        >>> extra
        {'match': Match(a=0, b=0, size=4)}
        >>> load_checkpoint(path, model)
        Traceback (most recent call last):
          ...
        ValueError: load_checkpoint() ... holds a difflib.Match object that weights_only=True ...

        A ``path`` that is a symbolic link stays a link: the file it points to is replaced.

        >>> link = os.path.join(folder.name, "latest.pt")
        >>> os.symlink(path, link)
        >>> save_checkpoint(link, model, optimizer, epoch=5)
        >>> os.path.islink(link), torch.load(path, weights_only=True)["extra"]
        (True, {'epoch': 5})
        >>> sorted(os.listdir(folder.name))
        ['ckpt.pt', 'latest.pt']
        >>> folder.cleanup()
    """
    me = save_checkpoint
    name = _check_path(me, path)
    check_type(me, "model", model, nn.Module)
    check_type(me, "optimizer", optimizer, torch.optim.Optimizer)
    if scheduler is not None:
        _check_scheduler_type(me, scheduler)
        _check_scheduler_drives(me, scheduler, optimizer)
    _check_data(me, model)
    folder = os.path.dirname(os.path.abspath(name))
    if not os.path.isdir(folder):
        raise FileNotFoundError(
            f"{me.__qualname__}() expects path to be in an existing folder, got {name!r} "
            f"(no folder {folder!r})"
        )
    layout = _optimizer_layout(me, model, optimizer)
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": None if scheduler is None else scheduler.state_dict(),
        "extra": extra,
        _META: {
            "format": _FORMAT,
            "format_version": _FORMAT_VERSION,
            "ptnotes": _version(),
            "torch": str(torch.__version__),
            "model": public_name(type(model)),
            "optimizer": public_name(type(optimizer)),
            "scheduler": None if scheduler is None else public_name(type(scheduler)),
            "optimizer_parameters": layout,
        },
    }
    buffer = _serialise(state, extra)
    _write_atomically(name, buffer.getbuffer())


# -- loading ---------------------------------------------------------------------------


def _damaged(path: str, what: str) -> ValueError:
    return ValueError(
        f"load_checkpoint() expects path to be a file written by save_checkpoint, "
        f"got {path!r}, {what}"
    )


def _read(path: str, map_location: str | torch.device | None) -> Any:
    """``torch.load(weights_only=True)``, with one clear error for a damaged or foreign file."""
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"load_checkpoint() expects path to be a file written by save_checkpoint, "
            f"got {path!r}, which does not exist"
        )
    if os.path.getsize(path) == 0:
        raise _damaged(path, "which is empty (an interrupted copy?)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            state = torch.load(path, map_location=map_location, weights_only=True)
        except Exception as error:
            message = str(error)
            found = re.search(r"GLOBAL ([\w.]+)", message)
            reason = re.search(r"WeightsUnpickler error:\s*(\S[^\n]*)", message)
            if "Weights only load failed" in message and found:
                what = (
                    f"which holds a {found.group(1)} object that weights_only=True refuses to "
                    "load (ptnotes loads tensors and plain values only, so that a file cannot "
                    "run code)"
                )
            elif "Weights only load failed" in message:
                detail = reason.group(1).strip()[:200] if reason else "refused"
                what = (
                    "which is damaged or is not a torch.save file (the weights_only=True "
                    f"reader says: {detail})"
                )
            else:
                first = message.strip().splitlines()[0] if message.strip() else "no message"
                what = (
                    "which is damaged or is not a torch.save file (truncated?): "
                    f"{type(error).__name__}: {first[:200]}"
                )
            raise _damaged(path, what) from error
    for warning in caught:  # the file loaded: its warnings are the reader's to see
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return state


def _check_structure(path: str, state: object) -> dict[str, Any]:
    keys = set(state) if isinstance(state, dict) else set()
    if keys not in (set(_KEYS), {*_KEYS, _META}):
        got = f"a file without the keys {', '.join(_KEYS)}"
        raise argument_error(
            load_checkpoint, "path", path, "a file written by save_checkpoint", got=got
        )
    assert isinstance(state, dict)
    meta = state.get(_META)
    if meta is not None and (not isinstance(meta, dict) or meta.get("format") != _FORMAT):
        raise _damaged(path, "whose 'meta' record is not a ptnotes checkpoint's")
    if not isinstance(state["model"], Mapping) or not isinstance(state["extra"], dict):
        raise _damaged(path, "whose model state or extra values are not dicts")
    return state


def _saved_with(meta: Mapping[str, Any] | None) -> str:
    if meta is None:
        return "a checkpoint written without a record of its versions"
    return f"saved with torch {meta.get('torch')}, ptnotes {meta.get('ptnotes')}"


def _describe_tensor(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"{tuple(value.shape)} {value.dtype}"
    return type(value).__name__


def _check_model(
    model: nn.Module, saved: Mapping[str, Any], meta: Mapping[str, Any] | None
) -> None:
    current = model.state_dict()
    missing = [k for k in current if k not in saved]
    unexpected = [k for k in saved if k not in current]
    different = []
    for key, tensor in current.items():
        if key not in saved or not isinstance(tensor, torch.Tensor) or is_lazy(tensor):
            continue
        stored = saved[key]
        if not isinstance(stored, torch.Tensor) or (
            (stored.shape, stored.dtype) != (tensor.shape, tensor.dtype)
        ):
            different.append(
                f"{key} is {_describe_tensor(stored)} in the checkpoint, "
                f"{_describe_tensor(tensor)} in model"
            )
    if not (missing or unexpected or different):
        return
    parts = []
    if missing:
        parts.append(f"missing from the checkpoint: {_some(missing)}")
    if unexpected:
        parts.append(f"not in model: {_some(unexpected)}")
    if different:
        parts.append(_some(different))
    held = meta.get("model") if meta is not None else None
    saved_model = f"a {held}" if held else "a model"
    expected = (
        f"a model with the checkpoint's parameters and buffers ({saved_model}, {_saved_with(meta)})"
    )
    got = f"{public_name(type(model))} with {'; '.join(parts)}"
    raise argument_error(load_checkpoint, "model", model, expected, got=got)


def _check_class(name: str, value: object, saved: object, meta: Mapping[str, Any] | None) -> None:
    if meta is None or saved is None:
        return
    current = public_name(type(value))
    if current != saved:
        expected = f"a {saved}, as in the checkpoint ({_saved_with(meta)})"
        raise argument_error(load_checkpoint, name, value, expected, got=f"a {current}")


def _optimizer_options() -> set[str]:
    """Every constructor option of torch.optim's optimizers (not what schedulers add)."""
    return {key for o in builtin_optimizers() for key in optimizer_defaults(o)}


def _check_options(name: str, value: object, saved_keys: set[str], current_keys: set[str]) -> None:
    unknown = sorted(saved_keys - current_keys)
    if unknown:
        expected = "an object of the kind saved in the checkpoint"
        got = (
            f"a {public_name(type(value))}, which has no {', '.join(map(repr, unknown))} "
            "(saved in the checkpoint)"
        )
        raise argument_error(load_checkpoint, name, value, expected, got=got)


def _check_optimizer(
    path: str,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    saved: object,
    meta: Mapping[str, Any] | None,
) -> None:
    me = load_checkpoint
    if (
        not isinstance(saved, Mapping)
        or not isinstance(saved.get("param_groups"), list)
        or not isinstance(saved.get("state"), Mapping)
        or not all(isinstance(g, Mapping) and "params" in g for g in saved["param_groups"])
    ):
        raise _damaged(path, "whose optimizer state is damaged")
    _check_class("optimizer", optimizer, None if meta is None else meta.get("optimizer"), meta)
    saved_groups: list[Mapping[str, Any]] = saved["param_groups"]
    if meta is None:  # no record of the class: the options tell the kind (SGD's momentum)
        for saved_group, group in zip(saved_groups, optimizer.param_groups, strict=False):
            options = set(saved_group) & _optimizer_options()  # not initial_lr, say
            _check_options("optimizer", optimizer, options, set(group))
    saved_sizes = [len(g["params"]) for g in saved_groups]
    sizes = [len(g["params"]) for g in optimizer.param_groups]
    if saved_sizes != sizes:
        expected = (
            f"an optimizer with parameter groups of sizes {saved_sizes}, as in the checkpoint"
        )
        raise argument_error(me, "optimizer", optimizer, expected, got=f"sizes {sizes}")
    layout = _optimizer_layout(me, model, optimizer)
    saved_layout = None if meta is None else meta.get("optimizer_parameters")
    if saved_layout is not None and saved_layout != layout:
        for number, (old_row, row) in enumerate(zip(saved_layout, layout, strict=True)):
            for position, (old, new) in enumerate(zip(old_row, row, strict=True)):
                if old != new:
                    expected = (
                        "an optimizer over the same parameters, in the same order, as in the "
                        f"checkpoint (group {number}, position {position}: {old!r})"
                    )
                    got = f"one holding {new!r} there"
                    raise argument_error(me, "optimizer", optimizer, expected, got=got)
    parameters = [p for group in optimizer.param_groups for p in group["params"]]
    for index, values in saved["state"].items():
        if not isinstance(index, int) or not 0 <= index < len(parameters):
            raise _damaged(path, "whose optimizer state is damaged")
        if not isinstance(values, Mapping):
            continue
        if is_lazy(parameters[index]):  # no shape yet: loading the model gives it one
            continue
        shape = parameters[index].shape
        for key, tensor in values.items():
            if (
                key in _ELEMENTWISE_STATE
                and isinstance(tensor, torch.Tensor)
                and tensor.shape != shape
            ):
                expected = "an optimizer whose parameters have the shapes saved"
                got = (
                    f"state {key!r} of shape {tuple(tensor.shape)} for a parameter of "
                    f"shape {tuple(shape)}"
                )
                raise argument_error(me, "optimizer", optimizer, expected, got=got)


def _check_scheduler(
    path: str, scheduler: Stateful, saved: object, meta: Mapping[str, Any] | None
) -> None:
    me = load_checkpoint
    if saved is None:
        raise argument_error(
            me, "scheduler", scheduler, "None, since the checkpoint was saved without a scheduler"
        )
    if not isinstance(saved, Mapping):
        raise _damaged(path, "whose scheduler state is damaged")
    _check_class("scheduler", scheduler, None if meta is None else meta.get("scheduler"), meta)
    if meta is None:  # with a record, the class decides: keys differ across torch versions
        _check_options("scheduler", scheduler, set(saved), set(scheduler.state_dict()))
    driven = getattr(scheduler, "optimizer", None)
    base_lrs = saved.get("base_lrs")
    if (
        isinstance(driven, torch.optim.Optimizer)
        and isinstance(base_lrs, list)
        and len(base_lrs) != len(driven.param_groups)
    ):
        expected = (
            f"a scheduler of an optimizer with {len(base_lrs)} parameter groups, "
            "as in the checkpoint"
        )
        got = f"one with {len(driven.param_groups)}"
        raise argument_error(me, "scheduler", scheduler, expected, got=got)


def _unchanged(current: object, saved: object) -> bool:
    """Whether ``current`` still holds the tensor ``saved`` (``False`` where unsure)."""
    if not isinstance(current, torch.Tensor) or not isinstance(saved, torch.Tensor):
        return False
    try:  # torch.equal has no kernel for some layouts (sparse): copy those back
        return current.shape == saved.shape and torch.equal(current, saved)
    except (RuntimeError, NotImplementedError):
        return False


class _Restore:
    """What :func:`load_checkpoint` puts back if anything fails half-way."""

    def __init__(
        self,
        model: nn.Module,
        optimizer: torch.optim.Optimizer | None,
        scheduler: Stateful | None,
    ) -> None:
        self.model = model
        self.weights = {  # a lazy parameter has no values yet: nothing to put back
            k: v.detach().clone() if isinstance(v, torch.Tensor) else v
            for k, v in model.state_dict().items()
            if not (isinstance(v, torch.Tensor) and is_lazy(v))
        }
        self.optimizer = optimizer
        self.optimizer_attributes = (
            None
            if optimizer is None
            else {"state": optimizer.state, "param_groups": list(optimizer.param_groups)}
        )
        self.groups = (
            None if optimizer is None else [dict(group) for group in optimizer.param_groups]
        )
        self.scheduler = scheduler
        self.schedule = None if scheduler is None else copy.deepcopy(scheduler.state_dict())

    def __call__(self) -> None:
        # the optimizer and the scheduler first: putting the model back can fail too (a
        # tensor its load could not write to, such as an expanded buffer, refuses the copy
        # back as well), and must not leave them holding the file's state
        if self.optimizer is not None:
            assert self.optimizer_attributes is not None
            assert self.groups is not None
            self.optimizer.__dict__.update(self.optimizer_attributes)
            for group, options in zip(self.optimizer.param_groups, self.groups, strict=True):
                group.clear()
                group.update(options)
        if self.scheduler is not None:
            assert self.schedule is not None
            self.scheduler.load_state_dict(self.schedule)
        current = self.model.state_dict()
        changed = {  # only what the failed load wrote: what it could not write stays as it was
            key: value
            for key, value in self.weights.items()
            if not _unchanged(current.get(key), value)
        }
        self.model.load_state_dict(changed, strict=False)


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
    the tensors onto the device of the object's own parameters, but for an optimizer's
    ``step`` counts: they stay where ``map_location`` put them (the CPU by default) unless
    the optimizer is ``capturable`` or ``fused``. Pass the objects built
    exactly as in the saved run (the file's optimizer options, ``lr`` and ``momentum`` among
    them, replace the ones the optimizer was built with); a step on the same batch then
    matches the step the saved run took next, provided the RNG state saved in ``extra`` is
    put back too where the step draws random numbers (such as dropout): see the example of
    a run with dropout. The file holds the state dicts only: neither the model's train or
    eval mode nor a non-persistent buffer comes back, and where the saved run had changed
    either after building its model, the step after loading differs from the saved run's
    (see the example of a non-persistent buffer).

    .. torch-source:: torch/optim/optimizer.py
       :function: Optimizer._process_value_according_to_param_policy

       ``Optimizer.load_state_dict`` moves each state tensor to its parameter's device (and,
       where the parameter is floating point, to the parameter's dtype, whatever the state
       tensor's own dtype), except the ``step`` entry, which it returns unchanged unless the
       parameter's group has ``capturable`` or ``fused`` set.

    The load is all-or-nothing. Everything is checked before the first tensor is copied:
    the model's keys, shapes and dtypes (for an uninitialised lazy module's parameters, the
    keys only); the optimizer's and scheduler's classes (recorded in the file; in a file
    without that record, the names of their options stand in for it, which tell an SGD
    from an Adam but not an Adam from an AdamW: see the last example), the sizes of the
    parameter groups and which of the model's parameters the optimizer holds, in which
    order. If anything is refused, ``model``, ``optimizer`` and ``scheduler`` are left as
    they were; if the load fails while loading, they get back the state they had (the
    model's state is copied first to make that possible), but for the parameters of an
    uninitialised lazy module, which keep the saved shapes, and for the version counters of
    the model's tensors that the failed load wrote into, which the copies there and back
    advance: a graph built before the load can no longer run backward through them (see the
    example of an expanded buffer). Files written before the record of
    classes existed still load; only the checks that need the record are skipped.

    Args:
        path: a file written by :func:`save_checkpoint`.
        model: the model to restore (strict: every key, shape and dtype must match, but for
            the parameters of an uninitialised lazy module, which take the saved shapes).
        optimizer: the optimizer to restore, or ``None`` (``load_checkpoint(path, model)``,
            as in the first example, restores the model only, for evaluation).
        scheduler: the scheduler to restore, or ``None``.
        map_location: where to load the tensors first (``"cpu"`` by default, so a checkpoint
            saved on a GPU loads on a machine without one); ``None`` keeps the saved devices.

    Returns:
        The ``extra`` values given to :func:`save_checkpoint`.

    Raises:
        TypeError: if an argument is not of the type named above.
        FileNotFoundError: if ``path`` does not exist.
        ValueError: if ``path`` is a folder or ends in a folder separator; if the file is
            empty, damaged, not a :func:`save_checkpoint` file or
            holds objects ``weights_only=True`` refuses; if ``model`` or ``optimizer`` does
            not match what the file holds, or ``scheduler`` is of another class or drives
            another number of parameter groups (the message names both sides; a scheduler
            that differs otherwise can fail inside its own ``load_state_dict``, see the
            example of a ``SequentialLR``); if ``scheduler`` is given but the checkpoint holds
            no scheduler state; if ``model`` is on the meta device; or if ``map_location``
            names no device this machine can load onto (``"cpu:1"``, ``"cuda"`` without
            CUDA, ``"meta"``).

    Examples:
        >>> import os, tempfile, torch
        >>> from ptnotes.checkpoint import load_checkpoint, save_checkpoint
        >>> model = torch.nn.Linear(2, 1)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> copy = torch.nn.Linear(2, 1)
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = os.path.join(folder.name, "ckpt.pt")
        >>> save_checkpoint(path, model, optimizer, epoch=3)
        >>> load_checkpoint(path, copy)
        {'epoch': 3}
        >>> torch.equal(copy.weight, model.weight)
        True
        >>> load_checkpoint(path, copy, map_location="cpu:1")
        Traceback (most recent call last):
          ...
        ValueError: load_checkpoint() expects map_location to be a device this machine has ...
        >>> load_checkpoint(path + os.sep, copy)
        Traceback (most recent call last):
          ...
        ValueError: load_checkpoint() expects path to be a file path, got ... folder separator

        An uninitialised lazy module takes the saved shapes, whatever its own options say:

        >>> lazy = torch.nn.LazyLinear(3)
        >>> load_checkpoint(path, lazy)
        {'epoch': 3}
        >>> tuple(lazy.weight.shape), lazy.out_features
        ((1, 2), 3)

        The state of an SGD does not load into an Adam, and the refused load changes
        nothing, not even the model, which comes first in the file:

        >>> other = torch.nn.Linear(2, 1)
        >>> before = other.weight.clone()
        >>> load_checkpoint(path, other, torch.optim.Adam(other.parameters()))
        Traceback (most recent call last):
          ...
        ValueError: load_checkpoint() expects optimizer to be a torch.optim.SGD, as in the ...
        >>> torch.equal(other.weight, before)
        True

        A file written by plain ``torch.save`` that holds an object is refused, not run:

        >>> import datetime
        >>> torch.save({"when": datetime.date(2026, 1, 1)}, path)
        >>> load_checkpoint(path, copy)
        Traceback (most recent call last):
          ...
        ValueError: load_checkpoint() ... holds a datetime.date object that weights_only=True ...

        A run with dropout resumes exactly only with its RNG state: a step after loading
        matches the step the saved run took next only once ``torch.set_rng_state`` puts the
        saved state back.

        >>> def run():
        ...     _ = torch.manual_seed(0)
        ...     net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.5))
        ...     return net, torch.optim.Adam(net.parameters(), lr=0.1)
        >>> def step(net, optimizer):
        ...     optimizer.zero_grad()
        ...     net(torch.ones(4, 2)).sum().backward()
        ...     optimizer.step()
        >>> net, adam = run()
        >>> step(net, adam)
        >>> save_checkpoint(path, net, adam, rng=torch.get_rng_state())
        >>> step(net, adam)  # the step a resumed run must repeat
        >>> resumed, resumed_adam = run()
        >>> extra = load_checkpoint(path, resumed, resumed_adam)
        >>> step(resumed, resumed_adam)
        >>> torch.equal(resumed[0].weight, net[0].weight)
        False
        >>> resumed, resumed_adam = run()
        >>> torch.set_rng_state(load_checkpoint(path, resumed, resumed_adam)["rng"])
        >>> step(resumed, resumed_adam)
        >>> torch.equal(resumed[0].weight, net[0].weight)
        True

        Neither a non-persistent buffer (here a count of calls that the forward uses) nor
        the eval mode the saved run had set comes back, and the next step differs:

        >>> class Counted(torch.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.lin = torch.nn.Linear(2, 1)
        ...         self.register_buffer("calls", torch.zeros(()), persistent=False)
        ...     def forward(self, x):
        ...         self.calls += 1
        ...         return self.lin(x) * self.calls
        >>> def counted():
        ...     _ = torch.manual_seed(0)
        ...     net = Counted()
        ...     return net, torch.optim.SGD(net.parameters(), lr=0.1)
        >>> net, sgd = counted()
        >>> step(net, sgd)
        >>> _ = net.eval()
        >>> save_checkpoint(path, net, sgd)
        >>> sorted(torch.load(path, weights_only=True)["model"])
        ['lin.bias', 'lin.weight']
        >>> resumed, resumed_sgd = counted()
        >>> _ = load_checkpoint(path, resumed, resumed_sgd)
        >>> net.calls, net.training, resumed.calls, resumed.training
        (tensor(1.), False, tensor(0.), True)
        >>> step(net, sgd)
        >>> step(resumed, resumed_sgd)
        >>> torch.equal(resumed.lin.weight, net.lin.weight)
        False

        A load that fails inside the model's own ``load_state_dict`` (here at an expanded
        buffer, which refuses to be copied into) is rolled back too, the optimizer's options
        included, but a graph built before it can no longer run backward through the model's
        parameters (the copies back are in-place changes), and an uninitialised lazy module
        keeps the saved shapes:

        >>> class Expanded(torch.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.register_buffer("b", torch.zeros(1).expand(2))
        >>> plain = torch.nn.Sequential(torch.nn.Linear(2, 1), Expanded())
        >>> plain[1].b = torch.ones(2)
        >>> save_checkpoint(path, plain, torch.optim.SGD(plain.parameters(), lr=0.5))
        >>> target = torch.nn.Sequential(torch.nn.Linear(2, 1), Expanded())
        >>> sgd = torch.optim.SGD(target.parameters(), lr=0.1)
        >>> before = target[0].weight.clone()
        >>> out = target[0](torch.ones(3, 2, requires_grad=True)).sum()  # a graph, before
        >>> load_checkpoint(path, target, sgd)
        Traceback (most recent call last):
          ...
        RuntimeError: Error(s) in loading state_dict for Sequential:...
        >>> torch.equal(target[0].weight, before), sgd.param_groups[0]["lr"]
        (True, 0.1)
        >>> out.backward()
        Traceback (most recent call last):
          ...
        RuntimeError: one of the variables needed for gradient computation has been modified by ...
        >>> lazy = torch.nn.Sequential(torch.nn.LazyLinear(1), Expanded())
        >>> load_checkpoint(path, lazy)
        Traceback (most recent call last):
          ...
        RuntimeError: Error(s) in loading state_dict for Sequential:...
        >>> tuple(lazy[0].weight.shape)
        (1, 2)

        A scheduler of the saved class that differs otherwise fails inside its own
        ``load_state_dict`` (here a ``SequentialLR`` of three schedulers loaded into one of
        two, which raises an ``IndexError``), and is rolled back too:

        >>> schedulers = torch.optim.lr_scheduler
        >>> def sequential(n):
        ...     net = torch.nn.Linear(2, 1)
        ...     sgd = torch.optim.SGD(net.parameters(), lr=0.1)
        ...     parts = [schedulers.ConstantLR(sgd, factor=0.5, total_iters=2) for _ in range(n)]
        ...     return net, sgd, schedulers.SequentialLR(sgd, parts, milestones=list(range(1, n)))
        >>> save_checkpoint(path, *sequential(3))
        >>> net, sgd, schedule = sequential(2)
        >>> before = repr(schedule.state_dict())
        >>> load_checkpoint(path, net, sgd, schedule)
        Traceback (most recent call last):
          ...
        IndexError: list index out of range
        >>> repr(schedule.state_dict()) == before
        True

        A file written before the record of classes existed (made here by dropping
        ``meta``) still loads; the names of the options then tell an SGD from an Adam, but
        not an Adam from an AdamW:

        >>> net = torch.nn.Linear(2, 1)
        >>> save_checkpoint(path, net, torch.optim.Adam(net.parameters()), epoch=1)
        >>> old = torch.load(path, weights_only=True)
        >>> del old["meta"]
        >>> torch.save(old, path)
        >>> load_checkpoint(path, net, torch.optim.AdamW(net.parameters()))
        {'epoch': 1}
        >>> load_checkpoint(path, net, torch.optim.SGD(net.parameters(), lr=0.1))
        Traceback (most recent call last):
          ...
        ValueError: load_checkpoint() expects optimizer to be an object of the kind saved in ...
        >>> folder.cleanup()
    """
    me = load_checkpoint
    name = _check_path(me, path)
    check_type(me, "model", model, nn.Module)
    if optimizer is not None:
        check_type(me, "optimizer", optimizer, torch.optim.Optimizer)
    if scheduler is not None:
        _check_scheduler_type(me, scheduler)
        if optimizer is not None:
            _check_scheduler_drives(me, scheduler, optimizer)
    if map_location is not None:
        check_type(
            me,
            "map_location",
            map_location,
            (str, torch.device),
            expected="a str, a torch.device or None",
        )
        # "gpu", "cuda" without CUDA, "meta": refused here, not blamed on the file; "cpu:0"
        # read as "cpu" (torch.load knows no CPU index)
        map_location = check_device(me, "map_location", map_location, meta=False)
    _check_data(me, model)
    state = _check_structure(name, _read(name, map_location))
    meta: Mapping[str, Any] | None = state.get(_META)
    _check_model(model, state["model"], meta)
    if optimizer is not None:
        _check_optimizer(name, model, optimizer, state["optimizer"], meta)
    if scheduler is not None:
        _check_scheduler(name, scheduler, state["scheduler"], meta)

    restore = _Restore(model, optimizer, scheduler)
    try:  # the model last: a lazy module's first load cannot be undone
        if scheduler is not None:
            scheduler.load_state_dict(state["scheduler"])
        if optimizer is not None:
            optimizer.load_state_dict(state["optimizer"])
        model.load_state_dict(state["model"])
    except BaseException:
        restore()
        raise
    extra: dict[str, Any] = state["extra"]
    return extra
