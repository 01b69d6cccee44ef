"""Record, with temporary hooks, the gradient norm reaching each watched parameter of a model."""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from types import TracebackType
from typing import Any

import torch
from torch.nn.parameter import is_lazy
from torch.utils.hooks import RemovableHandle

from ptnotes.validation import argument_error, check_bool, check_number, check_type

#: An order above which the p-norm of any tensor is its largest magnitude, to float64 rounding
#: (``n ** (1 / p)`` rounds to 1 for every ``n < 2**63``): it is taken as ``inf``. torch's
#: ``vector_norm`` of a float32 tensor returns 1.0 for an order beyond the float32 range
#: (``1e39``), whatever finite values the tensor holds (a NaN or an infinity gives itself).
_LARGEST_MAGNITUDE_ORDER = 1e18

__all__ = ["GradNormRecorder"]


class GradNormRecorder:
    """Record the gradient norm that reaches each watched parameter during ``backward()``.

    A context manager: on entry it registers a tensor hook
    (:meth:`torch.Tensor.register_hook`) on every parameter of ``model`` that requires
    grad and, with ``modules=True``, a forward hook
    (:meth:`torch.nn.Module.register_forward_hook`) on every submodule without children,
    which puts a tensor hook on the module's output; on exit it removes the hooks on the
    parameters and the modules, so the model is left as it was (a hook on an output that
    the block computed stays on that output and records nothing after the block). The
    hooks only read the gradient (they return ``None``), so the gradients are not changed.

    A tensor hook sees the gradient of **one** backward pass as it arrives, before it is
    accumulated into ``.grad``: with gradient accumulation over several ``backward()``
    calls, each call appends one entry, while ``.grad`` holds their sum.

    The parameters watched are those that require grad when the block starts. Entering
    is all-or-nothing: if registering a hook fails half-way, the hooks already registered
    are removed and the recorder can be entered again. Norms of ``float16`` and
    ``bfloat16`` gradients are computed in ``float32``: a ``float16`` norm is ``inf``
    when the norm is far enough above 65504, the largest ``float16``, to round past it
    (120000 in the ``float16`` example), even though every element of the gradient is
    finite. A norm that overflows while every element is finite is computed again from
    the gradient divided by its largest element (the ``bfloat16`` example, above the
    largest ``float32``). So is a norm whose sum of powers falls below the square root of
    the smallest normal number of the gradient's dtype, where its terms start to underflow
    (the example of a small gradient, whose sum of powers is 0 in ``float32``).

    Args:
        model: the module whose parameters are watched.
        norm_type: the order of the vector norm (as in
            :func:`torch.nn.utils.clip_grad_norm_`): a positive number or ``math.inf``. An
            order above ``1e18`` is taken as ``math.inf``: the norm is then the largest
            magnitude, as the exact p-norm is to float64 rounding (the example of a huge
            order).
        modules: also record, for each submodule without children whose output is a
            tensor, the norm of the gradient with respect to that output, in
            :attr:`output_norms`.

    Attributes:
        parameter_norms: ``{parameter name: [norm of each backward pass that reaches
            it]}``, in the order of :meth:`torch.nn.Module.named_parameters`.
        output_norms: ``{module name: [norm of each gradient that reaches its output]}``
            (empty unless ``modules=True``): one entry per backward pass for the output of one
            forward pass, so two forward passes of ``model`` before one ``backward()`` give two
            entries. A module called more than once in one forward pass of
            ``model`` (a shared layer) gets one key per call: ``"name"``, then
            ``"name#2"``, ``"name#3"``... An output that is a leaf tensor (such as the
            input that ``nn.Identity`` returns as it is) is watched like a parameter: one
            entry per backward pass that reaches it, under the key of its first call, and
            its hook is removed on exit. An output that is a view and is then modified in place
            (``nn.Flatten``'s, before ``nn.ReLU(inplace=True)``) gets no entry, though a
            gradient reaches it.

    Raises:
        TypeError: if ``model`` is not a :class:`torch.nn.Module`, ``norm_type`` is not an
            ``int`` or ``float`` (a NumPy integer or floating scalar counts as one) or is a
            ``bool``, or ``modules`` is not a ``bool`` (a NumPy ``bool_`` counts as one).
        ValueError: if ``norm_type`` is NaN, not positive or beyond the range of a ``float``
            (an ``int`` such as ``10**400``, or a NumPy ``longdouble`` where it is wider than a
            ``float``, as on x86 Linux; ``float("inf")`` is taken), or ``model`` has no
            parameter that requires grad (here, or when the block starts) or, when the block
            starts, an uninitialised (lazy) parameter that requires grad.
        RuntimeError: if the recorder is entered again while it is active.

    Examples:
        >>> import torch
        >>> from torch import nn
        >>> from ptnotes.hooks import GradNormRecorder
        >>> model = nn.Linear(2, 1)
        >>> with torch.no_grad():
        ...     _ = model.weight.fill_(1.0)
        ...     _ = model.bias.zero_()
        >>> with GradNormRecorder(model) as recorder:
        ...     model(torch.tensor([[3.0, 4.0]])).sum().backward()
        ...     model(torch.tensor([[6.0, 8.0]])).sum().backward()
        >>> recorder.parameter_norms
        {'weight': [5.0, 10.0], 'bias': [1.0, 1.0]}
        >>> recorder.last()
        {'weight': 10.0, 'bias': 1.0}
        >>> model.weight.grad  # the sum of both passes
        tensor([[ 9., 12.]])
        >>> recorder.active
        False

        With ``modules=True``, the gradient with respect to each leaf module's output; and
        the hooks are gone after a block that raised:

        >>> net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
        >>> with GradNormRecorder(net, modules=True) as recorder:
        ...     net(torch.ones(1, 2)).sum().backward()
        >>> sorted(recorder.output_norms), recorder.output_norms["1"]
        (['0', '1'], [1.0])
        >>> try:
        ...     with GradNormRecorder(net) as recorder:
        ...         raise KeyError("inside the block")
        ... except KeyError:
        ...     pass
        >>> recorder.active, dict(net[0].weight._backward_hooks or {})
        (False, {})

        An output computed in the block keeps its hook, which records nothing after it:

        >>> with GradNormRecorder(net, modules=True) as recorder:
        ...     out = net(torch.ones(1, 2))
        >>> out.sum().backward()
        >>> len(out._backward_hooks), recorder.output_norms["1"]
        (1, [])

        An output that is a leaf tensor, here the input that ``nn.Identity`` returns: one
        entry per backward pass, and no hook left on it:

        >>> ident = nn.Sequential(nn.Identity(), nn.Linear(2, 1))
        >>> x = torch.tensor([[3.0, 4.0]], requires_grad=True)
        >>> with torch.no_grad():
        ...     _ = ident[1].weight.copy_(torch.tensor([[3.0, 4.0]]))
        >>> with GradNormRecorder(ident, modules=True) as recorder:
        ...     ident(x).sum().backward()
        ...     ident(x).sum().backward()
        >>> recorder.output_norms["0"], dict(x._backward_hooks or {})
        ([5.0, 5.0], {})

        A view that the next module modifies in place records nothing, while the output it
        views, modified in place through it, still does:

        >>> flat = nn.Sequential(nn.Linear(2, 2), nn.Flatten(0), nn.ReLU(inplace=True))
        >>> with GradNormRecorder(flat, modules=True) as recorder:
        ...     flat(torch.ones(1, 2)).sum().backward()
        >>> {name: len(norms) for name, norms in recorder.output_norms.items()}
        {'0': 1, '1': 0, '2': 1}

        A ``float16`` gradient whose norm is above 65504:

        >>> half = nn.Linear(4, 1, bias=False).half()
        >>> with GradNormRecorder(half) as recorder:
        ...     half(torch.full((1, 4), 60000.0, dtype=torch.float16)).sum().backward()
        >>> recorder.parameter_norms, torch.linalg.vector_norm(half.weight.grad).item()
        ({'weight': [120000.0]}, inf)

        A sparse COO gradient, the kind ``nn.Embedding(sparse=True)`` gives, is measured as the
        dense gradient it stands for:

        >>> emb = nn.Embedding(4, 2, sparse=True)
        >>> with GradNormRecorder(emb) as recorder:
        ...     emb(torch.tensor([1, 1, 3])).sum().backward()
        >>> dense = torch.linalg.vector_norm(emb.weight.grad.to_dense()).item()
        >>> emb.weight.grad.is_sparse, round(recorder.last()["weight"], 4), round(dense, 4)
        (True, 3.1623, 3.1623)

        A ``bfloat16`` gradient whose norm is above the largest ``float32``:

        >>> bf16 = nn.Linear(4, 1, bias=False).bfloat16()
        >>> with GradNormRecorder(bf16) as recorder:
        ...     bf16(torch.full((1, 4), 3e38, dtype=torch.bfloat16)).sum().backward()
        >>> round(recorder.parameter_norms["weight"][0] / 1e38, 2), torch.finfo(torch.float32).max
        (6.01, 3.4028234663852886e+38)

        Two forward passes before one ``backward()``: two entries for a module's output, one
        for a parameter. A recorder is entered once at a time, and a lazy model and a ``bool``
        ``norm_type`` are refused:

        >>> with GradNormRecorder(net, modules=True) as recorder:
        ...     (net(torch.ones(1, 2)).sum() + net(torch.ones(1, 2)).sum()).backward()
        >>> recorder.output_norms["1"], recorder.parameter_norms["1.bias"]
        ([1.0, 1.0], [2.0])
        >>> with recorder:
        ...     with recorder:
        ...         pass
        Traceback (most recent call last):
          ...
        RuntimeError: this GradNormRecorder is already active; use a new one
        >>> with GradNormRecorder(nn.LazyLinear(1)):
        ...     pass
        Traceback (most recent call last):
          ...
        ValueError: GradNormRecorder() expects model to be a model with initialised parameters ...
        >>> GradNormRecorder(net, norm_type=True)
        Traceback (most recent call last):
          ...
        TypeError: GradNormRecorder() expects norm_type to be an int or float, got bool True

        A NumPy scalar ``norm_type`` or ``modules`` is accepted, and a lazy parameter that does
        not require grad is not watched, so it is not refused:

        >>> import numpy as np
        >>> numpy_args = {"norm_type": np.float32(1.0), "modules": np.bool_(True)}
        >>> with GradNormRecorder(net, **numpy_args) as recorder:
        ...     net(torch.ones(1, 2)).sum().backward()
        >>> recorder.last()["1.bias"], recorder.output_norms["1"]
        (1.0, [1.0])

        A ``norm_type`` beyond the range of a ``float`` is refused (here an ``int``; a NumPy
        ``longdouble`` of ``1e400`` is too, where it is wider than a ``float``); infinity is
        taken:

        >>> for norm_type in (10**400, float("inf")):
        ...     try:
        ...         _ = GradNormRecorder(net, norm_type=norm_type)
        ...         print("taken")
        ...     except ValueError as error:
        ...         print(str(error)[:73])
        GradNormRecorder() expects norm_type to be a number within the range of a
        taken

        A huge order is taken as infinity: the norm of ``[3, 4]`` is 4.0 for
        ``norm_type=1e308``, where torch's own ``vector_norm`` of the float32 gradient
        gives 1.0:

        >>> layer = nn.Linear(2, 1, bias=False)
        >>> with GradNormRecorder(layer, norm_type=1e308) as recorder:
        ...     layer(torch.tensor([[3.0, 4.0]])).sum().backward()
        >>> recorder.last()["weight"], torch.linalg.vector_norm(layer.weight.grad, 1e308).item()
        (4.0, 1.0)

        A small gradient: the powers of ``[0.003, 0.004]`` underflow in ``float32`` with
        ``norm_type=100``, and those of ``[0.3, 0.4]`` with ``norm_type=1e18``, the largest
        order not taken as infinity; torch's ``vector_norm`` gives 0.0, the recorder the
        norm, here the largest magnitude to rounding:

        >>> for norm_type, value in ((100, 0.001), (1e18, 0.1)):
        ...     layer.weight.grad = None
        ...     with GradNormRecorder(layer, norm_type=norm_type) as recorder:
        ...         layer(torch.tensor([[3 * value, 4 * value]])).sum().backward()
        ...     torch_norm = torch.linalg.vector_norm(layer.weight.grad, norm_type).item()
        ...     print(round(recorder.last()["weight"], 6), torch_norm)
        0.004 0.0
        0.4 0.0
        >>> lazy = nn.Sequential(nn.Linear(2, 2), nn.LazyLinear(1))
        >>> lazy[1].weight.requires_grad = lazy[1].bias.requires_grad = False
        >>> with GradNormRecorder(lazy) as recorder:
        ...     lazy(torch.ones(1, 2)).sum().backward()
        >>> list(recorder.parameter_norms)
        ['0.weight', '0.bias']

        A parameter frozen when the block starts is not watched, even if it is unfrozen
        inside the block:

        >>> _ = net[0].requires_grad_(False)
        >>> with GradNormRecorder(net) as recorder:
        ...     _ = net[0].requires_grad_(True)
        ...     net(torch.ones(1, 2)).sum().backward()
        >>> list(recorder.parameter_norms), net[0].weight.grad is not None
        (['1.weight', '1.bias'], True)
    """

    def __init__(
        self, model: torch.nn.Module, *, norm_type: float = 2.0, modules: bool = False
    ) -> None:
        cls = GradNormRecorder
        self._model = check_type(cls, "model", model, torch.nn.Module, expected="a torch.nn.Module")
        self._norm_type = check_number(cls, "norm_type", norm_type, positive=True, finite=False)
        if self._norm_type > _LARGEST_MAGNITUDE_ORDER:
            self._norm_type = math.inf
        self._modules = check_bool(cls, "modules", modules)
        self._parameters = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        if not self._parameters:
            raise ValueError(
                f"{cls.__qualname__}() expects model to have a parameter that requires grad, "
                f"got {type(model).__name__} with none"
            )
        self._handles: list[RemovableHandle] = []
        # leaf outputs (an input that a module returns as is): their hooks outlive the graph
        self._leaf_outputs: dict[int, tuple[weakref.ref[torch.Tensor], RemovableHandle]] = {}
        self._calls: dict[str, int] = {}
        self._block = 0  # which block is running: an output's hook records only in its own
        self._backward_seen = False
        self.parameter_norms: dict[str, list[float]] = {}
        self.output_norms: dict[str, list[float]] = {}

    def _norm(self, gradient: torch.Tensor) -> float:
        gradient = gradient.detach()
        if gradient.is_sparse:  # COO, as nn.Embedding(sparse=True) gives: no norm kernel
            # its stored values, duplicates summed: the absent entries are zeros
            gradient = gradient.coalesce().values()
        if gradient.numel() == 0:  # the inf norm of an empty tensor is refused
            return 0.0
        if gradient.dtype in (torch.float16, torch.bfloat16):  # their max is 65504 for float16
            gradient = gradient.float()
        elif gradient.dtype == torch.complex32:
            gradient = gradient.to(torch.complex64)
        norm = float(torch.linalg.vector_norm(gradient, ord=self._norm_type))
        # the sum of powers overflowed (float32 and bfloat16 top out near 3.4e38, so elements
        # of 1e20 do) or fell below the square root of the smallest normal number, where its
        # terms start to underflow (0.004 ** 100 does in float32): scale by the largest
        # element, which the norm divides out, so that the largest term is 1
        tiny = torch.finfo(gradient.dtype).tiny
        p = self._norm_type
        overflowed = math.isinf(norm)
        underflowed = not math.isinf(p) and (norm == 0.0 or p * math.log(norm) < math.log(tiny) / 2)
        if (overflowed or underflowed) and bool(torch.isfinite(gradient).all()):
            largest = float(gradient.abs().amax())
            if largest == 0.0:  # a zero gradient: its norm is 0
                return 0.0
            scaled = torch.linalg.vector_norm(gradient / largest, ord=self._norm_type)
            norm = largest * float(scaled)
        return norm

    def _parameter_hook(self, name: str) -> Callable[[torch.Tensor], None]:
        def hook(gradient: torch.Tensor) -> None:
            self._backward_seen = True
            self.parameter_norms[name].append(self._norm(gradient))

        return hook

    def _new_forward(self, module: torch.nn.Module, args: Any) -> None:
        if module is self._model:  # not a copy made inside the block, which has the hook too
            self._calls.clear()

    def _module_hook(
        self, name: str, watched: torch.nn.Module
    ) -> Callable[[torch.nn.Module, Any, Any], None]:
        def record(label: str) -> Callable[[torch.Tensor], None]:
            block = self._block

            def hook(gradient: torch.Tensor) -> None:
                self._backward_seen = True
                # not for a graph built inside the block and run backward after it
                if self.active and block == self._block:
                    self.output_norms[label].append(self._norm(gradient))

            return hook

        def hook(module: torch.nn.Module, args: Any, output: Any) -> None:
            if module is not watched:  # a copy (copy.deepcopy) made inside the block
                return
            if self._backward_seen:  # a new pass, though not through model (a submodule's)
                self._backward_seen = False
                self._calls.clear()
            count = self._calls.get(name, 0) + 1
            self._calls[name] = count
            label = name if count == 1 else f"{name}#{count}"
            if isinstance(output, torch.Tensor) and output.requires_grad:
                if output.grad_fn is None:  # a leaf: hooked once per block, like a parameter
                    key = id(output)
                    seen = self._leaf_outputs.get(key)
                    if seen is not None and seen[0]() is output:
                        return
                    handle = output.register_hook(record(label))  # type: ignore[no-untyped-call]
                    # a weak reference, so that the recorder keeps no input alive
                    self._leaf_outputs[key] = (weakref.ref(output, self._forget(key)), handle)
                    self.output_norms.setdefault(label, [])
                    return
                self.output_norms.setdefault(label, [])
                output.register_hook(record(label))  # type: ignore[no-untyped-call]

        return hook

    def _forget(self, key: int) -> Callable[[Any], None]:
        def forget(reference: Any) -> None:
            self._leaf_outputs.pop(key, None)

        return forget

    @property
    def active(self) -> bool:
        """Whether the hooks are registered (inside the ``with`` block)."""
        return bool(self._handles)

    def __enter__(self) -> GradNormRecorder:
        cls = GradNormRecorder
        if self._handles:
            raise RuntimeError("this GradNormRecorder is already active; use a new one")
        # the parameters that require grad now: one may have been frozen since __init__
        parameters = [(n, p) for n, p in self._model.named_parameters() if p.requires_grad]
        if not parameters:
            raise ValueError(
                f"{cls.__qualname__}() expects model to have a parameter that requires grad "
                f"when the block starts, got {type(self._model).__name__} with none"
            )
        lazy = [name for name, parameter in parameters if is_lazy(parameter)]
        if lazy:  # torch refuses a hook on them, with an error that names no argument
            expected = (
                "a model with initialised parameters (run one forward pass with a sample "
                "batch before the block)"
            )
            shown = ", ".join(lazy[:3]) + (f", ... ({len(lazy) - 3} more)" if len(lazy) > 3 else "")
            got = f"{type(self._model).__name__} with uninitialised (lazy) {shown}"
            raise argument_error(cls, "model", self._model, expected, got=got)
        handles: list[RemovableHandle] = []
        leaves: list[str] = []
        try:  # all or nothing: a failure half-way removes the hooks already registered
            for name, parameter in parameters:
                handles.append(parameter.register_hook(self._parameter_hook(name)))  # type: ignore[no-untyped-call]
            if self._modules:
                handles.append(self._model.register_forward_pre_hook(self._new_forward))
                for name, module in self._model.named_modules():
                    if next(module.children(), None) is None:
                        leaves.append(name)
                        hook = self._module_hook(name, module)
                        handles.append(module.register_forward_hook(hook))
        except BaseException:
            for handle in handles:
                handle.remove()
            raise
        self._parameters = parameters
        self._calls.clear()
        self._leaf_outputs.clear()
        self._block += 1
        self._backward_seen = False
        self.parameter_norms = {name: [] for name, _ in parameters}
        self.output_norms = {name: [] for name in leaves}
        self._handles = handles
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        for _, handle in self._leaf_outputs.values():
            handle.remove()
        self._leaf_outputs.clear()

    def last(self) -> dict[str, float]:
        """The norm of the latest backward pass for each parameter that received one.

        Examples:
            >>> import torch
            >>> from torch import nn
            >>> from ptnotes.hooks import GradNormRecorder
            >>> model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
            >>> model[0].requires_grad_(False)  # frozen: not watched
            Linear(in_features=2, out_features=2, bias=True)
            >>> with GradNormRecorder(model) as recorder:
            ...     model(torch.ones(1, 2)).sum().backward()
            >>> sorted(recorder.last())
            ['1.bias', '1.weight']
        """
        return {name: norms[-1] for name, norms in self.parameter_norms.items() if norms}
