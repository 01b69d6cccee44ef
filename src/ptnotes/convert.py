"""Conversion of a tensor to NumPy that detaches it and moves it to the CPU first."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ptnotes.validation import argument_error, check_bool, check_type

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["to_numpy"]


def to_numpy(tensor: torch.Tensor, *, copy: bool = False) -> npt.NDArray[np.generic]:
    """Return the values of ``tensor`` as a NumPy array.

    :meth:`torch.Tensor.numpy` refuses a tensor that requires grad and a tensor that
    lives on a GPU. This helper does the two steps a reader would otherwise write by
    hand, in the order that costs least: :meth:`~torch.Tensor.detach` (free: no copy,
    it only drops the autograd history), then :meth:`~torch.Tensor.cpu` (a copy only
    when the tensor is not already on the CPU).

    Args:
        tensor: a dense (strided) tensor that holds data, on any device but ``meta``,
            of a dtype NumPy has.
        copy: if ``False`` (the default) a CPU tensor shares its memory with the
            returned array, exactly as :meth:`torch.Tensor.numpy` does, except a lazily
            conjugated or negated view (``z.conj()``), which ``.numpy()`` refuses and
            which is resolved into a new tensor first; pass ``True`` to get an
            independent array.

    Returns:
        A NumPy array with the same shape and the matching dtype.

    Raises:
        TypeError: if ``tensor`` is not a :class:`torch.Tensor`, or ``copy`` is not a
            ``bool`` (a ``numpy.bool_`` counts as one).
        ValueError: if ``tensor`` is not strided (sparse, ``mkldnn``), is nested (even
            with rows of one length) or on the meta device, or its dtype has no NumPy
            twin, such as ``bfloat16``, ``complex32``, ``uint3``, the float8 and quantized
            dtypes.

    Examples:
        >>> import torch
        >>> from ptnotes.convert import to_numpy
        >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> to_numpy(w)
        array([1., 2.], dtype=float32)

        Without ``copy=True`` the array and the tensor share memory:

        >>> a = to_numpy(w)
        >>> with torch.no_grad():
        ...     w[0] = 10.0
        >>> a
        array([10.,  2.], dtype=float32)
        >>> to_numpy(w, copy=True) is a
        False

        A conjugated view is resolved into a copy, even without ``copy=True``:

        >>> z = torch.tensor([1 + 2j])
        >>> conjugate = to_numpy(z.conj())
        >>> with torch.no_grad():
        ...     z[0] = 0
        >>> conjugate
        array([1.-2.j], dtype=complex64)

        A dtype NumPy has no twin for is refused, a sub-byte one as well as ``bfloat16``:

        >>> to_numpy(torch.empty(2, dtype=torch.uint3))
        Traceback (most recent call last):
          ...
        ValueError: to_numpy() expects tensor to be of a dtype NumPy has ... torch.uint3
        >>> to_numpy(torch.ones(2, dtype=torch.bfloat16))
        Traceback (most recent call last):
          ...
        ValueError: to_numpy() expects tensor to be of a dtype NumPy has ... torch.bfloat16
    """
    check_type(to_numpy, "tensor", tensor, torch.Tensor)
    copy_ = check_bool(to_numpy, "copy", copy)
    if tensor.is_nested:  # its layout may say strided; its rows have different lengths
        expected = "a regular tensor (a nested tensor's rows differ in length: convert each "
        expected += "of tensor.unbind())"
        raise argument_error(to_numpy, "tensor", tensor, expected, got="a nested tensor")
    if tensor.layout != torch.strided:
        expected = "a dense (strided) tensor (call .to_dense() first)"
        raise argument_error(to_numpy, "tensor", tensor, expected, got=f"layout {tensor.layout}")
    if tensor.is_meta:
        expected = "a tensor with data (a meta tensor has only a shape and a dtype)"
        raise argument_error(to_numpy, "tensor", tensor, expected, got="a meta tensor")
    try:
        # resolve_conj/resolve_neg: .numpy() refuses a lazily conjugated or negated view
        array = tensor.detach().resolve_conj().resolve_neg().cpu().numpy()
    except TypeError as error:  # torch's word for "NumPy has no such dtype"
        expected = "of a dtype NumPy has (convert first, e.g. .float())"
        raise argument_error(to_numpy, "tensor", tensor, expected) from error
    return array.copy() if copy_ else array
