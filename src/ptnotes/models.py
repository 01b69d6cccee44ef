"""A tiny backbone-plus-head CNN to fine-tune in examples, with no download."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["SmallCNN"]


class SmallCNN(nn.Module):
    """A two-convolution image classifier split into ``features`` and ``fc``.

    The split mirrors torchvision's ResNets (a backbone, then a last ``fc`` layer), so
    the fine-tuning recipes of the notes (freeze the backbone, replace the head, give
    the head its own learning rate) run on it unchanged, in milliseconds, without
    downloading weights. Global average pooling makes any input height and width
    (at least 2 x 2) give the same 16 features.

    Args:
        num_classes: the number of output logits (the width of ``fc``).
        in_channels: the number of channels of the input images.

    Raises:
        TypeError: if ``num_classes`` or ``in_channels`` is not an ``int``.
        ValueError: if ``num_classes`` or ``in_channels`` is not positive.

    Examples:
        >>> import torch
        >>> from ptnotes.models import SmallCNN
        >>> model = SmallCNN(num_classes=5)
        >>> model(torch.zeros(2, 3, 8, 8)).shape
        torch.Size([2, 5])
        >>> model.fc
        Linear(in_features=16, out_features=5, bias=True)
        >>> sum(p.numel() for p in model.parameters())
        1477
    """

    feature_dim: int = 16
    """The number of features ``features`` hands to ``fc``."""

    def __init__(self, num_classes: int = 10, in_channels: int = 3) -> None:
        super().__init__()
        for name, value in (("num_classes", num_classes), ("in_channels", in_channels)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"SmallCNN() expects {name} to be an int, got {value!r}")
            if value < 1:
                raise ValueError(f"SmallCNN() expects {name} >= 1, got {value}")
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
        """Re-initialise every layer with its own default initialisation."""
        for layer in (*self.features, self.fc):
            if isinstance(layer, nn.Conv2d | nn.Linear):
                layer.reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return the logits ``(N, num_classes)`` of images ``x`` of shape ``(N, C, H, W)``."""
        logits: torch.Tensor = self.fc(self.features(x))
        return logits

    def extra_repr(self) -> str:
        """Describe the configuration: ``num_classes`` and ``in_channels``."""
        return f"num_classes={self.num_classes}, in_channels={self.in_channels}"
