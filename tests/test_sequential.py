"""Tests for ptnotes.sequential: the three nn.Sequential styles and same_structure."""

from __future__ import annotations

from typing import Literal

import pytest
import torch
from torch import nn

from ptnotes.sequential import same_structure, sequential_from

Style = Literal["positional", "ordered_dict", "add_module"]
STYLES: tuple[Style, ...] = ("positional", "ordered_dict", "add_module")
NAMED_STYLES: tuple[Style, ...] = ("ordered_dict", "add_module")


def layers() -> list[tuple[str, nn.Module]]:
    """Fresh modules of the notes' example network, each call."""
    return [
        ("conv1", nn.Conv2d(3, 3, 3)),
        ("BatchNormalization", nn.BatchNorm2d(3)),
        ("activation_layer", nn.ReLU()),
    ]


@pytest.mark.parametrize("style", STYLES)
def test_every_style_keeps_the_modules_in_order(style: Style) -> None:
    given = layers()
    built = sequential_from(given, style)
    assert list(built) == [module for _, module in given]


def test_named_styles_give_equal_structure_and_state_dict_keys() -> None:
    by_dict = sequential_from(layers(), "ordered_dict")
    by_add = sequential_from(layers(), "add_module")
    assert same_structure(by_dict, by_add)
    assert list(by_dict.state_dict()) == list(by_add.state_dict())


@pytest.mark.parametrize("named_style", NAMED_STYLES)
def test_named_styles_keep_the_given_names(named_style: Style) -> None:
    keys = list(sequential_from(layers(), named_style).state_dict())
    assert keys[:2] == ["conv1.weight", "conv1.bias"]
    assert "BatchNormalization.running_mean" in keys


def test_positional_style_names_children_by_position() -> None:
    built = sequential_from(layers(), "positional")
    assert [name for name, _ in built.named_children()] == ["0", "1", "2"]


@pytest.mark.parametrize("named_style", NAMED_STYLES)
def test_positional_differs_from_named_styles_in_names_only(named_style: Style) -> None:
    positional = sequential_from(layers(), "positional")
    named = sequential_from(layers(), named_style)
    assert not same_structure(positional, named)
    assert same_structure(positional, named, ignore_names=True)
    assert list(positional.state_dict()) != list(named.state_dict())


def test_positional_state_dict_does_not_load_into_named_style_strictly() -> None:
    positional = sequential_from(layers(), "positional")
    named = sequential_from(layers(), "ordered_dict")
    with pytest.raises(RuntimeError, match="Missing key"):
        named.load_state_dict(positional.state_dict())


@pytest.mark.parametrize("style", STYLES)
def test_styles_compute_the_same_function_with_the_same_modules(style: Style) -> None:
    shared = layers()
    reference = sequential_from(shared, "ordered_dict").eval()
    x = torch.randn(2, 3, 5, 5)
    assert torch.equal(sequential_from(shared, style).eval()(x), reference(x))


def test_sequential_from_shares_modules_rather_than_copying() -> None:
    shared = layers()
    first = sequential_from(shared, "positional")
    second = sequential_from(shared, "add_module")
    assert first[0].weight is second[0].weight


def test_integer_indexing_works_in_named_styles() -> None:
    built = sequential_from(layers(), "add_module")
    assert built[0] is built.conv1


def test_empty_layers_give_an_empty_sequential() -> None:
    assert len(sequential_from([], "ordered_dict")) == 0


def test_same_structure_detects_a_different_shape() -> None:
    a = sequential_from([("fc", nn.Linear(2, 3))], "ordered_dict")
    b = sequential_from([("fc", nn.Linear(2, 4))], "ordered_dict")
    assert not same_structure(a, b)
    assert not same_structure(a, b, ignore_names=True)


def test_same_structure_detects_a_different_module_type() -> None:
    a = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    b = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    assert not same_structure(a, b, ignore_names=True)


def test_same_structure_detects_a_different_order() -> None:
    a = nn.Sequential(nn.ReLU(), nn.Linear(2, 2))
    b = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    assert not same_structure(a, b, ignore_names=True)


def test_same_structure_compares_buffers() -> None:
    a = nn.Sequential(nn.BatchNorm1d(3))
    b = nn.Sequential(nn.BatchNorm1d(3, track_running_stats=False))
    assert not same_structure(a, b)


def test_same_structure_compares_the_root_type() -> None:
    class Wrapper(nn.Sequential):
        pass

    assert not same_structure(nn.Sequential(nn.ReLU()), Wrapper(nn.ReLU()))


def test_same_structure_ignores_values() -> None:
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    with torch.no_grad():
        b.weight.add_(1.0)
    assert same_structure(a, b)


def test_same_structure_matches_uninitialised_lazy_parameters_to_each_other() -> None:
    assert same_structure(nn.LazyLinear(3), nn.LazyLinear(3))


def test_same_structure_tells_an_uninitialised_lazy_layer_from_a_materialised_one() -> None:
    materialised = nn.LazyLinear(3)
    materialised(torch.zeros(1, 2))
    assert not same_structure(nn.LazyLinear(3), materialised, ignore_names=True)


# -- bad inputs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("style", "error", "match"),
    [
        (
            "sequential",
            ValueError,
            "style to be one of 'positional', 'ordered_dict', 'add_module', got str 'sequential'",
        ),
        ("OrderedDict", ValueError, "got str 'OrderedDict'"),
        (None, TypeError, "style to be one of .*, got NoneType"),
    ],
)
def test_sequential_from_rejects_bad_style(
    style: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        sequential_from(layers(), style)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("bad_layers", "error", "match"),
    [
        (nn.Conv2d(1, 1, 1), TypeError, "sequence of \\(name, module\\) pairs, got Conv2d"),
        ("conv1", TypeError, "sequence of \\(name, module\\) pairs, got str"),
        ([nn.ReLU()], TypeError, r"layers\[0\] to be a \(name, module\) tuple, got ReLU"),
        ([("a", nn.ReLU(), 1)], TypeError, r"layers\[0\] to be a \(name, module\) tuple"),
        ([(1, nn.ReLU())], TypeError, r"name of layers\[0\] to be a str, got int"),
        ([("relu", torch.relu)], TypeError, r"module of layers\[0\] to be a torch.nn.Module"),
        (
            [("fc.1", nn.ReLU())],
            ValueError,
            r"name of layers\[0\] to be a non-empty name free of '\.', got str 'fc\.1'",
        ),
        ([("", nn.ReLU())], ValueError, "non-empty"),
        (
            [("relu", nn.ReLU()), ("relu", nn.Tanh())],
            ValueError,
            "name of layers\\[1\\] to be a name not used before",
        ),
    ],
)
@pytest.mark.parametrize("style", STYLES)
def test_sequential_from_rejects_bad_layers(
    bad_layers: object, error: type[Exception], match: str, style: Style
) -> None:
    with pytest.raises(error, match=match):
        sequential_from(bad_layers, style)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        ([nn.ReLU()], nn.ReLU(), "a to be a torch.nn.Module, got list"),
        (nn.ReLU(), {"relu": nn.ReLU()}, "b to be a torch.nn.Module, got dict"),
    ],
)
def test_same_structure_rejects_non_modules(a: object, b: object, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        same_structure(a, b)  # type: ignore[arg-type]


def test_same_structure_rejects_non_bool_ignore_names() -> None:
    with pytest.raises(TypeError, match=r"ignore_names to be a bool .*, got str"):
        same_structure(nn.ReLU(), nn.ReLU(), ignore_names="yes")  # type: ignore[arg-type]
