"""Tests for ptnotes.layers: Linear as a twin of nn.Linear, and the ConvBNReLU block."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from ptnotes.layers import ConvBNReLU, Linear


def twin_layers(seed: int, *args: object, **kwargs: object) -> tuple[Linear, nn.Linear]:
    """Build a ptnotes Linear and an nn.Linear from the same seed."""
    torch.manual_seed(seed)
    ours = Linear(*args, **kwargs)  # type: ignore[arg-type]
    torch.manual_seed(seed)
    theirs = nn.Linear(*args, **kwargs)  # type: ignore[arg-type]
    return ours, theirs


@pytest.mark.parametrize(("in_features", "out_features", "bias"), [(3, 2, True), (7, 5, False)])
@pytest.mark.parametrize("seed", [0, 123])
def test_linear_matches_nn_linear_under_same_seed(
    seed: int, in_features: int, out_features: int, bias: bool
) -> None:
    ours, theirs = twin_layers(seed, in_features, out_features, bias=bias)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("batch_shape", [(4,), (2, 3), ()])
def test_linear_output_and_grads_equal_nn_linear(batch_shape: tuple[int, ...]) -> None:
    ours, theirs = twin_layers(0, 3, 2)
    x = torch.randn(*batch_shape, 3)
    out_ours, out_theirs = ours(x), theirs(x)
    assert torch.equal(out_ours, out_theirs)
    out_ours.sum().backward()
    out_theirs.sum().backward()
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert a.grad is not None
        assert b.grad is not None
        assert torch.equal(a.grad, b.grad)


def test_linear_reset_parameters_redraws_like_nn_linear() -> None:
    ours, theirs = twin_layers(0, 4, 3)
    torch.manual_seed(5)
    ours.reset_parameters()
    torch.manual_seed(5)
    theirs.reset_parameters()
    assert torch.equal(ours.weight, theirs.weight)
    assert ours.bias is not None
    assert torch.equal(ours.bias, theirs.bias)


def test_linear_initial_values_lie_within_one_over_sqrt_fan_in() -> None:
    layer = Linear(16, 64)
    bound = 1 / 16**0.5
    assert layer.weight.abs().max() <= bound
    assert layer.bias is not None
    assert layer.bias.abs().max() <= bound


def test_linear_without_bias_registers_bias_as_none() -> None:
    layer = Linear(3, 2, bias=False)
    assert layer.bias is None
    assert list(layer.state_dict()) == ["weight"]


def test_linear_repr_matches_nn_linear() -> None:
    ours, theirs = twin_layers(0, 3, 2, bias=False)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16])
def test_linear_respects_dtype(dtype: torch.dtype) -> None:
    assert Linear(3, 2, dtype=dtype).weight.dtype == dtype


def test_linear_state_dict_loads_into_nn_linear() -> None:
    ours = Linear(3, 2)
    theirs = nn.Linear(3, 2)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(5, 3)
    assert torch.equal(ours(x), theirs(x))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"in_features": 3.0, "out_features": 2}, TypeError, "in_features to be an int, got float"),
        (
            {"in_features": 3, "out_features": True},
            TypeError,
            "out_features to be an int, got bool",
        ),
        (
            {"in_features": 0, "out_features": 2},
            ValueError,
            r"in_features to be an int >= 1, got int 0",
        ),
        (
            {"in_features": 3, "out_features": -1},
            ValueError,
            r"out_features to be an int >= 1, got int -1",
        ),
        ({"in_features": 3, "out_features": 2, "bias": 1}, TypeError, "bias to be a bool"),
        (
            {"in_features": 3, "out_features": 2, "dtype": torch.int64},
            ValueError,
            "floating point dtype, got torch.int64",
        ),
        (
            {"in_features": 3, "out_features": 2, "dtype": "float32"},
            TypeError,
            "dtype to be a torch.dtype or None, got str",
        ),
    ],
)
def test_linear_rejects_bad_arguments(
    kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        Linear(**kwargs)  # type: ignore[arg-type]


def test_conv_bn_relu_children_are_conv_without_bias_then_bn_then_relu() -> None:
    block = ConvBNReLU(3, 8)
    conv, bn, relu = block
    assert isinstance(conv, nn.Conv2d)
    assert conv.bias is None
    assert isinstance(bn, nn.BatchNorm2d)
    assert bn.num_features == 8
    assert isinstance(relu, nn.ReLU)


@pytest.mark.parametrize(
    ("kernel_size", "stride", "padding", "out_side"),
    [(3, 1, None, 8), (5, 1, None, 8), (3, 2, None, 4), (3, 1, 0, 6), (1, 1, None, 8)],
)
def test_conv_bn_relu_output_shape(
    kernel_size: int, stride: int, padding: int | None, out_side: int
) -> None:
    block = ConvBNReLU(2, 4, kernel_size=kernel_size, stride=stride, padding=padding)
    assert block(torch.randn(3, 2, 8, 8)).shape == (3, 4, out_side, out_side)


def test_conv_bn_relu_has_no_conv_bias_in_state_dict() -> None:
    assert "0.bias" not in ConvBNReLU(3, 8).state_dict()


def test_conv_bias_is_cancelled_by_batchnorm_in_training_mode() -> None:
    torch.manual_seed(0)
    with_bias = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4))
    without_bias = nn.Sequential(*list(ConvBNReLU(3, 4))[:2])
    with torch.no_grad():
        without_bias[0].weight.copy_(with_bias[0].weight)
        with_bias[0].bias.copy_(torch.tensor([5.0, -3.0, 0.5, 100.0]))
    x = torch.randn(8, 3, 6, 6)
    torch.testing.assert_close(with_bias(x), without_bias(x), rtol=1e-4, atol=1e-4)


def test_conv_bias_gets_zero_gradient_through_batchnorm() -> None:
    torch.manual_seed(0)
    block = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
    (block(torch.randn(8, 3, 6, 6)) * torch.randn(8, 4, 4, 4)).sum().backward()
    assert block[0].bias.grad is not None
    torch.testing.assert_close(block[0].bias.grad, torch.zeros(4), rtol=0, atol=1e-4)


def test_conv_bn_relu_cannot_be_sliced_because_sequential_calls_its_init() -> None:
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        ConvBNReLU(3, 4)[:2]


def test_conv_bn_relu_output_is_non_negative() -> None:
    assert (ConvBNReLU(3, 4)(torch.randn(2, 3, 5, 5)) >= 0).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"in_channels": "3", "out_channels": 8}, TypeError, "in_channels to be an int, got str"),
        (
            {"in_channels": 3, "out_channels": 0},
            ValueError,
            r"out_channels to be an int >= 1, got int 0",
        ),
        ({"in_channels": 3, "out_channels": 8, "kernel_size": (3, 3)}, TypeError, "kernel_size"),
        (
            {"in_channels": 3, "out_channels": 8, "stride": 0},
            ValueError,
            r"stride to be an int >= 1, got int 0",
        ),
        (
            {"in_channels": 3, "out_channels": 8, "padding": -1},
            ValueError,
            r"padding to be an int >= 0",
        ),
        (
            {"in_channels": 3, "out_channels": 8, "padding": "same"},
            TypeError,
            "padding to be an int, got str",
        ),
    ],
)
def test_conv_bn_relu_rejects_bad_arguments(
    kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        ConvBNReLU(**kwargs)  # type: ignore[arg-type]
