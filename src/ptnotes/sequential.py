"""The three ways to build an :class:`torch.nn.Sequential`, and a check that two builds agree."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Literal

from torch import nn
from torch.nn.parameter import is_lazy
from torch.nn.utils import parametrize

from ptnotes.validation import argument_error, check_bool, check_choice, check_type

__all__ = ["same_structure", "sequential_from"]

_STYLES = ("positional", "ordered_dict", "add_module")


def _named_layers(layers: object) -> list[tuple[str, nn.Module]]:
    """Return ``layers`` as a list of ``(name, module)`` pairs, or raise a clear error."""
    me = sequential_from
    if isinstance(layers, str | bytes) or not isinstance(layers, Sequence):
        expected = "a sequence of (name, module) pairs"
        raise argument_error(me, "layers", layers, expected, error=TypeError)
    checked: list[tuple[str, nn.Module]] = []
    seen: set[str] = set()
    for position, pair in enumerate(layers):
        if not (isinstance(pair, tuple) and len(pair) == 2):
            expected = "a (name, module) tuple"
            raise argument_error(me, f"layers[{position}]", pair, expected, error=TypeError)
        name, module = pair
        check_type(me, f"the name of layers[{position}]", name, str)
        check_type(me, f"the module of layers[{position}]", module, nn.Module)
        if name == "" or "." in name:
            expected = "a non-empty name free of '.'"
            raise argument_error(me, f"the name of layers[{position}]", name, expected)
        if name in seen:
            expected = (
                "a name not used before (an OrderedDict or add_module would silently "
                "keep only one of the two layers)"
            )
            raise argument_error(me, f"the name of layers[{position}]", name, expected)
        seen.add(name)
        checked.append((name, module))
    return checked


def sequential_from(
    layers: Sequence[tuple[str, nn.Module]],
    style: Literal["positional", "ordered_dict", "add_module"],
) -> nn.Sequential:
    """Build an :class:`torch.nn.Sequential` from named layers, in one of its three styles.

    ``"positional"``
        ``nn.Sequential(m0, m1, ...)``: the names are dropped and the children are
        called ``"0"``, ``"1"``, ...
    ``"ordered_dict"``
        ``nn.Sequential(OrderedDict([(name, m), ...]))``: the children keep the names.
    ``"add_module"``
        ``seq = nn.Sequential()`` then ``seq.add_module(name, m)`` for each layer: the
        children keep the names too.

    The three styles give the same computation; they differ only in the child names,
    hence in the keys of :meth:`~torch.nn.Module.state_dict` (``"0.weight"`` versus
    ``"conv1.weight"``). When a layer with parameters is named other than its position,
    a checkpoint saved from one naming does not load into the other with
    ``strict=True``; a checkpoint of layers with no parameters or buffers, such as
    ``nn.ReLU``, has no keys and does load. Integer indexing (``seq[0]``) works in every
    style.

    The modules are used as they are, not copied: calling this twice with the same
    modules gives two containers that share their parameters.

    Args:
        layers: ``(name, module)`` pairs in forward order. Names must be unique,
            non-empty and contain no ``"."``; they are checked in every style, even
            ``"positional"``, which then discards them. A name that is already an
            attribute of :class:`torch.nn.Sequential` (``"forward"``, ``"training"``)
            passes these checks, and the named styles then get torch's
            :class:`KeyError` from ``add_module``.
        style: ``"positional"``, ``"ordered_dict"`` or ``"add_module"``.

    Returns:
        A new :class:`torch.nn.Sequential` holding the modules in order.

    Raises:
        TypeError: if ``layers`` is not a sequence of ``(str, nn.Module)`` tuples, or
            ``style`` is not a str.
        ValueError: if ``style`` is unknown, or a name is empty, contains ``"."`` or is
            repeated (an :class:`~collections.OrderedDict` or ``add_module`` would
            silently keep one layer of the two).

    Examples:
        >>> from torch import nn
        >>> from ptnotes.sequential import sequential_from
        >>> def layers():
        ...     return [("conv1", nn.Conv2d(1, 2, 3)), ("relu1", nn.ReLU())]
        >>> sequential_from(layers(), "positional")
        Sequential(
          (0): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))
          (1): ReLU()
        )
        >>> named = sequential_from(layers(), "ordered_dict")
        >>> named
        Sequential(
          (conv1): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))
          (relu1): ReLU()
        )
        >>> list(named.state_dict())
        ['conv1.weight', 'conv1.bias']
        >>> list(sequential_from(layers(), "add_module").state_dict())
        ['conv1.weight', 'conv1.bias']
        >>> named[0] is named.conv1
        True

        The same modules in two builds are shared, not copied; the two namings' state
        dicts do not load into each other (the empty ones of layers with no parameters or
        buffers do); a name that is an attribute is torch's error:

        >>> shared = layers()
        >>> by_position = sequential_from(shared, "positional")
        >>> by_name = sequential_from(shared, "add_module")
        >>> by_position[0].weight is by_name.conv1.weight
        True
        >>> by_name.load_state_dict(by_position.state_dict())
        Traceback (most recent call last):
          ...
        RuntimeError: Error(s) in loading state_dict for Sequential:
            Missing key(s) in state_dict: "conv1.weight", "conv1.bias". ...
        >>> acts = [("act", nn.ReLU())]
        >>> empty = sequential_from(acts, "positional").state_dict()
        >>> sequential_from(acts, "add_module").load_state_dict(empty)
        <All keys matched successfully>
        >>> sequential_from([("forward", nn.ReLU())], "ordered_dict")
        Traceback (most recent call last):
          ...
        KeyError: "attribute 'forward' already exists"
    """
    checked = _named_layers(layers)
    chosen = check_choice(sequential_from, "style", style, _STYLES)
    if chosen == "positional":
        return nn.Sequential(*(module for _, module in checked))
    if chosen == "ordered_dict":
        return nn.Sequential(OrderedDict(checked))
    if chosen == "add_module":
        sequential = nn.Sequential()
        for name, module in checked:
            sequential.add_module(name, module)
        return sequential
    raise AssertionError(chosen)  # check_choice admits only the three styles


def _kind(module: nn.Module) -> tuple[type, str | None]:
    """A module's class, and its configuration while it has uninitialised (lazy) tensors.

    A parametrized module's class is made anew for each module (``ParametrizedLinear``),
    so the class it was made from stands for it. A lazy module's tensors have no shapes
    yet: its whole ``extra_repr`` (``out_features=2``) tells two apart, so a setting that
    shapes no tensor (``stride``, ``momentum``) does too, and two of a class whose
    ``extra_repr`` is empty are not told apart by it.
    """
    kind = type(module)
    if parametrize.is_parametrized(module):
        kind = kind.__bases__[0]
    lazy = any(
        is_lazy(t)
        for t in (*module._parameters.values(), *module._buffers.values())
        if t is not None
    )
    return kind, module.extra_repr() if lazy else None


def same_structure(a: nn.Module, b: nn.Module, *, ignore_names: bool = False) -> bool:
    """Tell whether two modules have the same layers, parameters and buffers.

    Compared, in the order :meth:`~torch.nn.Module.modules`,
    :meth:`~torch.nn.Module.named_parameters` and :meth:`~torch.nn.Module.named_buffers`
    list them, which is not always registration order: a module's own parameters come
    before its children's, and all parameters before all buffers, so two modules that
    register the same tensors in another order can match:

    * the types of all modules, the two roots included (:meth:`~torch.nn.Module.modules`);
    * the parameters and buffers: their kind (a parameter, a buffer, a buffer that is not
      persistent, i.e. left out of :meth:`~torch.nn.Module.state_dict`), their shapes
      and, unless ``ignore_names``, their qualified names, as
      :meth:`~torch.nn.Module.named_parameters` and
      :meth:`~torch.nn.Module.named_buffers` list them: a tensor registered under two
      names (tied weights) counts once, so a tied module and an untied one differ, with
      or without names, although their ``state_dict`` keys are the same.

    Names matter by default, because they are what a checkpoint is keyed by: a
    positional :class:`torch.nn.Sequential` (``"0.weight"``) and a named one
    (``"conv1.weight"``) of the same layers with parameters are *not* the same
    structure, and ``load_state_dict`` between them fails; of layers with no parameters
    or buffers, such as ``nn.ReLU``, they are. Pass ``ignore_names=True`` to compare the
    architecture only. Values, dtypes and devices are not compared, nor settings that
    shape no tensor (a ``Conv2d``'s ``stride``, a ``Dropout``'s ``p``); an
    uninitialised parameter of a lazy module (``nn.LazyLinear`` before its first
    forward) has no shape yet and only matches another uninitialised one, in a module
    of the same configuration (its whole ``extra_repr``, ``stride`` included).

    Args:
        a: the first module.
        b: the second module.
        ignore_names: leave the names out of the comparison (the types, the kinds and
            the shapes are still compared).

    Returns:
        ``True`` if the structures match under the chosen rule.

    Raises:
        TypeError: if ``a`` or ``b`` is not an :class:`torch.nn.Module`, or
            ``ignore_names`` is not a ``bool`` (a ``numpy.bool_`` counts as one).

    Examples:
        >>> from torch import nn
        >>> from ptnotes.sequential import same_structure, sequential_from
        >>> def layers():
        ...     return [("fc", nn.Linear(2, 3)), ("bn", nn.BatchNorm1d(3))]
        >>> by_dict = sequential_from(layers(), "ordered_dict")
        >>> by_add = sequential_from(layers(), "add_module")
        >>> by_position = sequential_from(layers(), "positional")
        >>> same_structure(by_dict, by_add)
        True
        >>> same_structure(by_dict, by_position)
        False
        >>> same_structure(by_dict, by_position, ignore_names=True)
        True
        >>> same_structure(by_dict, sequential_from([("fc", nn.Linear(2, 4))], "add_module"))
        False

        Without names, a parameter and a buffer of the same shape still differ:

        >>> import torch
        >>> class Holder(nn.Module):
        ...     def __init__(self, as_buffer):
        ...         super().__init__()
        ...         if as_buffer:
        ...             self.register_buffer("w", torch.zeros(3))
        ...         else:
        ...             self.w = nn.Parameter(torch.zeros(3))
        >>> same_structure(Holder(False), Holder(True), ignore_names=True)
        False

        Layers with no parameters or buffers match under any names, and a module that
        registers a parameter, a buffer and a child in that order matches one that registers
        them in the reverse order:

        >>> acts = [("act", nn.ReLU())]
        >>> by_position = sequential_from(acts, "positional")
        >>> same_structure(by_position, sequential_from(acts, "add_module"))
        True
        >>> class Mixed(nn.Module):
        ...     def __init__(self, reverse):
        ...         super().__init__()
        ...         if reverse:
        ...             self.child = nn.Linear(2, 2)
        ...             self.register_buffer("b", torch.zeros(2))
        ...             self.p = nn.Parameter(torch.zeros(2))
        ...         else:
        ...             self.p = nn.Parameter(torch.zeros(2))
        ...             self.register_buffer("b", torch.zeros(2))
        ...             self.child = nn.Linear(2, 2)
        >>> [name for name, _ in Mixed(True).named_parameters()]
        ['p', 'child.weight', 'child.bias']
        >>> same_structure(Mixed(False), Mixed(True))
        True
    """
    check_type(same_structure, "a", a, nn.Module)
    check_type(same_structure, "b", b, nn.Module)
    names = not check_bool(same_structure, "ignore_names", ignore_names)
    if [_kind(m) for m in a.modules()] != [_kind(m) for m in b.modules()]:
        return False

    def tensors(module: nn.Module) -> list[tuple[str, str, tuple[int, ...] | None]]:
        saved = set(module.state_dict(keep_vars=True))  # parameters and persistent buffers
        named = [
            *(("parameter", n, t) for n, t in module.named_parameters()),
            *(
                ("buffer" if n in saved else "buffer (not persistent)", n, t)
                for n, t in module.named_buffers()
            ),
        ]
        return [
            (kind, name if names else "", None if is_lazy(t) else tuple(t.shape))
            for kind, name, t in named
        ]

    return tensors(a) == tensors(b)
