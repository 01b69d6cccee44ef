"""Weight initialisation for ``model.apply``: type dispatch versus class-name matching."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn.parameter import is_lazy
from torch.nn.utils import parametrize

from ptnotes.validation import argument_error, check_type

__all__ = ["classname_init", "init_weights", "string_dispatch_mismatches"]

_MISSING = object()

_CONV_TYPES: tuple[type[nn.Module], ...] = (
    nn.Conv1d,
    nn.Conv2d,
    nn.Conv3d,
    nn.ConvTranspose1d,
    nn.ConvTranspose2d,
    nn.ConvTranspose3d,
)


#: Every batch-norm class of torch (the lazy ones become ``BatchNorm*d`` once initialised).
_BATCH_NORM_TYPES: tuple[type[nn.Module], ...] = (
    nn.BatchNorm1d,
    nn.BatchNorm2d,
    nn.BatchNorm3d,
    nn.SyncBatchNorm,
    nn.LazyBatchNorm1d,
    nn.LazyBatchNorm2d,
    nn.LazyBatchNorm3d,
)


def _isinstance_kind(module: nn.Module) -> str | None:
    """The rule :func:`init_weights` applies to ``module``, by type; ``None`` if none."""
    if isinstance(module, _CONV_TYPES):
        return "Conv"
    if isinstance(module, nn.Linear):
        return "Linear"
    if isinstance(module, _BATCH_NORM_TYPES):
        return "BatchNorm"
    if isinstance(module, nn.Embedding):
        return "Embedding"
    return None


def _classname_kind(module: nn.Module) -> str | None:
    """The rule the notes' string matching applies to ``module``; ``None`` if none."""
    classname = type(module).__name__
    if classname.find("Conv") != -1:
        return "Conv"
    if classname.find("BatchNorm") != -1:
        return "BatchNorm"
    return None


def _tensor(module: nn.Module, name: str) -> torch.Tensor | None:
    """``module.<name>`` if it is a tensor (a parameter, say), else ``None``."""
    value = getattr(module, name, None)
    return value if isinstance(value, torch.Tensor) else None


def init_weights(module: nn.Module) -> None:
    """Initialise one module by its type; pass it to :meth:`torch.nn.Module.apply`.

    ``model.apply(init_weights)`` calls this on every submodule (children first, the
    root last). It dispatches with :func:`isinstance`, so subclasses are covered and
    names play no part:

    * ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``: weight ``kaiming_normal_``
      with ``mode="fan_out"`` and ``nonlinearity="relu"`` (as torchvision's ResNet),
      bias zeros.
    * :class:`torch.nn.Linear`: weight ``xavier_uniform_`` (gain 1), bias zeros.
    * ``BatchNorm1d/2d/3d`` and :class:`torch.nn.SyncBatchNorm`: weight ones, bias
      zeros.
    * :class:`torch.nn.Embedding`: weight ``normal_(0, 0.02)`` (as GPT-2 and BERT,
      instead of torch's ``normal_(0, 1)``), then the ``padding_idx`` row zeroed.
    * Anything else: left untouched.

    The values are written with :mod:`torch.nn.init` under :class:`torch.no_grad`
    (never through ``.data``), in place, on the device the parameters already live
    on. Batch-norm running statistics are buffers and are not touched; a missing
    weight or bias (``bias=False``, ``affine=False``) is skipped.

    A parametrized weight (:func:`torch.nn.utils.parametrizations.weight_norm`,
    ``orthogonal``...) is computed from other tensors at every access: writing into it
    would change nothing. The new value is assigned instead, which the
    parametrization turns back into its own tensors (``right_inverse``); if the
    effective weight does not then equal the new value to within a relative tolerance of
    1e-4, or of four machine epsilons of the weight's dtype where that is larger (an
    orthogonal or spectral-normalised weight cannot take any value; a bfloat16 weight norm
    differs by its rounding only, and is accepted), :class:`ValueError` is raised and the
    module is put back as it was (its whole state dict: nothing half-initialised). The
    tolerance is wider than float32's precision: a float32 weight that its parametrization
    moves by 1e-5 of its value is accepted.

    Args:
        module: the module to initialise (its children are not visited: that is the
            job of :meth:`~torch.nn.Module.apply`).

    Raises:
        TypeError: if ``module`` is not an :class:`torch.nn.Module`.
        ValueError: if a matched module still has uninitialised (lazy) parameters,
            for example :class:`torch.nn.LazyConv2d` before its first forward (its
            own initialisation would overwrite ours at that first forward); or its
            weight is computed from other tensors and cannot take the new value. The
            hook-based :func:`torch.nn.utils.weight_norm` is refused while its
            ``weight`` carries a graph: after a forward under :class:`torch.no_grad`
            that ``weight`` is a plain tensor, is overwritten without an error, and the
            next forward recomputes it from ``weight_g`` and ``weight_v``, which keep
            their values. After a forward under :class:`torch.inference_mode` that
            ``weight`` is an inference tensor: outside inference mode the write raises
            torch's :class:`RuntimeError` instead, and the module is put back as it was.

    Examples:
        >>> import torch
        >>> from torch import nn
        >>> from ptnotes.init import init_weights
        >>> model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.Flatten(),
        ...                       nn.Linear(4, 2))
        >>> model.apply(init_weights) is model
        True
        >>> visited = []
        >>> _ = model.apply(lambda m: visited.append(type(m).__name__))
        >>> visited
        ['Conv2d', 'BatchNorm2d', 'Flatten', 'Linear', 'Sequential']
        >>> model[0].bias.abs().sum().item(), model[3].bias.abs().sum().item()
        (0.0, 0.0)
        >>> bool((model[1].weight == 1).all())
        True
        >>> embedding = nn.Embedding(10, 4, padding_idx=0)
        >>> init_weights(embedding)
        >>> embedding.weight[0].abs().sum().item()
        0.0
        >>> init_weights(nn.LazyLinear(3))
        Traceback (most recent call last):
          ...
        ValueError: init_weights() expects module to be a module with initialised ...

        Running statistics stay; an orthogonal weight cannot take a Xavier draw, and the
        refused module is left as it was:

        >>> norm = nn.BatchNorm1d(2)
        >>> _ = norm(torch.tensor([[0.0, 2.0], [2.0, 4.0]]))
        >>> init_weights(norm)
        >>> norm.running_mean
        tensor([0.1000, 0.3000])
        >>> from torch.nn.utils.parametrizations import orthogonal
        >>> rotation = orthogonal(nn.Linear(3, 3))
        >>> before = rotation.weight.clone()
        >>> init_weights(rotation)
        Traceback (most recent call last):
          ...
        ValueError: init_weights() expects module to be a module whose weight can take ...
        >>> torch.allclose(rotation.weight, before)
        True

        A bfloat16 weight norm takes the draw to its own precision:

        >>> from torch.nn.utils.parametrizations import weight_norm
        >>> half_precision = weight_norm(nn.Conv2d(3, 8, 3)).to(torch.bfloat16)
        >>> init_weights(half_precision)
        >>> half_precision.weight.dtype, half_precision.bias.abs().sum().item()
        (torch.bfloat16, 0.0)

        A float32 weight moved by 1e-5 of its value passes, one moved by 1e-3 is refused:

        >>> from torch.nn.utils import parametrize
        >>> class Nudge(nn.Module):
        ...     def __init__(self, factor):
        ...         super().__init__()
        ...         self.factor = factor
        ...     def forward(self, weight):
        ...         return weight * self.factor
        ...     def right_inverse(self, weight):
        ...         return weight
        >>> nudged = nn.Linear(3, 3)
        >>> _ = parametrize.register_parametrization(nudged, "weight", Nudge(1 + 1e-5))
        >>> init_weights(nudged)
        >>> drawn = nudged.parametrizations.weight.original
        >>> [torch.allclose(nudged.weight, drawn, rtol=rtol, atol=0) for rtol in (1e-4, 1e-6)]
        [True, False]
        >>> pushed = nn.Linear(3, 3)
        >>> _ = parametrize.register_parametrization(pushed, "weight", Nudge(1 + 1e-3))
        >>> init_weights(pushed)
        Traceback (most recent call last):
          ...
        ValueError: init_weights() expects module to be a module whose weight can take ...

        A hook-based weight norm after a forward under inference mode:

        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # torch.nn.utils.weight_norm is deprecated
        ...     hooked = torch.nn.utils.weight_norm(nn.Linear(3, 3))
        >>> with torch.inference_mode():
        ...     _ = hooked(torch.ones(1, 3))
        >>> bias_before = hooked.bias.clone()
        >>> init_weights(hooked)
        Traceback (most recent call last):
          ...
        RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed...
        >>> torch.equal(hooked.bias, bias_before)
        True
    """
    check_type(init_weights, "module", module, nn.Module)
    kind = _isinstance_kind(module)
    if kind is None:
        return
    # all or nothing: reading a parametrized weight may already change buffers (spectral
    # norm's power iteration), and a refused bias must leave the weight as it was too
    saved = _Saved(module)
    try:
        weight, bias = _tensor(module, "weight"), _tensor(module, "bias")
        if any(t is not None and is_lazy(t) for t in (weight, bias)):
            expected = (
                "a module with initialised parameters (run one forward pass with a sample "
                "batch first)"
            )
            got = f"{type(module).__name__} with uninitialised (lazy) parameters"
            raise argument_error(init_weights, "module", module, expected, got=got)
        _initialise(module, kind, weight, bias)
    except BaseException:
        saved.restore()
        raise


class _Saved:
    """Every parameter and buffer of a module tree: the objects themselves and their values."""

    def __init__(self, module: nn.Module) -> None:
        self.entries: list[tuple[dict[str, Any], str, torch.Tensor, torch.Tensor]] = []
        for owner in module.modules():
            for table in (owner._parameters, owner._buffers):
                for name, tensor in table.items():
                    if tensor is not None and not is_lazy(tensor):
                        self.entries.append((table, name, tensor, tensor.detach().clone()))
            # a tensor kept as a plain attribute, such as the weight that the hook-based
            # torch.nn.utils.weight_norm computes: init_weights may write into it too
            attributes = vars(owner)
            for name in ("weight", "bias"):
                tensor = attributes.get(name)
                if isinstance(tensor, torch.Tensor) and not is_lazy(tensor):
                    self.entries.append((attributes, name, tensor, tensor.detach().clone()))

    def restore(self) -> None:
        with torch.no_grad():
            for table, name, tensor, value in self.entries:
                if table.get(name) is not tensor:
                    table[name] = tensor  # the object itself, if something replaced it
                if not _equal(tensor, value):
                    # an unchanged tensor is not written: a write would bump its version
                    # counter and break a backward pending from an earlier forward
                    tensor.copy_(value)


def _equal(tensor: torch.Tensor, value: torch.Tensor) -> bool:
    """Whether ``tensor`` still holds ``value`` (False where that cannot be told, on meta)."""
    try:
        return tensor.shape == value.shape and bool(torch.equal(tensor, value))
    except (NotImplementedError, RuntimeError):
        return False


def _initialise(
    module: nn.Module, kind: str, weight: torch.Tensor | None, bias: torch.Tensor | None
) -> None:
    with torch.no_grad():
        if weight is not None:
            value = torch.empty_like(weight)
            if value.numel() == 0:  # nothing to draw (xavier divides by fan_in + fan_out)
                pass
            elif kind == "Conv":
                nn.init.kaiming_normal_(value, mode="fan_out", nonlinearity="relu")
            elif kind == "Linear":
                nn.init.xavier_uniform_(value)
            elif kind == "BatchNorm":
                nn.init.ones_(value)
            else:  # Embedding
                nn.init.normal_(value, mean=0.0, std=0.02)
                padding_idx = getattr(module, "padding_idx", None)
                if padding_idx is not None:
                    value[padding_idx].zero_()
            _assign(module, "weight", weight, value)
        if bias is not None:
            _assign(module, "bias", bias, torch.zeros_like(bias))


def _assign(module: nn.Module, name: str, current: torch.Tensor, value: torch.Tensor) -> None:
    """Make ``module.<name>`` equal ``value``: in place, or through its parametrization."""
    if parametrize.is_parametrized(module, name):
        parametrizations: Any = getattr(module, "parametrizations")  # noqa: B009
        try:
            setattr(module, name, value)
            # a half or bfloat16 weight norm recomputes the weight to its own precision
            eps = torch.finfo(value.dtype).eps if value.is_floating_point() else 0.0
            tolerance = max(1e-4, 4 * eps)
            done = torch.allclose(getattr(module, name), value, rtol=tolerance, atol=1e-6)
        except (NotImplementedError, RuntimeError, ValueError):
            done = False
        if not done:
            expected = (
                f"a module whose {name} can take the values init_weights draws; its "
                f"parametrization ({type(parametrizations[name][0]).__name__}) "
                "cannot: initialise the original tensor before parametrizing"
            )
            got = f"{type(module).__name__} with a parametrized {name}"
            raise argument_error(init_weights, "module", module, expected, got=got)
    elif isinstance(current, nn.Parameter) or current.is_leaf:
        current.copy_(value)
    else:
        expected = f"a module whose {name} is a parameter or a parametrization"
        got = (
            f"{type(module).__name__} whose {name} is computed by a hook "
            "(torch.nn.utils.weight_norm? use torch.nn.utils.parametrizations.weight_norm)"
        )
        raise argument_error(init_weights, "module", module, expected, got=got)


def classname_init(module: nn.Module) -> None:
    """Initialise one module by its class *name*, as the notes do; for comparison only.

    The notes' recipe, passed to :meth:`torch.nn.Module.apply`::

        classname = m.__class__.__name__
        if classname.find('Conv') != -1:
            m.weight.data.normal_(0.0, 0.02)
        elif classname.find('BatchNorm') != -1:
            m.weight.data.normal_(1.0, 0.02)
            m.bias.data.fill_(0)

    This function applies the same matching (case-sensitive substring of
    ``type(module).__name__``) and the same values, written safely: through
    :mod:`torch.nn.init` under :class:`torch.no_grad` instead of ``.data``. In the cases
    below, where the recipe would crash or silently do nothing, it skips the module instead:

    * the name matches but there is no ``weight`` (a container such as a user class
      ``ConvBlock``, or :class:`ptnotes.layers.ConvBNReLU`): the recipe raises
      :class:`AttributeError`;
    * the weight is ``None`` (``BatchNorm2d(affine=False)``): the recipe raises
      :class:`AttributeError`;
    * the weight is uninitialised (``LazyConv2d`` before its first forward): the
      recipe's ``.data.normal_`` runs without error and without effect, and the
      first forward then draws the default values;
    * the weight is parametrized (:func:`~torch.nn.utils.parametrizations.weight_norm`,
      ``spectral_norm``...): the recipe writes into a tensor computed for that one
      access, which changes nothing; the weight is not even read here (a spectral norm's
      read in training mode updates its ``_u`` and ``_v`` buffers).

    A batch norm whose bias alone is ``None`` is not skipped: the recipe draws its weight
    and then raises :class:`AttributeError` on the bias; this function draws the weight
    and leaves the bias ``None``.

    The conv bias keeps its default, as in the recipe. Prefer :func:`init_weights`;
    :func:`string_dispatch_mismatches` lists the modules the two approaches sort into
    different kinds, and those whose name matches but whose weight is missing, ``None`` or
    uninitialised.

    Args:
        module: the module to initialise (children are not visited).

    Raises:
        TypeError: if ``module`` is not an :class:`torch.nn.Module`.

    Examples:
        >>> import torch
        >>> from torch import nn
        >>> from ptnotes.init import classname_init
        >>> _ = torch.manual_seed(0)
        >>> model = nn.Sequential(nn.Conv2d(8, 8, 3), nn.BatchNorm2d(8), nn.Linear(8, 8))
        >>> before = model[2].weight.clone()
        >>> _ = model.apply(classname_init)
        >>> round(model[0].weight.std().item(), 2)
        0.02
        >>> torch.equal(model[2].weight, before)  # 'Linear' matches neither string
        True

        A spectral-normalised conv is skipped, its buffers included:

        >>> from torch.nn.utils.parametrizations import spectral_norm
        >>> conv = spectral_norm(nn.Conv2d(2, 2, 3))
        >>> state = {k: v.clone() for k, v in conv.state_dict().items()}
        >>> classname_init(conv)
        >>> all(torch.equal(v, state[k]) for k, v in conv.state_dict().items())
        True

        A batch norm whose bias alone is ``None`` gets its weight drawn:

        >>> no_bias = nn.BatchNorm2d(4)
        >>> no_bias.bias = None
        >>> classname_init(no_bias)
        >>> bool((no_bias.weight != 1).all()), no_bias.bias
        (True, None)
    """
    check_type(classname_init, "module", module, nn.Module)
    kind = _classname_kind(module)
    if kind is None or parametrize.is_parametrized(module, "weight"):
        return  # a parametrized weight: reading it may update buffers (spectral norm)
    weight = _tensor(module, "weight")
    if kind is None or weight is None or is_lazy(weight):
        return
    with torch.no_grad():
        if kind == "Conv":
            nn.init.normal_(weight, mean=0.0, std=0.02)
        else:  # BatchNorm
            nn.init.normal_(weight, mean=1.0, std=0.02)
            bias = _tensor(module, "bias")
            if bias is not None and not is_lazy(bias):
                nn.init.zeros_(bias)


def string_dispatch_mismatches(model: nn.Module) -> list[tuple[str, str, str]]:
    """List the submodules where class-name matching and type dispatch disagree.

    For every module of ``model`` (the root included, named ``""``), the class-name
    rule of the notes (see :func:`classname_init`) is compared with the
    :func:`isinstance` rule of :func:`init_weights`. A module is reported when:

    * the name matches but there is nothing the recipe could initialise: no
      ``weight`` attribute (a container named ``ConvBlock``), a ``weight`` of
      ``None`` (``affine=False``), or an uninitialised lazy weight;
    * otherwise, when the two rules put the module in different kinds (``Conv``,
      ``BatchNorm``, ``Linear``, ``Embedding`` or none; within one kind the values
      drawn still differ, and that is not reported): ``nn.Linear`` and
      ``nn.Embedding`` (no ``'Conv'`` in the name), a ``ConvTranspose2d`` subclass
      called ``Deconvolution`` (the match is case-sensitive: ``"conv"`` is not
      ``"Conv"``), or a ``Linear`` subclass whose name happens to contain ``"Conv"``.

    Args:
        model: the model to inspect; nothing in it is modified (a parametrized weight
            is not computed: spectral norm's power iteration, which a read runs in
            training mode, would update its ``_u`` and ``_v`` buffers).

    Returns:
        A list of ``(qualified_name, class_name, reason)`` in
        :meth:`~torch.nn.Module.named_modules` order; empty if the rules agree
        everywhere.

    Raises:
        TypeError: if ``model`` is not an :class:`torch.nn.Module`.

    Examples:
        >>> from torch import nn
        >>> from ptnotes.init import string_dispatch_mismatches
        >>> class ConvBlock(nn.Sequential):
        ...     pass
        >>> model = nn.Sequential(ConvBlock(nn.Conv2d(1, 4, 3), nn.ReLU()), nn.Linear(4, 2))
        >>> for name, classname, reason in string_dispatch_mismatches(model):
        ...     print(f"{name}: {classname}: {reason}")
        0: ConvBlock: name matches 'Conv' but there is no weight; the recipe raises AttributeError
        1: Linear: class-name rule: none; isinstance rule: Linear
        >>> string_dispatch_mismatches(nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4)))
        []

        A module both rules call ``BatchNorm`` is still reported when its weight is ``None``:

        >>> string_dispatch_mismatches(nn.BatchNorm2d(4, affine=False))[0][2]
        "name matches 'BatchNorm' but weight is None; the recipe raises AttributeError"
    """
    check_type(string_dispatch_mismatches, "model", model, nn.Module)
    mismatches: list[tuple[str, str, str]] = []
    for name, module in model.named_modules():
        by_name, by_type = _classname_kind(module), _isinstance_kind(module)
        classname = type(module).__name__
        if by_name is not None:
            # a parametrized weight is there, initialised (its originals are tensors); reading
            # module.weight would run the parametrization (spectral norm's power iteration
            # updates its buffers), so it is not read
            parametrized = parametrize.is_parametrized(module, "weight")
            weight = torch.empty(0) if parametrized else getattr(module, "weight", _MISSING)
            if weight is _MISSING:
                reason = (
                    f"name matches {by_name!r} but there is no weight; "
                    "the recipe raises AttributeError"
                )
                mismatches.append((name, classname, reason))
                continue
            if weight is None:
                reason = (
                    f"name matches {by_name!r} but weight is None; the recipe raises AttributeError"
                )
                mismatches.append((name, classname, reason))
                continue
            if isinstance(weight, torch.Tensor) and is_lazy(weight):
                # init_weights refuses only a module its isinstance rule matches
                verdict = "raises ValueError" if by_type is not None else "leaves it untouched"
                reason = (
                    f"name matches {by_name!r} but weight is uninitialised (lazy); the recipe "
                    f"has no effect and init_weights {verdict}"
                )
                mismatches.append((name, classname, reason))
                continue
        if by_name != by_type:
            reason = f"class-name rule: {by_name or 'none'}; isinstance rule: {by_type or 'none'}"
            mismatches.append((name, classname, reason))
    return mismatches
