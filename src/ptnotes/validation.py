"""Argument checks for every public ptnotes function: one order, one message style.

Each check takes ``(caller, name, value)`` (the public function or class being called,
the argument's name, the value received), then its constraints (keyword-only, except
the ``types`` of :func:`check_type`, the ``choices`` of :func:`check_choice` and the
``optimizer`` of :func:`check_optimizer_options`), and returns the value (converted where
it says so) or raises with one message style::

    <caller>() expects <name> to be <what was expected>, got <what was received>

:class:`TypeError` means the type is wrong, :class:`ValueError` the value. The caller is
passed as the object itself, not as a string, so its name in a message cannot drift
from the code (a class gives ``SmallCNN()``, a method ``BatchIndexSampler.set_epoch()``).

Rules the checks enforce everywhere: a flag is a :class:`bool` (``"False"`` and
``0`` are refused, not read as truthy or falsy); a number is an ``int`` or ``float``
(not a ``bool``; an optimizer's ``lr`` may also be a one-element integer or floating-point
tensor, see :func:`check_optimizer_options`) and is never NaN; integer seeds are checked
when they are given, not when they are first used. In :func:`check_bool`, :func:`check_int` and
:func:`check_number`, NumPy scalars count as what they are (``numpy.bool_`` as a bool,
``numpy.int64`` as an int, ``numpy.float32`` as a float) and are returned as the Python
value, so ``shuffle=np.mean(x) > 0`` works (:func:`check_optimizer_options` returns the
options as given); :func:`check_type` and :func:`check_choice` go by the Python type, so
they refuse a ``numpy.bool_`` where a ``bool`` is asked for and a ``numpy.int64`` among
``int`` choices. An integer that :func:`check_int` is given must fit in ``int64`` (what
torch stores it in); a number that :func:`check_number` is given, an ``int`` included, must
fit in a ``float``.
"""

from __future__ import annotations

import inspect
import math
import re
import reprlib
import warnings
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

import numpy as np
import torch

__all__ = [
    "MAX_SEED",
    "argument_error",
    "check_bool",
    "check_callable",
    "check_choice",
    "check_int",
    "check_number",
    "check_optimizer_options",
    "check_seed",
    "check_type",
]

T = TypeVar("T")

#: The largest seed accepted. :meth:`torch.Generator.manual_seed` takes up to
#: ``2**64 - 1``, and a sampler adds the epoch to its seed, so seeds and epochs are each
#: kept below ``2**63``.
MAX_SEED = 2**63 - 1

#: The range of an ``int`` any check accepts: what torch's ``int64`` holds.
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

#: Options whose default is ``None`` ("let torch choose") but which are flags when given.
_OPTIONAL_FLAGS = frozenset({"foreach", "fused"})

_SHORT = reprlib.Repr()
_SHORT.maxstring = 40
_SHORT.maxother = 40


def _name(caller: Callable[..., Any]) -> str:
    """``"batched_loader()"`` for a function, ``"SmallCNN()"`` for a class."""
    return f"{getattr(caller, '__qualname__', repr(caller))}()"


def _describe(value: object) -> str:
    """What a message says was received: the type, and a short repr of a plain value."""
    kind = type(value).__name__
    if isinstance(value, torch.Tensor):
        return f"Tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    if isinstance(value, np.generic):  # "numpy.bool True", not "bool True"
        return f"{public_name(type(value))} {_SHORT.repr(value.item())}"
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return f"{kind} {_SHORT.repr(value)}"
    return kind


def public_name(cls: type) -> str:
    """How messages name a class: its public path, ``torch.nn.Linear`` rather than
    ``torch.nn.modules.linear.Linear``; ``str`` for builtins; ``numpy.float64``.

    Examples:
        >>> import torch
        >>> from ptnotes.validation import public_name
        >>> public_name(torch.optim.AdamW), public_name(dict)
        ('torch.optim.AdamW', 'dict')
    """
    for prefix in ("torch.nn", "torch.optim", "torch.utils.data", "torch"):
        namespace = torch
        for part in prefix.split(".")[1:]:
            namespace = getattr(namespace, part)
        if getattr(namespace, cls.__qualname__, None) is cls:
            return f"{prefix}.{cls.__qualname__}"
    return f"{cls.__module__}.{cls.__qualname__}".removeprefix("builtins.")


def _fail(
    error: type[Exception], caller: Callable[..., Any], name: str, expected: str, value: object
) -> Exception:
    return error(f"{_name(caller)} expects {name} to be {expected}, got {_describe(value)}")


def argument_error(
    caller: Callable[..., Any],
    name: str,
    value: object,
    expected: str,
    *,
    error: type[Exception] = ValueError,
    got: str | None = None,
) -> Exception:
    """Build (not raise) the error for a condition the other checks do not cover.

    Args:
        caller: the public function or class whose argument this is.
        name: the argument's name.
        value: the value received.
        expected: what was expected, completing "expects <name> to be ...".
        error: the exception class: :class:`ValueError` (the default) or
            :class:`TypeError`.
        got: what was received, when the type and a short repr of ``value`` do not
            say it (a shape, say).

    Examples:
        >>> import torch
        >>> from ptnotes.validation import argument_error
        >>> def forward(x): ...
        >>> x = torch.zeros(3, 8, 8)
        >>> raise argument_error(forward, "x", x, "a 4-D batch")
        Traceback (most recent call last):
          ...
        ValueError: forward() expects x to be a 4-D batch, got Tensor of shape (3, 8, 8) and ...
    """
    received = _describe(value) if got is None else got
    return error(f"{_name(caller)} expects {name} to be {expected}, got {received}")


def check_type(
    caller: Callable[..., Any],
    name: str,
    value: object,
    types: type[T] | tuple[type[T], ...],
    *,
    expected: str | None = None,
) -> T:
    """Return ``value`` if it is an instance of ``types``, else raise :class:`TypeError`.

    Args:
        caller: the public function or class whose argument this is.
        name: the argument's name.
        value: the value received.
        types: a class or a tuple of classes, as for :func:`isinstance`.
        expected: how the message names what was expected (default: the class names).

    Examples:
        >>> from torch import nn
        >>> from ptnotes.validation import check_type
        >>> def freeze(module): ...
        >>> check_type(freeze, "module", nn.ReLU(), nn.Module)
        ReLU()
        >>> check_type(freeze, "module", "fc", nn.Module, expected="a torch.nn.Module")
        Traceback (most recent call last):
          ...
        TypeError: freeze() expects module to be a torch.nn.Module, got str 'fc'
        >>> import numpy as np
        >>> def loader(shuffle): ...
        >>> check_type(loader, "shuffle", np.bool_(True), bool)
        Traceback (most recent call last):
          ...
        TypeError: loader() expects shuffle to be a bool, got numpy.bool... True
        >>> def repeat(times): ...
        >>> check_type(repeat, "times", np.int64(2), int)
        Traceback (most recent call last):
          ...
        TypeError: repeat() expects times to be an int, got numpy.int64 2
    """
    if isinstance(value, types):
        return value
    if expected is None:
        classes = types if isinstance(types, tuple) else (types,)
        names = " or ".join(public_name(c) for c in classes)
        expected = ("an " if names[0] in "aeiou" else "a ") + names
    raise _fail(TypeError, caller, name, expected, value)


def check_bool(caller: Callable[..., Any], name: str, value: object) -> bool:
    """Return ``value`` if it is a :class:`bool`; anything else, even ``0`` or ``"no"``, raises.

    A ``numpy.bool_`` (what a NumPy comparison gives) is returned as the Python bool.

    Examples:
        >>> from ptnotes.validation import check_bool
        >>> def loader(shuffle): ...
        >>> check_bool(loader, "shuffle", False)
        False
        >>> check_bool(loader, "shuffle", "False")
        Traceback (most recent call last):
          ...
        TypeError: loader() expects shuffle to be a bool (True or False), got str 'False'
        >>> check_bool(loader, "shuffle", 0)
        Traceback (most recent call last):
          ...
        TypeError: loader() expects shuffle to be a bool (True or False), got int 0
        >>> import numpy as np
        >>> type(check_bool(loader, "shuffle", np.float64(0.5) > 0))
        <class 'bool'>
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise _fail(TypeError, caller, name, "a bool (True or False)", value)


def check_int(
    caller: Callable[..., Any],
    name: str,
    value: object,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """Return ``value`` if it is an ``int`` (not a ``bool``) within ``[minimum, maximum]``.

    A NumPy integer is returned as the Python ``int``. Whatever the bounds, the value must
    fit in ``int64`` (``[-2**63, 2**63 - 1]``), where torch keeps integers.

    Examples:
        >>> from ptnotes.validation import check_int
        >>> def sampler(batch_size): ...
        >>> check_int(sampler, "batch_size", 4, minimum=1)
        4
        >>> check_int(sampler, "batch_size", 0, minimum=1)
        Traceback (most recent call last):
          ...
        ValueError: sampler() expects batch_size to be an int >= 1, got int 0
        >>> check_int(sampler, "batch_size", 4.0, minimum=1)
        Traceback (most recent call last):
          ...
        TypeError: sampler() expects batch_size to be an int, got float 4.0
        >>> import numpy as np
        >>> type(check_int(sampler, "batch_size", np.int64(4)))
        <class 'int'>
        >>> check_int(sampler, "batch_size", 2**63, minimum=1)
        Traceback (most recent call last):
          ...
        ValueError: sampler() expects batch_size to be an int in [1, ...] (int64), got int 92233...
    """
    if isinstance(value, np.integer):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(TypeError, caller, name, "an int", value)
    if not _INT64_MIN <= value <= _INT64_MAX and (
        (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
    ):
        low = _INT64_MIN if minimum is None else max(minimum, _INT64_MIN)
        high = _INT64_MAX if maximum is None else min(maximum, _INT64_MAX)
        raise _fail(ValueError, caller, name, f"an int in [{low}, {high}] (int64)", value)
    if minimum is not None and maximum is not None and not minimum <= value <= maximum:
        raise _fail(ValueError, caller, name, f"an int in [{minimum}, {maximum}]", value)
    if minimum is not None and value < minimum:
        raise _fail(ValueError, caller, name, f"an int >= {minimum}", value)
    if maximum is not None and value > maximum:
        raise _fail(ValueError, caller, name, f"an int <= {maximum}", value)
    return value


def check_number(
    caller: Callable[..., Any],
    name: str,
    value: object,
    *,
    minimum: float | None = None,
    positive: bool = False,
    finite: bool = True,
) -> float:
    """Return ``value`` as a ``float`` if it is a real number that makes sense here.

    NaN is always refused (every comparison with it is false, so it slips through
    range checks). Infinity is refused unless ``finite=False``. A NumPy integer or
    floating scalar counts as a number (not a ``numpy.bool_``); an ``int`` too large for a
    ``float`` is refused.

    Args:
        caller: the public function or class whose argument this is.
        name: the argument's name.
        value: the value received: an ``int`` or ``float`` (or a NumPy integer or
            floating scalar), not a ``bool``.
        minimum: the smallest value allowed, if any.
        positive: require ``value > 0``.
        finite: refuse ``inf`` and ``-inf``.

    Examples:
        >>> import math
        >>> from ptnotes.validation import check_number
        >>> def clamp_(x, min, max): ...
        >>> check_number(clamp_, "min", -math.inf, finite=False)
        -inf
        >>> check_number(clamp_, "min", math.nan, finite=False)
        Traceback (most recent call last):
          ...
        ValueError: clamp_() expects min to be a number, not NaN, got float nan
        >>> import numpy as np
        >>> type(check_number(clamp_, "min", np.float32(0.5)))
        <class 'float'>
        >>> check_number(clamp_, "min", np.bool_(True))
        Traceback (most recent call last):
          ...
        TypeError: clamp_() expects min to be an int or float, got numpy.bool... True
        >>> check_number(clamp_, "min", 10**400)
        Traceback (most recent call last):
          ...
        ValueError: clamp_() expects min to be a number within the range of a float, got int ...
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise _fail(TypeError, caller, name, "an int or float", value)
    if isinstance(value, np.complexfloating):
        raise _fail(TypeError, caller, name, "an int or float", value)
    try:
        number = float(value)
        if math.isinf(number) and not np.isinf(value):  # a NumPy longdouble beyond a float
            raise OverflowError
    except OverflowError:
        raise _fail(
            ValueError, caller, name, "a number within the range of a float", value
        ) from None
    if math.isnan(number):
        raise _fail(ValueError, caller, name, "a number, not NaN", value)
    if finite and math.isinf(number):
        raise _fail(ValueError, caller, name, "a finite number", value)
    if positive and not number > 0:
        raise _fail(ValueError, caller, name, "a number > 0", value)
    if minimum is not None and number < minimum:
        raise _fail(ValueError, caller, name, f"a number >= {minimum:g}", value)
    return number


def check_seed(caller: Callable[..., Any], name: str, value: object) -> int:
    """Return ``value`` if it is an ``int`` seed in ``[0, MAX_SEED]``.

    Examples:
        >>> from ptnotes.validation import check_seed
        >>> def sampler(seed): ...
        >>> check_seed(sampler, "seed", 2**64)
        Traceback (most recent call last):
          ...
        ValueError: sampler() expects seed to be an int in [0, 9223372036854775807], got int ...

        A seed plus an epoch, each at most ``MAX_SEED``, still seeds a generator; a
        method's check names the method, and runs when the value is given:

        >>> import torch
        >>> from ptnotes.validation import MAX_SEED
        >>> torch.Generator().manual_seed(MAX_SEED + MAX_SEED).initial_seed() == 2**64 - 2
        True
        >>> from ptnotes.data import BatchIndexSampler
        >>> BatchIndexSampler(4, 2).set_epoch(-1)
        Traceback (most recent call last):
          ...
        ValueError: BatchIndexSampler.set_epoch() expects epoch to be an int in [0, ...], got int -1
    """
    return check_int(caller, name, value, minimum=0, maximum=MAX_SEED)


def check_callable(caller: Callable[..., Any], name: str, value: object) -> Callable[..., Any]:
    """Return ``value`` if it is callable, else raise :class:`TypeError`.

    Examples:
        >>> from ptnotes.validation import check_callable
        >>> def train_step(loss_fn): ...
        >>> check_callable(train_step, "loss_fn", "mse")
        Traceback (most recent call last):
          ...
        TypeError: train_step() expects loss_fn to be callable, got str 'mse'
    """
    if callable(value):
        return value
    raise _fail(TypeError, caller, name, "callable", value)


def check_choice(caller: Callable[..., Any], name: str, value: object, choices: Collection[T]) -> T:
    """Return ``value`` if it is one of ``choices``, else raise.

    Examples:
        >>> from ptnotes.validation import check_choice
        >>> def sequential_from(layers, style): ...
        >>> check_choice(sequential_from, "style", "dict", ("positional", "ordered_dict"))
        Traceback (most recent call last):
          ...
        ValueError: sequential_from() expects style to be one of 'positional', ..., got str 'dict'

        The type is Python's, so a NumPy integer is not one of ``int`` choices, and a
        ``bool`` (which Python counts as an ``int``) is one only of ``bool`` choices:

        >>> import numpy as np
        >>> def conv(groups): ...
        >>> check_choice(conv, "groups", np.int64(1), (1, 2))
        Traceback (most recent call last):
          ...
        TypeError: conv() expects groups to be one of 1, 2, got numpy.int64 1
        >>> check_choice(conv, "groups", True, (1, 2))
        Traceback (most recent call last):
          ...
        TypeError: conv() expects groups to be one of 1, 2, got bool True
    """
    options = ", ".join(repr(c) for c in choices)
    kinds = tuple({type(c) for c in choices})
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise _fail(TypeError, caller, name, f"one of {options}", value)
    if value not in choices:
        raise _fail(ValueError, caller, name, f"one of {options}", value)
    return value  # a member of choices, so a T


def check_device(
    caller: Callable[..., Any], name: str, value: object, *, meta: bool = True
) -> torch.device:
    """Return ``value`` as a :class:`torch.device` this build of torch can put tensors on.

    ``value`` is a :class:`torch.device`, a ``str`` (``"cpu"``, ``"cuda:1"``) or an
    ``int`` (an index of the machine's accelerator, as torch reads it: refused where there
    is none). Refused: a name torch does not know (``"gpu"``), a negative index, a CPU
    index other than 0 (``"cpu:1"``; ``"cpu:0"`` is returned as ``"cpu"``), a device
    type this machine or build lacks (``"cuda"`` without CUDA), and with ``meta=False``
    the meta device (shapes, no data). Not in ``__all__``: the rule, after their own type
    checks, of :class:`ptnotes.layers.Linear`'s ``device`` (which refuses a NumPy integer)
    and of :func:`ptnotes.checkpoint.load_checkpoint`'s ``map_location`` (a ``str`` or a
    :class:`torch.device`: an ``int`` is refused there).
    """
    if isinstance(value, np.integer):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, torch.device | str | int):
        raise _fail(TypeError, caller, name, "a torch.device, str or int", value)
    try:
        device = torch.device(value)
    except (RuntimeError, ValueError) as error:  # "gpu", -1: torch lists what it knows
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        got = f"{type(value).__name__} {value!r} ({detail[:240]})"
        expected = (
            "an index of this machine's accelerator (a device name such as 'cpu' otherwise)"
            if isinstance(value, int)
            else "a device torch knows (cpu, cuda, ...)"
        )
        raise argument_error(caller, name, value, expected, got=got) from None
    if device.type == "cpu":  # one device: "cpu:0" is "cpu" (torch.load knows no CPU index)
        if device.index not in (None, 0):
            expected = "a device this machine has (the CPU is one device: 'cpu')"
            raise argument_error(caller, name, value, expected, got=f"{value!r}")
        return torch.device("cpu")
    if device.type == "meta":
        if not meta:
            expected = "a device with data (the meta device holds shapes only)"
            raise argument_error(caller, name, value, expected, got=f"{value!r}")
        return device
    try:
        torch.empty(0, device=device)
    except Exception as error:  # "Torch not compiled with CUDA enabled", no such index
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        expected = "a device this machine and this build of torch have"
        got = f"{value!r} ({type(error).__name__}: {detail[:240]})"
        raise argument_error(caller, name, value, expected, got=got) from None
    return device


def optimizer_defaults(optimizer: type[torch.optim.Optimizer]) -> dict[str, Any]:
    """The keyword options of an optimizer's constructor and their defaults."""
    signature = inspect.signature(optimizer)
    return {
        p.name: p.default
        for p in signature.parameters.values()
        if p.name != "params" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def builtin_optimizers() -> list[type[torch.optim.Optimizer]]:
    found = [getattr(torch.optim, n) for n in dir(torch.optim) if not n.startswith("_")]
    return [
        o
        for o in found
        if isinstance(o, type) and issubclass(o, torch.optim.Optimizer)
        if o is not torch.optim.Optimizer
    ]


def check_optimizer_options(
    caller: Callable[..., Any],
    name: str,
    value: object,
    optimizer: type[torch.optim.Optimizer] | None = None,
) -> dict[str, Any]:
    """Return ``value`` as a dict if it holds options that ``optimizer`` accepts.

    A key must be a keyword of the optimizer's constructor (with ``optimizer=None``, of
    any optimizer in :mod:`torch.optim`), so that a typo such as ``"lrr"`` fails here:
    an optimizer keeps an unknown key in its parameter group and never reads it, so
    ``optimizer.step()`` would run with the default instead, without an error. Where
    that keyword's default is not ``None`` (or it is ``foreach`` or ``fused``, flags
    when given), a value must have the type of the default: a finite number where the default is
    a number (a one-element tensor too for ``lr``; not a negative one where the default is not
    negative, although SGD itself accepts ``dampening=-1.0``), a ``bool`` for a flag, a tuple
    or list of finite numbers of the same length for ``betas``-like options; and the
    optimizer's constructor must accept it alone (its range checks: Adam's ``betas=(0.9, 1.5)``,
    say). Each option is checked on its own: a rule across options, such as SGD's
    ``nesterov`` needing a ``momentum``, is left to the optimizer. ``"params"`` is refused: the
    parameters are not an option.

    Examples:
        >>> import torch
        >>> from ptnotes.validation import check_optimizer_options
        >>> def param_groups(model, groups): ...
        >>> check_optimizer_options(param_groups, "options", {"lr": 0.1}, torch.optim.SGD)
        {'lr': 0.1}
        >>> check_optimizer_options(param_groups, "options", {"lrr": 0.1}, torch.optim.SGD)
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects options to be options of torch.optim.SGD ... key 'lrr'
        >>> check_optimizer_options(param_groups, "options", {"lr": "x"})
        Traceback (most recent call last):
          ...
        TypeError: param_groups() expects options['lr'] to be an int or float, got str 'x'

        An ``lr`` may also be a NumPy float or a one-element float tensor, each returned as given;
        a tensor of more elements is refused:

        >>> import numpy as np
        >>> for lr in (np.float32(0.1), torch.tensor([0.1])):
        ...     options = check_optimizer_options(param_groups, "o", {"lr": lr}, torch.optim.SGD)
        ...     print(type(lr).__name__, options["lr"] is lr)
        float32 True
        Tensor True
        >>> check_optimizer_options(param_groups, "o", {"lr": torch.tensor([0.1, 0.2])})
        Traceback (most recent call last):
          ...
        TypeError: param_groups() expects o['lr'] to be an int or float, got Tensor of shape (2,)...

        What torch does with the typo, and a rule across options that passes here:

        >>> p = torch.zeros(1, requires_grad=True)
        >>> sgd = torch.optim.SGD([{"params": [p], "lrr": 5.0}], lr=0.1)
        >>> p.grad = torch.ones(1)
        >>> sgd.step()
        >>> round(p.item(), 4)  # lr 0.1 was used; "lrr" sits in the group, unread
        -0.1
        >>> check_optimizer_options(param_groups, "options", {"nesterov": True}, torch.optim.SGD)
        {'nesterov': True}
        >>> torch.optim.SGD([p], lr=0.1, nesterov=True)
        Traceback (most recent call last):
          ...
        ValueError: Nesterov momentum requires a momentum and zero dampening

        A value the optimizer's constructor refuses is refused, with its reason:

        >>> check_optimizer_options(param_groups, "o", {"betas": (0.9, 1.5)}, torch.optim.Adam)
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects o['betas'] to be a value torch.optim.Adam accepts (Inv...

        A negative number is refused where the default is not negative, even one the
        constructor takes:

        >>> check_optimizer_options(param_groups, "options", {"dampening": -1.0}, torch.optim.SGD)
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects options['dampening'] to be a number >= 0, got float -1.0
        >>> torch.optim.SGD([p], lr=0.1, dampening=-1.0).defaults["dampening"]
        -1.0

        ``line_search_fn``, whose default is ``None``, takes any value the constructor
        keeps but NaN (this one LBFGS refuses only in ``step``), and ``"params"`` is refused:

        >>> check_optimizer_options(param_groups, "o", {"line_search_fn": 5}, torch.optim.LBFGS)
        {'line_search_fn': 5}
        >>> lbfgs = torch.optim.LBFGS([p], line_search_fn=5)
        >>> lbfgs.step(lambda: (p**2).sum())
        Traceback (most recent call last):
          ...
        RuntimeError: only 'strong_wolfe' is supported
        >>> import math
        >>> check_optimizer_options(param_groups, "o", {"max_eval": math.nan}, torch.optim.LBFGS)
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects o['max_eval'] to be a number, not NaN, got float nan
        >>> check_optimizer_options(param_groups, "o", {"params": [p]}, torch.optim.SGD)
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects o to be optimizer options without 'params' ...
    """
    if not isinstance(value, Mapping):
        raise _fail(TypeError, caller, name, "a mapping such as {'lr': 0.01}", value)
    if optimizer is None:
        label = "a torch.optim optimizer"
        candidates = builtin_optimizers()
    else:
        check_type(caller, "optimizer", optimizer, type)
        if not issubclass(optimizer, torch.optim.Optimizer):
            raise _fail(TypeError, caller, "optimizer", "a torch.optim.Optimizer class", optimizer)
        label = f"{optimizer.__module__.removesuffix('.sgd')}.{optimizer.__qualname__}"
        if optimizer.__module__.startswith("torch.optim"):
            label = f"torch.optim.{optimizer.__qualname__}"
        candidates = [optimizer]
    defaults: dict[str, list[Any]] = {}
    for candidate in candidates:
        for key, default in optimizer_defaults(candidate).items():
            defaults.setdefault(key, []).append(default)
    result: dict[str, Any] = {}
    for key, option in value.items():
        if key == "params":
            raise ValueError(
                f"{_name(caller)} expects {name} to be optimizer options without 'params' "
                "(the parameters come from elsewhere), got key 'params'"
            )
        if not isinstance(key, str) or key not in defaults:
            known = ", ".join(sorted(defaults))
            raise ValueError(
                f"{_name(caller)} expects {name} to be options of {label} ({known}), "
                f"got unknown key {key!r}"
            )
        _option(caller, f"{name}[{key!r}]", key, option, defaults[key])
        _accepted_by_constructor(caller, f"{name}[{key!r}]", key, option, candidates, label)
        result[key] = option
    return result


def _constructor_refusal(optimizer: type[torch.optim.Optimizer], key: str, option: object) -> str:
    """The optimizer's own constructor's objection to ``{key: option}``; ``""`` if none.

    Only range checks count: most of torch.optim's say ``"Invalid ..."``, Adafactor's and
    Muon's ``"<option> should be >= 0 ..."`` or ``"... is not supported"``. A rule across
    options (SGD's ``nesterov`` needs a momentum, which the group may take from the
    constructor's arguments; its message names the other options) or a missing required
    argument is not this check's business, and nor is an objection to the parameter
    (Muon's to one that is not 2-D), which the constructor also raises with no option.
    """
    message = _constructor_error(optimizer, {key: option})
    if not message or message == _constructor_error(optimizer, {}):
        return ""
    if optimizer.__module__.startswith("torch.optim") and not message.startswith("Invalid"):
        others = {k.lower() for k in optimizer_defaults(optimizer)} - {key.lower()}
        if others & {word.lower() for word in re.findall(r"[A-Za-z_]\w*", message)}:
            return ""  # "Nesterov momentum requires a momentum and zero dampening"
    return message


def _constructor_error(optimizer: type[torch.optim.Optimizer], options: dict[str, Any]) -> str:
    """The ``ValueError`` of ``optimizer([p], **options)`` for a 2-D ``p``; ``""`` if none."""
    parameter = torch.zeros(1, 1, requires_grad=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            optimizer([parameter], **options)
    except ValueError as error:
        return str(error) or type(error).__name__
    except Exception:
        return ""
    return ""


def _accepted_by_constructor(
    caller: Callable[..., Any],
    label: str,
    key: str,
    option: object,
    candidates: list[type[torch.optim.Optimizer]],
    optimizer_label: str,
) -> None:
    """Refuse ``option`` if every optimizer that has ``key`` refuses it in its constructor."""
    refusals = []
    for candidate in candidates:
        if key not in optimizer_defaults(candidate):
            continue
        refusal = _constructor_refusal(candidate, key, option)
        if not refusal:
            return
        refusals.append(refusal)
    if refusals:
        expected = f"a value {optimizer_label} accepts ({refusals[0]})"
        got = f"{type(option).__name__} {_SHORT.repr(option)}"
        raise argument_error(caller, label, option, expected, got=got)


def _option(
    caller: Callable[..., Any], label: str, key: str, option: object, defaults: list[Any]
) -> None:
    """Check one option value against the defaults the optimizers give that keyword."""
    kinds = {type(d) for d in defaults if d is not None and d is not inspect.Parameter.empty}
    if option is None and (None in defaults or not kinds):
        return
    tuples = [d for d in defaults if isinstance(d, tuple)]
    if key in _OPTIONAL_FLAGS or (kinds and kinds <= {bool}):
        check_bool(caller, label, option)
    elif tuples and (isinstance(option, tuple | list) or not kinds - {tuple}):
        lengths = {len(d) for d in tuples}
        if not isinstance(option, tuple | list) or len(option) not in lengths:
            expected = " or ".join(str(n) for n in sorted(lengths))
            raise _fail(TypeError, caller, label, f"a tuple of {expected} numbers", option)
        for position, item in enumerate(option):
            if item is None and any(len(d) == len(option) and d[position] is None for d in tuples):
                continue  # Adafactor's eps=(None, 1e-3): None means "choose for me"
            check_number(caller, f"{label}[{position}]", item)
    elif kinds & {int, float, torch.Tensor}:
        if key == "lr" and isinstance(option, torch.Tensor) and option.numel() == 1:
            option = option.item()
        number = check_number(caller, label, option)
        if number < 0 and all(d >= 0 for d in defaults if isinstance(d, int | float)):
            raise _fail(ValueError, caller, label, "a number >= 0", option)
    elif _is_nan(option):  # LBFGS's max_eval
        raise _fail(ValueError, caller, label, "a number, not NaN", option)


def _is_nan(option: object) -> bool:
    """A float or NumPy floating NaN, or a one-element floating tensor holding NaN."""
    if isinstance(option, torch.Tensor):
        return option.numel() == 1 and option.is_floating_point() and math.isnan(option.item())
    return isinstance(option, float | np.floating) and math.isnan(option)
