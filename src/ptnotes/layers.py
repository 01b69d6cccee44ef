"""Custom layers written the way ``torch/nn/modules/linear.py`` writes its own."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ptnotes.validation import argument_error, check_bool, check_device, check_int, check_type

__all__ = ["ConvBNReLU", "Linear"]


class Linear(nn.Module):
    r"""An affine map :math:`y = x W^\top + b`, written line for line as :class:`torch.nn.Linear`.

    The class does the four things a layer does, in order: ``__init__`` declares the
    parameters (as :class:`torch.nn.Parameter`, so that
    :meth:`~torch.nn.Module.parameters` finds them), :meth:`reset_parameters` initialises
    them, :meth:`forward` computes through :func:`torch.nn.functional.linear`, and
    :meth:`extra_repr` describes the configuration in ``print(model)``.

    The initialisation consumes the random generator exactly as :class:`torch.nn.Linear`
    does, so under the same seed the two layers hold equal weights and give equal
    outputs and gradients. The checks refuse some arguments that :class:`torch.nn.Linear`
    takes, such as a complex ``dtype`` (the example below).

    Args:
        in_features: size of the last dimension of the input, at least 1.
        out_features: size of the last dimension of the output, at least 1.
        bias: if ``False`` the layer learns no additive bias (``bias`` is then
            registered as ``None``, as in :class:`torch.nn.Linear`).
        device: where to allocate the parameters; ``None`` means the default device.
        dtype: floating dtype of the parameters; ``None`` means the default dtype.

    Raises:
        TypeError: if ``in_features`` or ``out_features`` is not an ``int`` (a NumPy
            integer counts as one, a ``bool`` does not, as in
            :func:`ptnotes.validation.check_int`), ``bias`` is not a ``bool`` (a
            ``numpy.bool_`` counts as one), ``device`` is not a :class:`torch.device`,
            ``str`` or Python ``int`` (a NumPy integer and a ``bool`` are refused), or
            ``dtype`` is not a :class:`torch.dtype`.
        ValueError: if ``in_features`` or ``out_features`` is below 1, ``device`` is not
            one this machine and build of torch can hold tensors on (a name torch does not
            know such as ``"gpu"``, a negative index, ``"cpu:1"``, ``"cuda"`` without CUDA,
            an ``int`` on a machine without an accelerator), or ``dtype`` is not a floating
            point dtype.
        NotImplementedError: from the initialisation, as in :class:`torch.nn.Linear`, for a
            floating dtype whose ``uniform_`` torch does not implement on the CPU (the float8
            and float4 dtypes); some older releases of the matrix raise a ``RuntimeError``
            there instead.

    Examples:
        >>> import torch
        >>> from ptnotes.layers import Linear
        >>> _ = torch.manual_seed(0)
        >>> layer = Linear(3, 2)
        >>> layer
        Linear(in_features=3, out_features=2, bias=True)
        >>> [name for name, _ in layer.named_parameters()]
        ['weight', 'bias']
        >>> layer(torch.ones(4, 3)).shape
        torch.Size([4, 2])

        The same seed gives the same weights, outputs and gradients as :class:`torch.nn.Linear`:

        >>> _ = torch.manual_seed(0)
        >>> reference = torch.nn.Linear(3, 2)
        >>> torch.equal(layer.weight, reference.weight)
        True
        >>> x = torch.randn(4, 3)
        >>> out, ref = layer(x), reference(x)
        >>> torch.equal(out, ref)
        True
        >>> out.sum().backward()
        >>> ref.sum().backward()
        >>> torch.equal(layer.weight.grad, reference.weight.grad)
        True
        >>> torch.equal(layer.bias.grad, reference.bias.grad)
        True
        >>> Linear(3, 2, bias=False).bias is None
        True

        A CPU index other than 0 is refused; a float8 dtype passes the checks and, on the CPU,
        fails in the initialisation, as it does in :class:`torch.nn.Linear`:

        >>> Linear(3, 2, device="cpu:1")
        Traceback (most recent call last):
          ...
        ValueError: Linear() expects device to be a device this machine has (the CPU is ...
        >>> Linear(3, 2, device="cpu", dtype=torch.float8_e4m3fn)
        Traceback (most recent call last):
          ...
        NotImplementedError: "check_uniform_bounds" not implemented for 'Float8_e4m3fn'

        A complex dtype, which :class:`torch.nn.Linear` takes, is refused:

        >>> torch.nn.Linear(3, 2, dtype=torch.complex64).weight.dtype
        torch.complex64
        >>> Linear(3, 2, dtype=torch.complex64)
        Traceback (most recent call last):
          ...
        ValueError: Linear() expects dtype to be a floating point dtype, got torch.complex64
    """

    in_features: int
    out_features: int
    weight: torch.Tensor
    bias: torch.Tensor | None

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        in_features = check_int(Linear, "in_features", in_features, minimum=1)
        out_features = check_int(Linear, "out_features", out_features, minimum=1)
        bias = check_bool(Linear, "bias", bias)
        if device is not None:
            expected = "a torch.device, str, int or None"
            check_type(Linear, "device", device, (torch.device, str, int), expected=expected)
            # "gpu", or "cuda" on a machine without it: refused here, not by torch.empty
            device = check_device(Linear, "device", device)
        if dtype is not None:
            check_type(Linear, "dtype", dtype, torch.dtype, expected="a torch.dtype or None")
            if not dtype.is_floating_point:
                expected = "a floating point dtype"
                raise argument_error(Linear, "dtype", dtype, expected, got=str(dtype))
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(
            torch.empty((out_features, in_features), device=device, dtype=dtype)
        )
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh values for ``weight`` and ``bias``, exactly as :class:`torch.nn.Linear` does.

        ``kaiming_uniform_`` with ``a=sqrt(5)`` has the bound
        ``gain * sqrt(3 / fan_in)`` with ``gain = sqrt(2 / (1 + a**2)) = sqrt(1 / 3)``,
        which is ``1 / sqrt(fan_in)``: the weight and the bias are both drawn from
        ``U(-1/sqrt(in_features), 1/sqrt(in_features))``, weight first.
        """
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features)
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        """Return ``input @ weight.T + bias`` over the last dimension of ``input``."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """Describe the configuration, as shown inside ``Linear(...)`` by ``print``."""
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class ConvBNReLU(nn.Sequential):
    """The block ``Conv2d(bias=False) -> BatchNorm2d -> ReLU`` as one reusable module.

    The convolution has no bias because the batch norm right after it would cancel it:
    in training mode :class:`torch.nn.BatchNorm2d` subtracts the per-channel mean of the
    batch, and a per-channel constant added by the convolution shifts that mean by
    exactly the same constant. The bias would cost parameters and compute, and while the
    batch norm is in training mode its gradient is zero only up to rounding (the example
    below); the batch norm's own ``bias`` (its shift ``beta``) plays its role. In eval mode the
    batch norm uses its fixed running statistics and cancels nothing: a bias there would
    get a gradient (a fine-tune with the batch norms in eval mode would train it).

    Being a :class:`torch.nn.Sequential`, the block keeps the children ``"0"`` (conv),
    ``"1"`` (batch norm) and ``"2"`` (ReLU), so its ``state_dict`` keys read
    ``0.weight``, ``1.running_mean``, and so on. Indexing (``block[0]``) and iterating
    work; slicing does not: :class:`torch.nn.Sequential` builds a slice by calling
    ``type(self)(OrderedDict(...))``, which this ``__init__`` does not accept. Write
    ``nn.Sequential(*list(block)[:2])`` instead.

    Args:
        in_channels: number of input channels, at least 1.
        out_channels: number of output channels, at least 1.
        kernel_size: side of the square kernel, at least 1.
        stride: stride of the convolution, at least 1.
        padding: zero padding on each side; ``None`` (the default) means
            ``kernel_size // 2``, which keeps the spatial size for an odd kernel at
            stride 1.

    Raises:
        TypeError: if an argument is not an ``int`` (a NumPy integer counts as one, a
            ``bool`` does not; ``padding`` may also be ``None``).
        ValueError: if a size or the stride is below 1, or ``padding`` is negative.

    Examples:
        >>> import torch
        >>> from ptnotes.layers import ConvBNReLU
        >>> block = ConvBNReLU(3, 8)
        >>> block
        ConvBNReLU(
          (0): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
          (1): BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, ...)
          (2): ReLU()
        )
        >>> block(torch.randn(2, 3, 5, 5)).shape
        torch.Size([2, 8, 5, 5])
        >>> ConvBNReLU(3, 8, stride=2)(torch.randn(2, 3, 5, 5)).shape
        torch.Size([2, 8, 3, 3])
        >>> torch.nn.Sequential(*list(block)[:2])
        Sequential(
          (0): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
          (1): BatchNorm2d(8, ...)
        )
        >>> block[:2]
        Traceback (most recent call last):
          ...
        TypeError: ConvBNReLU.__init__() missing 1 required positional argument: 'out_channels'

        The gradient a convolution bias would get, batch norm in training and in eval mode:

        >>> _ = torch.manual_seed(0)
        >>> conv, norm = torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)
        >>> for mode in ("train", "eval"):
        ...     conv.bias.grad = None
        ...     out = getattr(norm, mode)()(conv(torch.randn(2, 3, 5, 5)))
        ...     (out * torch.randn_like(out)).sum().backward()
        ...     print(mode, torch.allclose(conv.bias.grad, torch.zeros(4), atol=1e-4))
        train True
        eval False
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int = 3,
        stride: int = 1,
        padding: int | None = None,
    ) -> None:
        in_channels, out_channels, kernel_size, stride = (
            check_int(ConvBNReLU, name, value, minimum=1)
            for name, value in (
                ("in_channels", in_channels),
                ("out_channels", out_channels),
                ("kernel_size", kernel_size),
                ("stride", stride),
            )
        )
        if padding is None:
            padding = kernel_size // 2
        else:
            padding = check_int(ConvBNReLU, "padding", padding, minimum=0)
        super().__init__(
            nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        )
