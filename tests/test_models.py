"""ptnotes.models: the small CNN the fine-tuning examples use."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from ptnotes.models import SmallCNN


@pytest.mark.parametrize(
    ("num_classes", "in_channels", "size"),
    [(10, 3, 32), (2, 1, 2), (5, 3, (7, 12))],
    ids=["default", "smallest-input", "non-square"],
)
def test_small_cnn_outputs_one_logit_per_class(
    num_classes: int, in_channels: int, size: Any
) -> None:
    height, width = (size, size) if isinstance(size, int) else size
    model = SmallCNN(num_classes, in_channels)
    assert model(torch.zeros(4, in_channels, height, width)).shape == (4, num_classes)


def test_small_cnn_splits_into_features_and_fc() -> None:
    model = SmallCNN(num_classes=3)
    assert [name for name, _ in model.named_children()] == ["features", "fc"]
    assert isinstance(model.fc, nn.Linear)
    assert model.fc.in_features == SmallCNN.feature_dim
    assert model.features(torch.zeros(1, 3, 8, 8)).shape == (1, SmallCNN.feature_dim)


def test_small_cnn_reset_parameters_reinitialises_every_layer() -> None:
    model = SmallCNN()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    model.reset_parameters()
    assert all(p.abs().sum() > 0 for p in model.parameters())


def test_small_cnn_repr_shows_its_configuration() -> None:
    assert repr(SmallCNN(7, 1)).startswith("SmallCNN(\n  num_classes=7, in_channels=1\n")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_classes": 0}, ValueError, "num_classes to be an int >= 1, got int 0"),
        ({"in_channels": -3}, ValueError, "in_channels to be an int >= 1, got int -3"),
        ({"num_classes": 2.0}, TypeError, "num_classes to be an int, got float 2.0"),
        ({"num_classes": True}, TypeError, "num_classes to be an int, got bool True"),
    ],
    ids=["zero-classes", "negative-channels", "float-classes", "bool-classes"],
)
def test_small_cnn_rejects_bad_sizes(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        SmallCNN(**kwargs)


def test_small_cnn_runs_with_a_head_that_is_not_a_linear_layer() -> None:
    from ptnotes.finetune import replace_head

    model = SmallCNN(num_classes=5)
    replace_head(model, "fc", nn.Sequential(nn.Dropout(0.1), nn.Linear(model.feature_dim, 3)))
    assert model.eval()(torch.zeros(2, 3, 8, 8)).shape == (2, 3)
