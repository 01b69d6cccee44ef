"""A tiny backbone-plus-head CNN to fine-tune in examples, with no download."""

from __future__ import annotations

import torch
from torch import nn

from ptnotes.validation import argument_error, check_int, check_type

__all__ = ["SmallCNN"]


def _autocast_off(device_type: str) -> bool:
    """Whether autocast is off for ``device_type`` (then the input's dtype must be the model's)."""
    try:
        return not torch.is_autocast_enabled(device_type)
    except TypeError:  # torch < 2.4 takes no device type
        return not (torch.is_autocast_enabled() or torch.is_autocast_cpu_enabled())
    except RuntimeError:  # a device type autocast does not know (meta): no autocast there
        return True


class SmallCNN(nn.Module):
    """A two-convolution image classifier split into ``features`` and ``fc``.

    The split mirrors torchvision's ResNets (a backbone, then a last ``fc`` layer), so
    the fine-tuning recipes of the notes (freeze the backbone, replace the head with a
    new :class:`torch.nn.Linear` of ``fc.in_features`` inputs, give the head its own
    learning rate) run on it unchanged, without downloading weights. Global average pooling
    makes any input height and width (at least 2 x 2) give the same 16 features;
    :meth:`forward` checks these limits.

    Args:
        num_classes: the number of output logits (the width of ``fc``).
        in_channels: the number of channels of the input images.

    Raises:
        TypeError: if ``num_classes`` or ``in_channels`` is not an ``int`` (a NumPy
            integer counts as one, a ``bool`` does not).
        ValueError: if ``num_classes`` or ``in_channels`` is not positive.

    Examples:
        >>> import torch
        >>> from ptnotes.models import SmallCNN
        >>> model = SmallCNN(num_classes=5)
        >>> model(torch.zeros(2, 3, 8, 8)).shape
        torch.Size([2, 5])
        >>> model.fc
        Linear(in_features=16, out_features=5, bias=True)
        >>> model.in_channels
        3
        >>> sum(p.numel() for p in model.parameters())
        1477
        >>> model(torch.zeros(1, 3, 2, 3)).shape  # the smallest images: 2 x 2
        torch.Size([1, 5])
        >>> model(torch.zeros(1, 3, 1, 8))
        Traceback (most recent call last):
          ...
        ValueError: SmallCNN.forward() expects x to be a batch ... with H, W >= 2 ...

        A new head takes ``fc.in_features`` inputs (16), not ResNet-18's 512:

        >>> from torch import nn
        >>> width = model.fc.in_features
        >>> width
        16
        >>> model.fc = nn.Linear(512, 3)
        >>> model(torch.zeros(2, 3, 8, 8))
        Traceback (most recent call last):
          ...
        RuntimeError: ...mat1 and mat2 shapes cannot be multiplied (2x16 and 512x3)
        >>> model.fc = nn.Linear(width, 3)
        >>> model(torch.zeros(2, 3, 8, 8)).shape
        torch.Size([2, 3])
    """

    feature_dim: int = 16
    """The number of features ``features`` hands to ``fc``."""

    def __init__(self, num_classes: int = 10, in_channels: int = 3) -> None:
        super().__init__()
        num_classes = check_int(SmallCNN, "num_classes", num_classes, minimum=1)
        in_channels = check_int(SmallCNN, "in_channels", in_channels, minimum=1)
        self.num_classes = num_classes
        self.in_channels = in_channels
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 8, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, self.feature_dim, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.fc = nn.Linear(self.feature_dim, num_classes)

    def reset_parameters(self) -> None:
        """Re-initialise each convolution of ``features``, and ``fc`` while it is a
        :class:`torch.nn.Linear`, with its own default initialisation."""
        for layer in (*self.features, self.fc):
            if isinstance(layer, nn.Conv2d | nn.Linear):
                layer.reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``fc(features(x))`` for images ``x`` of shape ``(N, C, H, W)``.

        With the head the model was built with, these are logits of shape ``(N, num_classes)``.

        Raises:
            TypeError: if ``x`` is not a floating point tensor.
            ValueError: if ``x`` is not a batch ``(N, in_channels, H, W)`` with
                ``H, W >= 2`` (one image must be given as a batch of one,
                ``x.unsqueeze(0)``), if it is not on the model's device or not of its
                dtype (under autocast: float64 exactly where the model is), or if the
                model's parameters are of more than one dtype or device.
        """
        forward = SmallCNN.forward
        check_type(forward, "x", x, torch.Tensor)
        if not x.is_floating_point():
            raise argument_error(forward, "x", x, "a floating point tensor", error=TypeError)
        if x.ndim != 4 or x.shape[1] != self.in_channels or min(x.shape[2:]) < 2:
            expected = (
                f"a batch of shape (N, {self.in_channels}, H, W) with H, W >= 2 "
                "(for one image, x.unsqueeze(0))"
            )
            raise argument_error(forward, "x", x, expected)
        kinds = {(p.dtype, p.device) for p in self.parameters()}
        if len(kinds) > 1:  # part of the model converted (model.features.double())
            shown = ", ".join(sorted(f"{d} on {v}" for d, v in kinds))
            expected = "of one dtype and device throughout (convert it whole: model.to(...))"
            raise argument_error(forward, "the model", self, expected, got=shown)
        weight = next(self.parameters())  # all of one dtype and device, checked above
        if _autocast_off(x.device.type):
            same = x.dtype == weight.dtype
        else:  # autocast casts 16- and 32-bit floats to its own dtype, never float64
            same = (x.dtype == torch.float64) == (weight.dtype == torch.float64)
        if not same or x.device != weight.device:  # torch's error names no argument
            expected = (
                f"a batch of the model's dtype and device ({weight.dtype}, {weight.device}; "
                "convert with x.to(...))"
            )
            got = f"{x.dtype} on {x.device}"
            raise argument_error(forward, "x", x, expected, got=got)
        logits: torch.Tensor = self.fc(self.features(x))
        return logits

    def extra_repr(self) -> str:
        """Describe the arguments the model was built with: ``num_classes`` and ``in_channels``."""
        return f"num_classes={self.num_classes}, in_channels={self.in_channels}"
