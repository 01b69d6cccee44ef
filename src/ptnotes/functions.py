"""Custom autograd operations: :class:`torch.autograd.Function` with hand-written backward."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import torch

from ptnotes.validation import argument_error, check_bool, check_int, check_number, check_type

__all__ = [
    "ClampInPlace",
    "RoundSTE",
    "Sigmoid",
    "Sort",
    "clamp_",
    "round_ste",
    "sigmoid",
    "sort",
]


def _floating(caller: Callable[..., Any], x: object) -> torch.Tensor:
    """Return ``x`` if it is a floating point tensor, else raise a clear error."""
    tensor = check_type(caller, "x", x, torch.Tensor)
    if not tensor.is_floating_point():
        expected = "a floating point tensor"
        raise argument_error(caller, "x", x, expected, error=TypeError)
    return tensor


def _apply(function: type[torch.autograd.Function], *args: object) -> Any:
    """Call ``function.apply(*args)``; torch declares ``Function.apply`` without types."""
    return function.apply(*args)  # type: ignore[no-untyped-call]


class Sigmoid(torch.autograd.Function):
    """The logistic function ``1 / (1 + exp(-x))`` with a hand-written backward.

    The derivative is expressed through the *output*: ``dy/dx = y * (1 - y)``. So
    :meth:`forward` saves ``y`` (not ``x``) with ``ctx.save_for_backward`` and
    :meth:`backward` needs no ``exp``. The backward is written with ordinary
    differentiable tensor operations on the saved output, which autograd tracks back to
    ``x``, so autograd can differentiate it again: second derivatives
    (``create_graph=True``, :func:`torch.autograd.gradgradcheck`) work. The same backward
    reading a saved intermediate instead (below, a clone of the output) is not tracked
    back to ``x``, and its second derivative is wrong.

    Call it through :func:`sigmoid`, which validates its input; ``Sigmoid.apply(x)`` is
    the raw entry point.

    Examples:
        >>> import torch
        >>> from ptnotes.functions import Sigmoid
        >>> x = torch.tensor([0.0], requires_grad=True)
        >>> y = Sigmoid.apply(x)
        >>> y
        tensor([0.5000], grad_fn=<SigmoidBackward>)
        >>> y.backward()
        >>> x.grad
        tensor([0.2500])

        The same backward on a saved intermediate fails the second-order check:

        >>> class SavesIntermediate(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         y = torch.sigmoid(x)
        ...         ctx.save_for_backward(y.clone())  # an intermediate, not the output
        ...         return y
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         (y,) = ctx.saved_tensors
        ...         return grad_output * y * (1 - y)
        >>> x64 = torch.randn(4, dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradgradcheck(Sigmoid.apply, (x64,))
        True
        >>> torch.autograd.gradgradcheck(SavesIntermediate.apply, (x64,), raise_exception=False)
        False
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        """Compute ``sigmoid(x)`` and save the output for :meth:`backward`.

        Args:
            ctx: the context object autograd passes in.
            x: a floating point tensor.

        Returns:
            ``1 / (1 + exp(-x))``, elementwise.
        """
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> torch.Tensor:
        """Return ``grad_output * y * (1 - y)``, with ``y`` the saved output.

        Args:
            ctx: the context object, holding the saved output.
            grad_output: gradient of the loss with respect to the output.

        Returns:
            The gradient with respect to ``x``.
        """
        y: torch.Tensor = ctx.saved_tensors[0]
        return grad_output * y * (1 - y)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    """Apply :class:`Sigmoid`: the logistic function with a hand-written backward.

    Args:
        x: a floating point tensor of any shape.

    Returns:
        A tensor of the same shape, ``1 / (1 + exp(-x))`` elementwise, whose backward
        is :meth:`Sigmoid.backward`.

    Raises:
        TypeError: if ``x`` is not a :class:`torch.Tensor` or its dtype is not floating
            point.

    Examples:
        >>> import torch
        >>> from ptnotes.functions import sigmoid
        >>> x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        >>> sigmoid(x).sum().backward()
        >>> torch.allclose(x.grad, torch.sigmoid(x) * (1 - torch.sigmoid(x)))
        True

        The hand-written backward passes :func:`torch.autograd.gradcheck` and, because
        autograd differentiates it again through the saved output (see :class:`Sigmoid`),
        :func:`torch.autograd.gradgradcheck`:

        >>> x64 = torch.randn(4, dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradcheck(sigmoid, (x64,))
        True
        >>> torch.autograd.gradgradcheck(sigmoid, (x64,))
        True
    """
    _floating(sigmoid, x)
    return cast(torch.Tensor, _apply(Sigmoid, x))


class RoundSTE(torch.autograd.Function):
    """Rounding with a straight-through estimator (STE) for its gradient.

    :func:`torch.round` is piecewise constant: its true derivative is zero almost
    everywhere, so nothing upstream of it would learn. The straight-through estimator
    (used in quantisation-aware training and binary networks) pretends the op was the
    identity in the backward pass: :meth:`forward` rounds, :meth:`backward` passes the
    incoming gradient through unchanged. The gradient is deliberately *not* the
    derivative of the forward, so :func:`torch.autograd.gradcheck` must not be
    applied to it.

    Call it through :func:`round_ste`.

    Examples:
        >>> import torch
        >>> from ptnotes.functions import RoundSTE
        >>> x = torch.tensor([0.4, 1.6], requires_grad=True)
        >>> RoundSTE.apply(x)
        tensor([0., 2.], grad_fn=<RoundSTEBackward>)
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        """Round ``x`` to the nearest integer (halves to even, as :func:`torch.round`).

        Args:
            ctx: the context object autograd passes in (nothing is saved).
            x: a floating point tensor.

        Returns:
            The rounded values, in the dtype of ``x``.
        """
        return torch.round(x)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> torch.Tensor:
        """Pass ``grad_output`` through unchanged (the straight-through estimator).

        Args:
            ctx: the context object (unused).
            grad_output: gradient of the loss with respect to the rounded output.

        Returns:
            ``grad_output`` itself, as the gradient with respect to ``x``.
        """
        return grad_output


def round_ste(x: torch.Tensor) -> torch.Tensor:
    """Round in the forward pass, pass the gradient straight through in the backward.

    Args:
        x: a floating point tensor of any shape.

    Returns:
        ``torch.round(x)``, whose gradient with respect to ``x`` is the incoming
        gradient unchanged (see :class:`RoundSTE`).

    Raises:
        TypeError: if ``x`` is not a :class:`torch.Tensor` or its dtype is not floating
            point.

    Examples:
        >>> import torch
        >>> from ptnotes.functions import round_ste
        >>> x = torch.tensor([0.4, 1.6, 2.5], requires_grad=True)
        >>> round_ste(x)
        tensor([0., 2., 2.], grad_fn=<RoundSTEBackward>)
        >>> (round_ste(x) * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
        >>> x.grad
        tensor([1., 2., 3.])

        With plain :func:`torch.round` the gradient is zero and nothing learns:

        >>> x.grad = None
        >>> torch.round(x).sum().backward()
        >>> x.grad
        tensor([0., 0., 0.])
    """
    _floating(round_ste, x)
    return cast(torch.Tensor, _apply(RoundSTE, x))


class Sort(torch.autograd.Function):
    """Sort along a dimension, returning differentiable values and integer indices.

    The index output is an ``int64`` tensor, which cannot carry a gradient: it gets
    ``requires_grad=False`` even when the input requires grad, and would without
    ``ctx.mark_non_differentiable`` too (the example below); the mark states it
    explicitly. :meth:`backward` must still accept one gradient per output; the one for
    the indices is ignored. The gradient of the
    values is sent back to the position each value came from with ``scatter``, itself
    differentiable, so double backward works.

    Call it through :func:`sort`.

    Examples:
        >>> import torch
        >>> from ptnotes.functions import Sort
        >>> x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
        >>> values, indices = Sort.apply(x, -1, False)
        >>> values.requires_grad, indices.requires_grad
        (True, False)

        The same ``int64`` output from a ``Function`` that does not mark it:

        >>> class Unmarked(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return tuple(torch.sort(x))
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad_values, grad_indices):
        ...         return grad_values
        >>> Unmarked.apply(x)[1].requires_grad
        False

        Autograd still passes :meth:`backward` a gradient for the indices, a zero ``int64``
        tensor:

        >>> class ShowsIt(Sort):
        ...     @staticmethod
        ...     def backward(ctx, grad_values, grad_indices):
        ...         print(grad_indices)
        ...         return Sort.backward(ctx, grad_values, grad_indices)
        >>> ShowsIt.apply(x, -1, False)[0].sum().backward()
        tensor([0, 0, 0])
    """

    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, dim: int, descending: bool
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Sort ``x`` along ``dim`` and mark the indices non-differentiable.

        Args:
            ctx: the context object autograd passes in.
            x: a floating point tensor.
            dim: the dimension to sort along.
            descending: sort from largest to smallest if ``True``.

        Returns:
            ``(values, indices)`` as :func:`torch.sort` returns them.
        """
        values, indices = torch.sort(x, dim=dim, descending=descending)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.dim = dim
        return values, indices

    @staticmethod
    def backward(
        ctx: Any, grad_values: torch.Tensor, grad_indices: torch.Tensor
    ) -> tuple[torch.Tensor, None, None]:
        """Scatter ``grad_values`` back to the unsorted positions.

        Args:
            ctx: the context object, holding the saved indices and ``dim``.
            grad_values: gradient of the loss with respect to the sorted values.
            grad_indices: a zero tensor autograd supplies for the non-differentiable
                indices; ignored.

        Returns:
            The gradient with respect to ``x``, and ``None`` for ``dim`` and
            ``descending``.
        """
        (indices,) = ctx.saved_tensors
        grad_x = torch.zeros_like(grad_values).scatter(ctx.dim, indices, grad_values)
        return grad_x, None, None


def sort(
    x: torch.Tensor, dim: int = -1, descending: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sort ``x`` along ``dim`` through :class:`Sort`: values carry a gradient, indices do not.

    Args:
        x: a floating point tensor.
        dim: the dimension to sort along (negative counts from the end).
        descending: sort from largest to smallest if ``True``.

    Returns:
        ``(values, indices)``: the sorted values (differentiable) and the ``int64``
        positions they came from (``requires_grad=False``).

    Raises:
        TypeError: if ``x`` is not a floating point :class:`torch.Tensor`, ``dim`` is
            not an ``int`` (a NumPy integer is accepted, a ``bool`` is not) or
            ``descending`` is not a ``bool`` (a ``numpy.bool_`` is accepted).
        ValueError: if ``dim`` is out of range for ``x``.

    Examples:
        >>> import torch
        >>> from ptnotes.functions import sort
        >>> x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
        >>> values, indices = sort(x)
        >>> values
        tensor([1., 2., 3.], grad_fn=<SortBackward>)
        >>> indices
        tensor([1, 2, 0])
        >>> (values * torch.tensor([10.0, 20.0, 30.0])).sum().backward()
        >>> x.grad  # each weight goes back to where its value came from
        tensor([30., 10., 20.])
        >>> x64 = torch.randn(5, dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradgradcheck(lambda t: sort(t)[0], (x64,))  # double backward
        True
        >>> import numpy as np
        >>> sort(torch.tensor([1.0, 3.0]), dim=np.int64(0), descending=np.bool_(True))[0]
        tensor([3., 1.])
        >>> sort(torch.tensor([1.0, 3.0]), dim=True)
        Traceback (most recent call last):
          ...
        TypeError: sort() expects dim to be an int, got bool True
    """
    _floating(sort, x)
    ndim = max(x.dim(), 1)
    dim = check_int(sort, "dim", dim, minimum=-ndim, maximum=ndim - 1)
    descending = check_bool(sort, "descending", descending)
    values, indices = cast(tuple[torch.Tensor, torch.Tensor], _apply(Sort, x, dim, descending))
    return values, indices


class ClampInPlace(torch.autograd.Function):
    """Clamp a tensor into ``[min, max]`` in place, telling autograd with ``ctx.mark_dirty``.

    An in-place custom op must (1) call ``ctx.mark_dirty`` on the tensor it modified and
    (2) return that same tensor. Autograd then rebases its history onto this node, and
    ``apply`` returns ``x`` itself. Without the mark, ``apply`` returns another tensor and
    ``x`` keeps its old history, so a gradient taken through ``x`` silently skips the
    clamp's mask (the example below); an op that saved the old value raises on backward
    either way, because the write itself bumps the version counter. The gradient is
    ``grad_output`` where ``min <= x <= max``, the bounds included, and zero elsewhere;
    because ``x`` is overwritten, that mask is computed before the clamp and saved.

    With grad mode on, autograd refuses a leaf tensor that requires grad, but unlike
    torch's own in-place ops it does so only after :meth:`forward` has run: the data are
    already clamped when the :class:`RuntimeError` comes. Call it through :func:`clamp_`,
    which refuses a leaf before touching it.

    Examples:
        >>> import torch
        >>> from ptnotes.functions import ClampInPlace
        >>> x = torch.tensor([-2.0, 0.5, 2.0])
        >>> ClampInPlace.apply(x, -1.0, 1.0) is x
        True
        >>> x
        tensor([-1.0000,  0.5000,  1.0000])
        >>> w = torch.tensor([-2.0, 0.5, 2.0], requires_grad=True)
        >>> ClampInPlace.apply(w, -1.0, 1.0)
        Traceback (most recent call last):
          ...
        RuntimeError: a leaf Variable that requires grad has been used in an in-place operation.
        >>> w  # refused, yet clamped
        tensor([-1.0000,  0.5000,  1.0000], requires_grad=True)

        The gradient passes at the bounds themselves and stops outside them:

        >>> v = torch.tensor([-2.0, -1.0, 0.5, 1.0, 2.0], requires_grad=True)
        >>> ClampInPlace.apply(v * 1, -1.0, 1.0).sum().backward()
        >>> v.grad
        tensor([0., 1., 1., 1., 0.])

        The same forward without ``ctx.mark_dirty``:

        >>> class NotMarked(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward((x >= -1.0) & (x <= 1.0))
        ...         return x.clamp_(-1.0, 1.0)
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         (mask,) = ctx.saved_tensors
        ...         return grad_output * mask
        >>> v.grad = None
        >>> h = v * 1
        >>> square = h * h  # saves h
        >>> NotMarked.apply(h) is h, type(h.grad_fn).__name__
        (False, 'MulBackward0')
        >>> h.sum().backward()
        >>> v.grad  # the mask is skipped
        tensor([1., 1., 1., 1., 1.])
        >>> square.sum().backward()
        Traceback (most recent call last):
          ...
        RuntimeError: one of the variables needed for gradient computation has been modified ...
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, min: float, max: float) -> torch.Tensor:
        """Clamp ``x`` in place, mark it dirty and save the pass-through mask.

        Args:
            ctx: the context object autograd passes in.
            x: a floating point tensor, modified in place.
            min: the lower bound.
            max: the upper bound.

        Returns:
            ``x`` itself, now clamped.
        """
        mask = (x >= min) & (x <= max)
        x.clamp_(min, max)
        ctx.mark_dirty(x)
        ctx.save_for_backward(mask)
        return x

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        """Pass ``grad_output`` where ``x`` was inside ``[min, max]``, zero elsewhere.

        Args:
            ctx: the context object, holding the saved mask.
            grad_output: gradient of the loss with respect to the clamped tensor.

        Returns:
            The gradient with respect to ``x``, and ``None`` for ``min`` and ``max``.
        """
        (mask,) = ctx.saved_tensors
        return grad_output * mask, None, None


_DEFAULT_VIEW = torch._C._autograd.CreationMeta.DEFAULT
_NO_GRAD_VIEW = torch._C._autograd.CreationMeta.NO_GRAD_MODE


def clamp_(x: torch.Tensor, min: float, max: float) -> torch.Tensor:
    """Clamp ``x`` into ``[min, max]`` in place through :class:`ClampInPlace`.

    Args:
        x: a floating point tensor; it must not be a leaf that requires grad
            (clamp a non-leaf, for example ``w * 1``, or work under
            :class:`torch.no_grad`).
        min: the lower bound.
        max: the upper bound, at least ``min``.

    Returns:
        ``x`` itself, clamped; when ``x`` requires grad and grad mode is on, its autograd
        history is extended by the clamp.

    Raises:
        TypeError: if ``x`` is not a floating point :class:`torch.Tensor`, or a bound
            is not an ``int`` or ``float`` (a NumPy integer or floating scalar is
            accepted; a ``bool`` and a 0-d tensor are not).
        ValueError: for a bound or an ``x`` refused before anything is written, such as
            a NaN bound, ``min > max``, an ``int`` bound beyond the range of a ``float``,
            ``x`` a leaf that requires grad or a view of one (``w[:2]``) with grad mode
            on, a view made under :class:`torch.no_grad` of a tensor that requires grad
            with grad mode on, one output of a view op with several outputs (``unbind``)
            when ``x`` requires grad with grad mode on, an expanded view (``expand``), or
            a tensor made under :class:`torch.inference_mode`, outside it.

    Examples:
        >>> import torch
        >>> from ptnotes.functions import clamp_
        >>> w = torch.tensor([-2.0, 0.5, 2.0], requires_grad=True)
        >>> h = w * 1
        >>> version = h._version
        >>> clamp_(h, -1.0, 1.0) is h, h._version > version
        (True, True)
        >>> type(h.grad_fn).__name__
        'ClampInPlaceBackward'
        >>> h.sum().backward()
        >>> w.grad
        tensor([0., 1., 0.])

        The clamp bumps the version counter, so an op that saved the old value refuses
        to backward; a view of a leaf is refused before anything is written:

        >>> h = w * 1
        >>> square = h * h  # saves h
        >>> _ = clamp_(h, -1.0, 1.0)
        >>> square.sum().backward()
        Traceback (most recent call last):
          ...
        RuntimeError: one of the variables needed for gradient computation has been modified ...
        >>> clamp_(w[:2], -1.0, 1.0)
        Traceback (most recent call last):
          ...
        ValueError: clamp_() expects x to be a tensor that may be modified in place, ...
        >>> w
        tensor([-2.0000,  0.5000,  2.0000], requires_grad=True)

        A tensor that does not require grad gets no history; an expanded view, one output
        of ``unbind`` that requires grad, and an inference tensor outside inference mode are
        refused before anything is written:

        >>> clamp_(torch.tensor([2.0]), -1.0, 1.0).grad_fn is None
        True
        >>> clamp_(torch.ones(1).expand(3), -1.0, 1.0)
        Traceback (most recent call last):
          ...
        ValueError: clamp_() expects x to be a tensor whose elements have memory of their own ...
        >>> h = w * 1
        >>> clamp_(h.unbind()[0], -1.0, 1.0)
        Traceback (most recent call last):
          ...
        ValueError: clamp_() expects x to be a tensor that may be modified in place (clone ...
        >>> h.detach()
        tensor([-2.0000,  0.5000,  2.0000])
        >>> with torch.inference_mode():
        ...     made = torch.tensor([2.0])
        >>> clamp_(made, -1.0, 1.0)
        Traceback (most recent call last):
          ...
        ValueError: clamp_() expects x to be a tensor that may be modified in place here ...
        >>> made
        tensor([2.])

        Under :class:`torch.no_grad` a leaf that requires grad is clamped, and ``x``
        itself comes back:

        >>> with torch.no_grad():
        ...     clamped = clamp_(w, -1.0, 1.0)
        >>> clamped is w, w
        (True, tensor([-1.0000,  0.5000,  1.0000], requires_grad=True))

        A view taken under :class:`torch.no_grad` of a tensor that requires grad, a
        non-leaf included, is refused with grad mode on, and the message names it:

        >>> h = torch.tensor([-2.0, 0.5, 2.0], requires_grad=True) * 1
        >>> with torch.no_grad():
        ...     view = h[:2]
        >>> clamp_(view, -1.0, 1.0)
        Traceback (most recent call last):
          ...
        ValueError: clamp_() expects x to be ... got a view made under torch.no_grad() of a ...
        >>> h.detach()
        tensor([-2.0000,  0.5000,  2.0000])

        A NumPy integer or floating scalar is a bound; a ``bool``, a 0-d tensor, an
        ``int`` too large for a ``float``, a NaN and a ``max`` below ``min`` are not:

        >>> import numpy as np
        >>> clamp_(torch.tensor([2.0]), np.float32(-1.0), np.int64(1))
        tensor([1.])
        >>> for bound in (True, torch.tensor(1.0), 10**400, float("nan"), -2.0):
        ...     try:
        ...         clamp_(torch.tensor([2.0]), -1.0, bound)
        ...     except (TypeError, ValueError) as error:
        ...         print(type(error).__name__, str(error).split(", got")[0])
        TypeError clamp_() expects max to be an int or float
        TypeError clamp_() expects max to be an int or float
        ValueError clamp_() expects max to be a number within the range of a float
        ValueError clamp_() expects max to be a number, not NaN
        ValueError clamp_() expects max to be a number >= min=-1.0
    """
    _floating(clamp_, x)
    low = check_number(clamp_, "min", min, finite=False)
    high = check_number(clamp_, "max", max, finite=False)
    if low > high:
        raise argument_error(clamp_, "max", max, f"a number >= min={min}")
    # x.clamp_ refuses a bound beyond the dtype's range (1e6 for float16); rounded to the
    # dtype first, such a bound becomes inf, which is what it means there
    low, high = (torch.tensor(b, dtype=torch.float64).to(x.dtype).item() for b in (low, high))
    expected = (
        "a tensor that may be modified in place, not a leaf that requires grad or a view of "
        "one (clamp a copy, x * 1 or x.clone(), or work under torch.no_grad())"
    )
    creation = torch._C._autograd._get_creation_meta(x) if x._is_view() else None
    if x.requires_grad and torch.is_grad_enabled() and creation == _NO_GRAD_VIEW:
        # such a view has no grad_fn, so it reports is_leaf True whatever its base is; torch
        # forbids writing it with grad mode on, and it is no leaf of the user's graph
        expected = (
            "a tensor that may be modified in place with grad mode on (take the view outside "
            "torch.no_grad(), or clamp under torch.no_grad() too)"
        )
        got = "a view made under torch.no_grad() of a tensor that requires grad"
        raise argument_error(clamp_, "x", x, expected, got=got)
    if x.is_leaf and x.requires_grad and torch.is_grad_enabled():
        raise argument_error(clamp_, "x", x, expected, got="a leaf tensor that requires grad")
    if x.is_inference() and not torch.is_inference_mode_enabled():
        expected = "a tensor that may be modified in place here (clone an inference tensor first)"
        got = "a tensor made under torch.inference_mode()"
        raise argument_error(clamp_, "x", x, expected, got=got)
    if any(stride == 0 and size > 1 for stride, size in zip(x.stride(), x.shape, strict=True)):
        expected = "a tensor whose elements have memory of their own (clone an expanded view)"
        got = f"an expanded view of shape {tuple(x.shape)} and strides {x.stride()}"
        raise argument_error(clamp_, "x", x, expected, got=got)
    base = x._base
    if base is not None and base.is_leaf and base.requires_grad and torch.is_grad_enabled():
        # autograd would refuse it only after ClampInPlace.forward had written the leaf
        # (torch 2.8.0 and later; 2.4.1 and 2.5.1 accept it)
        raise argument_error(clamp_, "x", x, expected, got="a view of a leaf that requires grad")
    if x.requires_grad and torch.is_grad_enabled() and creation not in (None, _DEFAULT_VIEW):
        # such as one output of unbind or split: autograd refuses to rebase its history, but
        # only after ClampInPlace.forward has written it
        expected = "a tensor that may be modified in place (clone this view first)"
        got = f"a view that autograd forbids modifying in place ({creation})"
        raise argument_error(clamp_, "x", x, expected, got=got)
    _apply(ClampInPlace, x, low, high)
    # with grad mode off, apply returns a new tensor object on x's memory for an x that
    # requires grad; an in-place op returns x itself
    return x
