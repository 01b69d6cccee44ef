"""Proof that a refused call changed nothing: a deep snapshot of the objects it was given.

``with state_unchanged(model, optimizer, path): call()`` takes a snapshot of every object
before the call and compares it with one taken after (also when the call raises, which is
the case it is for). What a snapshot holds, per kind of object:

* a module: every parameter and buffer (values, dtype, ``requires_grad``, ``.grad``, the
  object's identity), each submodule's identity and training flag, the hooks registered on
  modules and parameters;
* a tensor: its values, dtype, ``requires_grad``, ``.grad`` and version counter;
* an optimizer: its class, every group's options and parameters, and its state tensors;
* a scheduler (or any object with ``state_dict()``): its class and state dict;
* a path: the file's bytes (or its absence) and the names in its folder (a temporary file
  left behind is a change);
* :data:`GLOBAL_RNG`: torch's CPU random state (a refused step must not have drawn from it);
* anything else: a deep copy of its attributes.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn.parameter import is_lazy


class _GlobalRandomState:
    """Stands for torch's global CPU generator in ``state_unchanged(...)``."""

    def __repr__(self) -> str:
        return "GLOBAL_RNG"


GLOBAL_RNG = _GlobalRandomState()


def _tensor(t: torch.Tensor, version: bool = False) -> tuple[Any, ...]:
    """A tensor's identity, kind and values; its version counter only when ``version``.

    The counter is compared for a tensor passed in itself (an in-place op that refused
    must not have written); inside a module it may move when a rollback copies the old
    values back (``load_state_dict`` copies in place).
    """
    if is_lazy(t):  # no shape, no values yet: its identity and its class (it materialises)
        return ("lazy tensor", id(t), type(t), t.requires_grad)
    grad = t.grad
    return (
        "tensor",
        id(t),
        t.dtype,
        tuple(t.shape),
        t.requires_grad,
        t.detach().clone(),
        None if grad is None else (id(grad), grad.detach().clone()),
        t._version if version else None,
        len(getattr(t, "_backward_hooks", None) or {}),
    )


def _module(module: nn.Module) -> tuple[Any, ...]:
    return (
        "module",
        [
            (
                name,
                id(m),
                type(m),
                m.training,
                len(m._forward_hooks),
                len(m._forward_pre_hooks),
                len(m._backward_hooks),
            )
            for name, m in module.named_modules(remove_duplicate=False)
        ],
        [(n, _tensor(p)) for n, p in module.named_parameters(remove_duplicate=False)],
        [(n, _tensor(b)) for n, b in module.named_buffers(remove_duplicate=False)],
    )


def _optimizer(optimizer: torch.optim.Optimizer) -> tuple[Any, ...]:
    groups = [
        (
            sorted((k, _plain(v)) for k, v in group.items() if k != "params"),
            [id(p) for p in group["params"]],
        )
        for group in optimizer.param_groups
    ]
    state = [
        (id(p), sorted((k, _plain(v)) for k, v in values.items()))
        for p, values in optimizer.state.items()
    ]
    return ("optimizer", type(optimizer), groups, sorted(state, key=lambda s: s[0]))


def _plain(value: object) -> object:
    if isinstance(value, torch.Tensor):
        return _tensor(value)
    if isinstance(value, nn.Module | torch.optim.Optimizer):
        return ("same object", id(value))  # compared in its own right when passed in
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    try:
        return copy.deepcopy(value)
    except Exception:  # a hook handle, a generator: compared by identity
        return ("same object", id(value))


def _path(path: Path) -> tuple[Any, ...]:
    content = path.read_bytes() if path.is_file() else None
    folder = sorted(p.name for p in path.parent.iterdir()) if path.parent.is_dir() else None
    return ("path", content, folder)


def snapshot(obj: object) -> object:
    """Everything about ``obj`` that a call could change, as comparable values."""
    if obj is GLOBAL_RNG:
        return ("rng", torch.get_rng_state())
    if isinstance(obj, nn.Module):
        return _module(obj)
    if isinstance(obj, torch.Tensor):
        return _tensor(obj, version=True)
    if isinstance(obj, torch.optim.Optimizer):
        return _optimizer(obj)
    if isinstance(obj, Path):
        return _path(obj)
    if hasattr(obj, "state_dict") and callable(obj.state_dict):
        return ("stateful", type(obj), _plain(obj.state_dict()))
    return ("object", type(obj), _plain(dict(vars(obj))))


def same(a: object, b: object) -> bool:
    """Equality in which tensors compare by dtype, shape and value (NaN equal to NaN)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if (a.dtype, a.shape, a.device) != (b.dtype, b.shape, b.device):
            return False
        if a.is_meta:  # no values to compare
            return True
        if a.is_floating_point() or a.is_complex():
            return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
        return torch.equal(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def _difference(a: object, b: object, where: str = "") -> str:
    """Where two snapshots first differ, for the assertion message."""
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            if not same(a[k], b[k]):
                return _difference(a[k], b[k], f"{where}[{k!r}]")
    if (
        isinstance(a, list | tuple)
        and isinstance(b, list | tuple)
        and len(a) == len(b)
        and not isinstance(a, torch.Tensor)
    ):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if not same(x, y):
                return _difference(x, y, f"{where}[{i}]")
    return f"{where}: {a!r} -> {b!r}"[:2000]


@contextmanager
def state_unchanged(*objects: object) -> Iterator[None]:
    """Fail if the body changes any of ``objects`` (the body may raise: that is the point)."""
    before = [snapshot(o) for o in objects]
    try:
        yield
    finally:
        for position, (obj, old) in enumerate(zip(objects, before, strict=True)):
            new = snapshot(obj)
            assert same(old, new), (
                f"argument {position} ({type(obj).__name__}) changed at {_difference(old, new)}"
            )
