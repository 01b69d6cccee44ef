"""Fine-tuning by parameter name: freeze and unfreeze, swap the head, group learning rates."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

import torch
from torch import nn

from ptnotes.validation import (
    argument_error,
    check_bool,
    check_optimizer_options,
    check_type,
)

__all__ = ["freeze", "param_groups", "replace_head", "unfreeze"]

#: What :func:`freeze` and :func:`unfreeze` accept to select parameters.
Selector = str | Callable[[str, nn.Parameter], bool] | None

_SHOWN_NAMES = 5


def _some_names(names: Sequence[str]) -> str:
    """The first few parameter names, for an error message."""
    shown = ", ".join(names[:_SHOWN_NAMES])
    more = len(names) - _SHOWN_NAMES
    return shown + (f", ... ({more} more)" if more > 0 else "") if names else "(none)"


def _pattern(caller: Callable[..., Any], label: str, pattern: object) -> str:
    """Return ``pattern`` if it is a non-empty str."""
    pattern = check_type(caller, label, pattern, str)
    if not pattern:
        raise argument_error(caller, label, pattern, "a non-empty pattern")
    return pattern


def _matches_nothing(
    caller: Callable[..., Any], label: str, pattern: object, named: Sequence[tuple[str, Any]]
) -> Exception:
    names = _some_names([n for n, _ in named])
    expected = f"a pattern that matches a parameter name ({names})"
    if isinstance(pattern, str):
        got = f"{pattern!r}, which matches nothing"
    else:
        kind = getattr(pattern, "__name__", type(pattern).__name__)
        got = f"predicate {kind}, which matches nothing"
    return argument_error(caller, label, pattern, expected, got=got)


def _select(
    caller: Callable[..., Any], module: nn.Module, pattern: Selector
) -> list[tuple[str, nn.Parameter]]:
    """The (name, parameter) pairs of ``module`` that ``pattern`` selects; error if none do.

    Every name counts, a tied parameter's second name too (``remove_duplicate=False``).
    """
    named = list(module.named_parameters(remove_duplicate=False))
    if pattern is None:
        return named
    if isinstance(pattern, str):
        _pattern(caller, "pattern", pattern)
        chosen = [(n, p) for n, p in named if fnmatchcase(n, pattern)]
    elif callable(pattern):
        # a real bool: a truthy "no" or a tensor must not select (or crash) silently
        label = "pattern(name, parameter)"
        chosen = [(n, p) for n, p in named if check_bool(caller, label, pattern(n, p))]
    else:
        expected = "None, a str or a callable (name, parameter) -> bool"
        raise argument_error(caller, "pattern", pattern, expected, error=TypeError)
    if not chosen:
        raise _matches_nothing(caller, "pattern", pattern, named)
    return chosen


def _set_requires_grad(
    caller: Callable[..., Any], module: object, pattern: Selector, requires_grad: bool
) -> list[str]:
    module_ = check_type(caller, "module", module, nn.Module)
    # one Parameter reachable under several names (tied weights) is selected by any of
    # them and changed once
    unique: dict[int, tuple[str, nn.Parameter]] = {}
    for n, p in _select(caller, module_, pattern):
        if p.requires_grad != requires_grad:
            unique.setdefault(id(p), (n, p))
    chosen = list(unique.values())
    if requires_grad:
        for name, parameter in chosen:
            if not (parameter.is_floating_point() or parameter.is_complex()):
                expected = (
                    "a selection of parameters that can require grad (floating point or "
                    "complex; narrow the pattern)"
                )
                got = f"{name!r}, of dtype {parameter.dtype}"
                raise argument_error(caller, "pattern", pattern, expected, got=got)
            if parameter.is_inference() and not torch.is_inference_mode_enabled():
                expected = (
                    "a selection of parameters that can require grad (not frozen inference "
                    "tensors, which torch lets require grad again only inside "
                    "torch.inference_mode())"
                )
                got = f"{name!r}, an inference tensor (created under torch.inference_mode())"
                raise argument_error(caller, "pattern", pattern, expected, got=got)
    done: list[tuple[str, nn.Parameter]] = []
    try:
        for name, parameter in chosen:
            parameter.requires_grad_(requires_grad)
            done.append((name, parameter))
    except BaseException:
        for _, parameter in done:  # all or nothing
            parameter.requires_grad_(not requires_grad)
        raise
    # every name of what changed, so a tied name the pattern did not match is seen too
    changed = {id(parameter) for _, parameter in done}
    return [n for n, p in module_.named_parameters(remove_duplicate=False) if id(p) in changed]


def freeze(module: nn.Module, pattern: Selector = None) -> list[str]:
    """Stop gradients for the parameters of ``module`` that ``pattern`` selects.

    Sets :attr:`~torch.Tensor.requires_grad` to ``False``: ``backward()`` then
    computes no gradient for them (and none for anything that only they depend on),
    and an optimizer skips them while their ``grad`` is ``None``, but for
    :class:`torch.optim.LBFGS`, whose history of steps taken before the freeze still moves
    them (the LBFGS example). Freezing does not clear a gradient they already hold: after
    a ``backward()``, call ``optimizer.zero_grad()`` (``set_to_none=True``, the default)
    before the next ``step()``, before or after freezing, or that ``step()`` still moves
    them (the SGD examples).

    Freezing does not touch the *buffers*: a batch norm such as
    :class:`torch.nn.BatchNorm2d`, in training mode and with its default ``momentum=0.1``,
    keeps updating its running mean and variance. Call ``.eval()`` on such
    layers too if they must not change at all.

    Args:
        module: the model.
        pattern: which parameters: ``None`` for all of them; a shell-style pattern
            matched against the full names of
            :meth:`~torch.nn.Module.named_parameters` (``"features.*"``,
            ``"*.bias"``; case-sensitive, and ``*`` also matches dots); or a
            predicate ``(name, parameter) -> bool``. A parameter reachable under several
            names (tied weights) is selected when any of its names is, a name
            :meth:`~torch.nn.Module.named_parameters` leaves out included.

    Returns:
        The names of the parameters that were trainable and are now frozen, in
        :meth:`~torch.nn.Module.named_parameters` order (a module's own parameters before
        its children's; already-frozen matches are not listed); a tied parameter is
        listed under every one of its names, those the pattern did not match included.

    Raises:
        TypeError: if ``module`` is not a :class:`torch.nn.Module`, ``pattern`` is
            neither ``None``, a ``str`` nor a callable, or a predicate returns something
            other than a ``bool`` (a ``numpy.bool_`` counts as one; a tensor does not).
        ValueError: if a pattern or predicate selects no parameter (the message
            lists some real names), or the pattern is empty.

    Examples:
        >>> from ptnotes.finetune import freeze
        >>> from ptnotes.models import SmallCNN
        >>> model = SmallCNN()
        >>> freeze(model, "features.*")
        ['features.0.weight', 'features.0.bias', 'features.3.weight', 'features.3.bias']
        >>> [name for name, p in model.named_parameters() if p.requires_grad]
        ['fc.weight', 'fc.bias']
        >>> freeze(model, "classifier.*")
        Traceback (most recent call last):
          ...
        ValueError: freeze() expects pattern to be ... name (features.0.weight, features.0.bias, ...
        >>> freeze(model, "FC.*")  # case-sensitive
        Traceback (most recent call last):
          ...
        ValueError: freeze() expects pattern to be a pattern that matches a parameter name ...
        >>> freeze(model, "features.*")  # matches, but all already frozen
        []

        A predicate must return a ``bool``; a NumPy one is taken, a tensor is not:

        >>> import numpy as np
        >>> import torch
        >>> freeze(model, lambda name, p: np.bool_(name == "fc.bias"))
        ['fc.bias']
        >>> freeze(model, lambda name, p: torch.tensor(True))
        Traceback (most recent call last):
          ...
        TypeError: freeze() expects pattern(name, parameter) to be a bool (True or False), ...

        Buffers go on changing in training mode (``eval()`` stops them); a gradient from
        before the freeze still moves a parameter:

        >>> from torch import nn
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
        >>> sgd = torch.optim.SGD(net.parameters(), lr=0.1)
        >>> weights = torch.arange(4.0).view(4, 1)  # a plain sum through batch norm has ~0 gradient
        >>> (net(torch.randn(4, 2)) * weights).sum().backward()
        >>> frozen = freeze(net)
        >>> bn = net[1]
        >>> mean, var = bn.running_mean.clone(), bn.running_var.clone()
        >>> _ = net(torch.randn(4, 2))
        >>> bn.num_batches_tracked.item()
        2
        >>> torch.equal(bn.running_mean, mean), torch.equal(bn.running_var, var)
        (False, False)
        >>> _ = bn.eval()
        >>> mean, var = bn.running_mean.clone(), bn.running_var.clone()
        >>> _ = net(torch.randn(4, 2))
        >>> bn.num_batches_tracked.item()
        2
        >>> torch.equal(bn.running_mean, mean), torch.equal(bn.running_var, var)
        (True, True)
        >>> before = net[0].weight.clone()
        >>> sgd.step()
        >>> torch.equal(net[0].weight, before)
        False

        A frozen parameter gets no gradient, and neither does what only it feeds:

        >>> line = nn.Linear(2, 1)
        >>> freeze(line, "weight")
        ['weight']
        >>> doubled = line.weight * 2  # depends on the frozen weight alone
        >>> doubled.requires_grad
        False
        >>> (line(torch.ones(1, 2)).sum() + doubled.sum()).backward()
        >>> line.weight.grad is None, line.bias.grad
        (True, tensor([1.]))

        ``zero_grad()`` called after the freeze clears that gradient too:

        >>> head = nn.Linear(2, 1)
        >>> sgd = torch.optim.SGD(head.parameters(), lr=0.1)
        >>> head(torch.ones(1, 2)).sum().backward()
        >>> freeze(head)
        ['weight', 'bias']
        >>> sgd.zero_grad()
        >>> before = head.weight.clone()
        >>> sgd.step()
        >>> head.weight.grad is None, torch.equal(head.weight, before)
        (True, True)

        LBFGS moves a frozen parameter without a gradient, from its earlier steps' history:

        >>> _ = torch.manual_seed(0)
        >>> line = nn.Linear(2, 1)
        >>> lbfgs = torch.optim.LBFGS(line.parameters(), lr=0.1)
        >>> def closure():
        ...     lbfgs.zero_grad()
        ...     loss = (line(torch.ones(4, 2)) - 1).pow(2).sum()
        ...     loss.backward()
        ...     return loss.detach()  # step() reads only its value
        >>> _ = lbfgs.step(closure)
        >>> lbfgs.zero_grad()
        >>> freeze(line, "weight")
        ['weight']
        >>> before = line.weight.clone()
        >>> _ = lbfgs.step(closure)
        >>> line.weight.grad is None, torch.equal(line.weight, before)
        (True, False)

        The names come in ``named_parameters()`` order, a module's own parameters first:

        >>> class Scaled(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.child = nn.Linear(1, 1)
        ...         self.scale = nn.Parameter(torch.ones(1))  # registered after child
        >>> freeze(Scaled())
        ['scale', 'child.weight', 'child.bias']

        A tied weight is one parameter: either name selects it, and both names come back:

        >>> lm = nn.Sequential(nn.Embedding(4, 3), nn.Linear(3, 4, bias=False))
        >>> lm[1].weight = lm[0].weight
        >>> [name for name, _ in lm.named_parameters()]
        ['0.weight']
        >>> freeze(lm, "1.*")
        ['0.weight', '1.weight']
        >>> lm[0].weight.requires_grad
        False
    """
    return _set_requires_grad(freeze, module, pattern, requires_grad=False)


def unfreeze(module: nn.Module, pattern: Selector = None) -> list[str]:
    """Let gradients flow again to the parameters of ``module`` that ``pattern`` selects.

    Sets :attr:`~torch.Tensor.requires_grad` back to ``True``, with the same selection
    rules as :func:`freeze`; unlike :func:`freeze`, it refuses a selection that holds a
    parameter that cannot require grad (see Raises), so it does not undo every
    :func:`freeze` call.

    Args:
        module: the model.
        pattern: ``None`` for all parameters, a shell-style pattern on the names, or a
            predicate ``(name, parameter) -> bool``.

    Returns:
        The names of the parameters that were frozen and are now trainable, a tied
        parameter under every one of its names.

    Raises:
        TypeError: if ``module`` is not a :class:`torch.nn.Module`, ``pattern`` is
            neither ``None``, a ``str`` nor a callable, or a predicate returns something
            other than a ``bool`` (a ``numpy.bool_`` counts as one; a tensor does not).
        ValueError: if a pattern or predicate selects no parameter, the pattern is
            empty, or it selects a parameter that cannot require grad (one neither
            floating point nor complex, such as an integer or a ``bool`` one, or, outside
            :class:`torch.inference_mode`, an inference tensor that does not require grad: one
            of a model built under it, once frozen). Nothing is unfrozen then: the selection is
            checked before the first change.

    Examples:
        >>> from ptnotes.finetune import freeze, unfreeze
        >>> from ptnotes.models import SmallCNN
        >>> model = SmallCNN()
        >>> len(freeze(model))
        6
        >>> unfreeze(model, lambda name, p: name.startswith("features.3"))
        ['features.3.weight', 'features.3.bias']

        A ``bool`` parameter cannot require grad; selecting it unfreezes nothing, though
        :func:`freeze` took the same selection:

        >>> import torch
        >>> from torch import nn
        >>> mixed = nn.ParameterDict(
        ...     {"w": nn.Parameter(torch.ones(2)),
        ...      "mask": nn.Parameter(torch.ones(2, dtype=torch.bool), requires_grad=False)}
        ... )
        >>> freeze(mixed)
        ['w']
        >>> unfreeze(mixed)
        Traceback (most recent call last):
          ...
        ValueError: unfreeze() expects pattern to be a selection ... of dtype torch.bool
        >>> mixed["w"].requires_grad
        False

        A model built under :class:`torch.inference_mode` holds inference tensors, which
        require grad as built (so :func:`unfreeze` has nothing to change) but, once frozen,
        torch lets require grad again only inside inference mode; :func:`freeze` takes them,
        and :func:`unfreeze` refuses them outside it, changing nothing:

        >>> with torch.inference_mode():
        ...     served = nn.Linear(2, 2)
        >>> unfreeze(served), [p.requires_grad for p in served.parameters()]
        ([], [True, True])
        >>> freeze(served)
        ['weight', 'bias']
        >>> unfreeze(served)
        Traceback (most recent call last):
          ...
        ValueError: unfreeze() expects pattern to be a selection ... an inference tensor ...
        >>> [p.requires_grad for p in served.parameters()]
        [False, False]
    """
    return _set_requires_grad(unfreeze, module, pattern, requires_grad=True)


def replace_head(model: nn.Module, attr: str, new_head: nn.Module) -> nn.Module:
    """Put ``new_head`` in place of the submodule ``attr`` of ``model``; return the old one.

    Assigning a module to an attribute registers it as a child (``nn.Module``'s
    ``__setattr__``), so the new head's parameters appear in
    :meth:`~torch.nn.Module.parameters` at once. A newly created head's parameters are
    trainable (a new :class:`torch.nn.Linear` is created with ``requires_grad=True``) even
    if the rest of the model is frozen, which is the usual transfer-learning set-up;
    ``requires_grad`` is not changed, so a frozen module put in stays frozen. The new head
    is *not* moved: put it on the model's device and dtype yourself. An optimizer
    built before the swap still holds the old head's parameters: build it after.

    Args:
        model: the model to change in place.
        attr: the name of the submodule, dotted for a nested one (``"classifier.6"``).
        new_head: the module to put there.

    Returns:
        The module that was there before.

    Raises:
        TypeError: if ``model`` or ``new_head`` is not a :class:`torch.nn.Module`,
            ``attr`` is not a ``str``, or ``attr`` names something that is not a module.
        ValueError: if ``model`` has no attribute ``attr``; ``attr`` names a module the
            class computes rather than a registered child (a ``property``: assigning
            would add an unused child an optimizer would still train, while the model
            keeps using the old head); or ``new_head`` contains the module it would be
            put in: the model given as its own head, or, for a dotted ``attr``, the
            parent submodule given as its own child.

    Examples:
        >>> from torch import nn
        >>> from ptnotes.finetune import replace_head
        >>> from ptnotes.models import SmallCNN
        >>> model = SmallCNN(num_classes=10)
        >>> replace_head(model, "fc", nn.Linear(16, 3))
        Linear(in_features=16, out_features=10, bias=True)
        >>> model.fc
        Linear(in_features=16, out_features=3, bias=True)
        >>> replace_head(model, "f?", nn.Linear(16, 3))  # a name, not a pattern
        Traceback (most recent call last):
          ...
        ValueError: replace_head() expects attr to be the name of a submodule of SmallCNN ...

        ``requires_grad`` stays as the new head has it:

        >>> _ = model.requires_grad_(False)
        >>> _ = replace_head(model, "fc", nn.Linear(16, 3))
        >>> [name for name, p in model.named_parameters() if p.requires_grad]
        ['fc.weight', 'fc.bias']
        >>> _ = replace_head(model, "fc", nn.Linear(16, 3).requires_grad_(False))
        >>> [name for name, p in model.named_parameters() if p.requires_grad]
        []

        An optimizer built before the swap holds the old head's parameters, not the new:

        >>> import torch
        >>> sgd = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> old = replace_head(model, "fc", nn.Linear(16, 3))
        >>> held = [p for group in sgd.param_groups for p in group["params"]]
        >>> any(p is old.weight for p in held), any(p is model.fc.weight for p in held)
        (True, False)

        The new head keeps its own dtype:

        >>> double = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1)).double()
        >>> _ = replace_head(double, "1", nn.Linear(2, 1))
        >>> double[0].weight.dtype, double[1].weight.dtype
        (torch.float64, torch.float32)

        A module used under two names is replaced under the name given only:

        >>> shared = nn.Linear(2, 2)
        >>> twice = nn.Sequential(shared, nn.ReLU(), shared)
        >>> replace_head(twice, "2", nn.Linear(2, 3)) is shared, twice[0] is shared, twice[2]
        (True, True, Linear(in_features=2, out_features=3, bias=True))

        A module cannot be put inside itself, the model's or a nested parent's:

        >>> seq = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 2), nn.ReLU()))
        >>> replace_head(seq, "1.0", seq[1])
        Traceback (most recent call last):
          ...
        ValueError: replace_head() expects new_head to be a module that does not contain ...
    """
    me = replace_head
    model = check_type(me, "model", model, nn.Module)
    new_head = check_type(me, "new_head", new_head, nn.Module)
    check_type(me, "attr", attr, str)
    parent_path, _, child = attr.rpartition(".")
    try:
        parent = model.get_submodule(parent_path)
    except AttributeError:
        parent = None
    if parent is None or not child or not hasattr(parent, child):
        children = ", ".join(n for n, _ in model.named_children()) or "(none)"
        expected = f"the name of a submodule of {type(model).__name__} (children: {children})"
        raise argument_error(me, "attr", attr, expected)
    old = getattr(parent, child)
    if not isinstance(old, nn.Module):
        expected = "the name of a submodule (only a module can be replaced)"
        got = f"{attr!r}, a {type(old).__name__}"
        raise argument_error(me, "attr", attr, expected, error=TypeError, got=got)
    if parent._modules.get(child) is not old:
        # a property (or another attribute of the class) that returns a module: assigning
        # would register an unused child while the model goes on using the old module.
        # _modules, not named_children(), which lists a module registered under two names
        # (one module used twice) under its first name only
        static = inspect.getattr_static(parent, child, None)
        expected = (
            "the name of a registered submodule, one of named_children() (not an attribute "
            "the class computes, which assigning cannot replace)"
        )
        got = f"{attr!r}, a {type(static).__name__} of {type(parent).__name__}"
        raise argument_error(me, "attr", attr, expected, got=got)
    if any(module is parent for module in new_head.modules()):
        expected = "a module that does not contain the model (a module cannot be its own child)"
        got = f"{type(new_head).__name__}, which contains {attr.rpartition('.')[0] or 'model'}"
        raise argument_error(me, "new_head", new_head, expected, got=got)
    try:
        setattr(parent, child, new_head)
        replaced = getattr(parent, child) is new_head
    except BaseException:
        # all or nothing: a __setattr__ of its own may have registered new_head, then raised
        parent._modules[child] = old
        raise
    if not replaced:  # a __setattr__ or __getattr__ of its own
        parent._modules[child] = old  # what was registered, not through that __setattr__ again
        expected = "the name of a submodule that assignment replaces"
        got = f"{attr!r}, which {type(parent).__name__} does not let be replaced"
        raise argument_error(me, "attr", attr, expected, got=got)
    return old


def _one_group_only(optimizer: type, groups: object, got: str) -> Exception:
    expected = (
        f"one group for {optimizer.__name__}, which takes a single parameter group (one "
        "pattern that matches every trainable parameter, such as '*', or default alone)"
    )
    return argument_error(param_groups, "groups", groups, expected, got=got)


def param_groups(
    model: nn.Module,
    groups: Mapping[str, Mapping[str, Any]] | Sequence[tuple[str, Mapping[str, Any]]],
    default: Mapping[str, Any] | None = None,
    *,
    optimizer: type[torch.optim.Optimizer] | None = None,
) -> list[dict[str, Any]]:
    """Build optimizer parameter groups, one per name pattern, each with its own options.

    Every trainable parameter of ``model`` ends up in exactly one group: the group of
    the pattern that matches its name, or else a last group with the ``default``
    options (omitted when empty). Frozen parameters (``requires_grad=False``) are left
    out. Options a group does not set (``lr``, ``momentum``...) take the values given
    to the optimizer's constructor.

    Options are checked here, where a mistake is made, rather than at
    ``optimizer.step()``: each key must be an option of ``optimizer`` (or, when it is
    not given, of some :mod:`torch.optim` optimizer) and each value must be of a kind
    that option takes: a number (an ``int`` or a ``float``, or a NumPy number such as a
    ``numpy.float32``) where the default is a number, a one-element tensor too for ``lr``,
    a ``bool`` (or a ``numpy.bool_``) for a flag, a tuple or a list for ``betas`` (see
    :func:`ptnotes.validation.check_optimizer_options`). A value of LBFGS's
    ``line_search_fn`` (default ``None``) is taken as given: a wrong one passes here and
    fails at ``step()`` (the last example).

    Ambiguity is an error rather than a silent choice: a parameter matched by two
    patterns, a pattern that matches nothing (often a typo), or a frozen parameter
    named by a pattern (it would never be updated) each raise :class:`ValueError`.

    Args:
        model: the model whose parameters are grouped.
        groups: ``{pattern: options}`` or a sequence of ``(pattern, options)`` pairs,
            in the order the groups should have; patterns are shell-style, as in
            :func:`freeze`; ``options`` are optimizer options such as ``{"lr": 1e-3}``.
        default: the options of the group of unmatched parameters; ``None`` means no
            options (the optimizer's own values apply).
        optimizer: the optimizer class the groups are for, such as
            ``torch.optim.SGD``, to check the options against; for
            :class:`torch.optim.LBFGS`, whose constructor refuses more than one group,
            the groups must come to one.

    Returns:
        A list of dicts ``{"params": [...], **options}`` to pass to an optimizer.

    Raises:
        TypeError: if ``model`` is not a module, ``groups`` is not a mapping or a
            sequence of pairs, or a pattern or options have the wrong type.
        ValueError: if a pattern matches nothing, a parameter is matched by two
            groups, a frozen parameter is matched, options contain ``"params"``, an
            unknown key, or a value out of range, or ``optimizer`` is
            :class:`torch.optim.LBFGS` and there would be more than one group.

    Examples:
        >>> import torch
        >>> from ptnotes.finetune import param_groups
        >>> from ptnotes.models import SmallCNN
        >>> model = SmallCNN()
        >>> groups = param_groups(
        ...     model, {"fc.*": {"lr": 1e-2}}, default={"lr": 1e-4}, optimizer=torch.optim.SGD
        ... )
        >>> [(len(g["params"]), g["lr"]) for g in groups]
        [(2, 0.01), (4, 0.0001)]
        >>> optimizer = torch.optim.SGD(groups, lr=0.1, momentum=0.9)
        >>> [(g["lr"], g["momentum"]) for g in optimizer.param_groups]  # momentum: not in a group
        [(0.01, 0.9), (0.0001, 0.9)]
        >>> param_groups(model, {"*.weight": {}, "fc.*": {}})
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects groups ... got 'fc.weight' in '*.weight' and 'fc.*'
        >>> param_groups(model, [("fc.*", {"lr": 1e-2}), ("fc.*", {"lr": 1e-3})])  # a pattern twice
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects groups ... got 'fc.weight' in 'fc.*' and 'fc.*'
        >>> param_groups(model, {"fc.*": {"lrr": 1e-2}})
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects groups['fc.*'] to be options of ... got unknown key 'lrr'

        A value need not have its default's exact type: an ``int`` ``lr`` and a list of
        ``betas`` are taken, a ``bool`` ``lr`` is not:

        >>> options = {"lr": 1, "betas": [0.9, 0.99]}
        >>> param_groups(model, {"fc.*": options}, optimizer=torch.optim.Adam)[0]["betas"]
        [0.9, 0.99]
        >>> param_groups(model, {"fc.*": {"lr": True}})
        Traceback (most recent call last):
          ...
        TypeError: param_groups() expects groups['fc.*']['lr'] to be an int or float, got bool True

        NumPy scalars are taken too, a ``numpy.float32`` for a number, a ``numpy.bool_`` for a
        flag:

        >>> import numpy as np
        >>> numpy_options = {"momentum": np.float32(0.9), "nesterov": np.bool_(True)}
        >>> sorted(param_groups(model, {"fc.*": numpy_options}, optimizer=torch.optim.SGD)[0])
        ['momentum', 'nesterov', 'params']

        A frozen parameter no pattern names is left out; one a pattern names is refused:

        >>> from ptnotes.finetune import freeze
        >>> freeze(model, "features.0.*")
        ['features.0.weight', 'features.0.bias']
        >>> [len(g["params"]) for g in param_groups(model, {"fc.*": {"lr": 1e-2}})]
        [2, 2]
        >>> param_groups(model, {"features.*": {"lr": 1e-3}})
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects groups ... (group 'features.*'), which is frozen

        A tied parameter (one tensor under two names) is selected by either name and put
        in its group once; two patterns that select it by different names are refused:

        >>> linear = torch.nn.Linear(2, 2)
        >>> pair = torch.nn.Sequential(linear, torch.nn.ReLU(), linear)
        >>> [name for name, _ in pair.named_parameters()]
        ['0.weight', '0.bias']
        >>> [len(g["params"]) for g in param_groups(pair, {"2.*": {"lr": 1e-2}})]
        [2]
        >>> param_groups(pair, {"0.*": {}, "2.*": {}})
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects ... got '0.weight' in '0.*' and '2.weight' in '2.*'

        LBFGS takes a single group, so groups for it that come to more are refused here,
        not at the optimizer's constructor; the options of one group are taken:

        >>> param_groups(model, {"fc.*": {"lr": 0.5}}, optimizer=torch.optim.LBFGS)
        Traceback (most recent call last):
          ...
        ValueError: param_groups() expects groups to be one group for LBFGS, which takes ...
        >>> torch.optim.LBFGS(param_groups(model, {"fc.*": {"lr": 0.5}}))
        Traceback (most recent call last):
          ...
        ValueError: LBFGS doesn't support per-parameter options (parameter groups)
        >>> lone = param_groups(model, {}, default={"lr": 0.5}, optimizer=torch.optim.LBFGS)
        >>> torch.optim.LBFGS(lone).param_groups[0]["lr"]
        0.5

        A wrong ``line_search_fn`` is not caught here; LBFGS refuses it at ``step()``:

        >>> line = torch.nn.Linear(2, 1)
        >>> search = {"line_search_fn": "no such search"}
        >>> lbfgs = torch.optim.LBFGS(param_groups(line, {}, search, optimizer=torch.optim.LBFGS))
        >>> def closure():
        ...     lbfgs.zero_grad()
        ...     loss = line(torch.ones(1, 2)).sum()
        ...     loss.backward()
        ...     return loss.detach()
        >>> lbfgs.step(closure)
        Traceback (most recent call last):
          ...
        RuntimeError: only 'strong_wolfe' is supported
    """
    me = param_groups
    model = check_type(me, "model", model, nn.Module)
    if isinstance(groups, Mapping):
        pairs = list(groups.items())
    elif isinstance(groups, Sequence) and not isinstance(groups, str | bytes):
        pairs = list(groups)
        for position, pair in enumerate(pairs):
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                expected = "a (pattern, options) pair"
                raise argument_error(me, f"groups[{position}]", pair, expected, error=TypeError)
    else:
        expected = "a mapping {pattern: options} or a sequence of (pattern, options) pairs"
        raise argument_error(me, "groups", groups, expected, error=TypeError)
    for pattern, _ in pairs:
        _pattern(me, "a pattern of groups", pattern)
    options_list = [
        check_optimizer_options(me, f"groups[{pattern!r}]", options, optimizer)
        for pattern, options in pairs
    ]
    default_options = (
        {} if default is None else check_optimizer_options(me, "default", default, optimizer)
    )
    # LBFGS's constructor raises on more than one group ("doesn't support per-parameter
    # options"): refuse such groups here, before any is built
    single = (
        optimizer
        if isinstance(optimizer, type) and issubclass(optimizer, torch.optim.LBFGS)
        else None
    )
    if single is not None and len(pairs) > 1:
        raise _one_group_only(single, groups, f"{len(pairs)} patterns")

    # every name counts, a tied parameter's second name too; a parameter is owned (and
    # listed) once, whichever of its names selected it
    named = list(model.named_parameters(remove_duplicate=False))
    # id(parameter) -> (name, position of its group, pattern): by position, not pattern, so
    # a pattern given twice in a sequence of pairs cannot put a parameter in two groups
    owner: dict[int, tuple[str, int, str]] = {}
    result: list[dict[str, Any]] = []
    for position, ((pattern, _), options) in enumerate(zip(pairs, options_list, strict=True)):
        chosen = [(n, p) for n, p in named if fnmatchcase(n, pattern)]
        if not chosen:
            raise _matches_nothing(me, f"the pattern {pattern!r} of groups", pattern, named)
        members: dict[int, nn.Parameter] = {}
        for parameter_name, parameter in chosen:
            if id(parameter) in owner and owner[id(parameter)][1] != position:
                first_name, _, first_pattern = owner[id(parameter)]
                expected = "patterns that select each parameter at most once"
                got = f"{first_name!r} in {first_pattern!r} and {parameter_name!r} in {pattern!r}"
                if first_name == parameter_name:
                    got = f"{parameter_name!r} in {first_pattern!r} and {pattern!r}"
                raise argument_error(me, "groups", groups, expected, got=got)
            if not parameter.requires_grad:
                expected = (
                    "patterns that select trainable parameters (unfreeze it or narrow the pattern)"
                )
                got = f"{parameter_name!r} (group {pattern!r}), which is frozen"
                raise argument_error(me, "groups", groups, expected, got=got)
            owner.setdefault(id(parameter), (parameter_name, position, pattern))
            members.setdefault(id(parameter), parameter)
        result.append({"params": list(members.values()), **options})
    unowned: dict[int, nn.Parameter] = {}
    for _, parameter in named:
        if id(parameter) not in owner and parameter.requires_grad:
            unowned.setdefault(id(parameter), parameter)
    rest = list(unowned.values())
    if single is not None and result and rest:
        pattern = pairs[0][0]
        got = f"the group of {pattern!r} and a default group of {len(rest)} unmatched parameters"
        raise _one_group_only(single, groups, got)
    if rest:
        result.append({"params": rest, **default_options})
    return result
