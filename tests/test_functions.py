"""Tests for ptnotes.functions: custom autograd.Function classes and their wrappers."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
import torch
from torch.autograd import gradcheck, gradgradcheck

from ptnotes.functions import ClampInPlace, Sigmoid, Sort, clamp_, round_ste, sigmoid, sort


@pytest.fixture
def x64() -> torch.Tensor:
    """A small float64 leaf that requires grad, as gradcheck needs."""
    generator = torch.Generator().manual_seed(0)
    return torch.randn(3, 4, dtype=torch.float64, generator=generator, requires_grad=True)


def test_sigmoid_forward_matches_torch_sigmoid(x64: torch.Tensor) -> None:
    torch.testing.assert_close(sigmoid(x64), torch.sigmoid(x64))


def test_sigmoid_grad_matches_torch_sigmoid(x64: torch.Tensor) -> None:
    (ours,) = torch.autograd.grad(sigmoid(x64).sum(), x64)
    (theirs,) = torch.autograd.grad(torch.sigmoid(x64).sum(), x64)
    torch.testing.assert_close(ours, theirs)


def test_sigmoid_passes_gradcheck(x64: torch.Tensor) -> None:
    assert gradcheck(sigmoid, (x64,))


def test_sigmoid_passes_gradgradcheck(x64: torch.Tensor) -> None:
    assert gradgradcheck(sigmoid, (x64,))


def test_sigmoid_saves_its_output_not_its_input(x64: torch.Tensor) -> None:
    y = sigmoid(x64)
    assert y.grad_fn is not None
    (saved,) = y.grad_fn.saved_tensors
    assert torch.equal(saved, y)


def test_sigmoid_grad_fn_is_named_after_the_function(x64: torch.Tensor) -> None:
    assert type(sigmoid(x64).grad_fn).__name__ == "SigmoidBackward"


def test_round_ste_forward_rounds_half_to_even() -> None:
    x = torch.tensor([0.4, 0.5, 1.5, 2.5, -0.6])
    assert torch.equal(round_ste(x), torch.tensor([0.0, 0.0, 2.0, 2.0, -1.0]))


@pytest.mark.parametrize("shape", [(3,), (2, 3), ()])
def test_round_ste_passes_gradient_through_unchanged(shape: tuple[int, ...]) -> None:
    x = torch.randn(shape, requires_grad=True)
    upstream = torch.randn(shape)
    (grad,) = torch.autograd.grad(round_ste(x), x, grad_outputs=upstream)
    assert torch.equal(grad, upstream)


def test_torch_round_alone_gives_zero_gradient() -> None:
    x = torch.tensor([0.4, 1.6], requires_grad=True)
    (grad,) = torch.autograd.grad(torch.round(x).sum(), x)
    assert torch.equal(grad, torch.zeros(2))


def test_round_ste_fails_gradcheck_by_design(x64: torch.Tensor) -> None:
    assert not gradcheck(round_ste, (x64,), raise_exception=False)


@pytest.mark.parametrize(("dim", "descending"), [(0, False), (1, True), (-1, False)])
def test_sort_matches_torch_sort(x64: torch.Tensor, dim: int, descending: bool) -> None:
    values, indices = sort(x64, dim, descending)
    expected = torch.sort(x64, dim=dim, descending=descending)
    assert torch.equal(values, expected.values)
    assert torch.equal(indices, expected.indices)


def test_sort_marks_indices_non_differentiable(x64: torch.Tensor) -> None:
    values, indices = sort(x64)
    assert values.requires_grad
    assert not indices.requires_grad
    assert indices.dtype == torch.int64


@pytest.mark.parametrize(("dim", "descending"), [(0, False), (1, True)])
def test_sort_passes_gradcheck_and_gradgradcheck(
    x64: torch.Tensor, dim: int, descending: bool
) -> None:
    def values(t: torch.Tensor) -> torch.Tensor:
        return sort(t, dim, descending)[0]

    assert gradcheck(values, (x64,))
    assert gradgradcheck(values, (x64,))


def test_sort_grad_matches_torch_sort(x64: torch.Tensor) -> None:
    weights = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    (ours,) = torch.autograd.grad((sort(x64)[0] * weights).sum(), x64)
    (theirs,) = torch.autograd.grad((torch.sort(x64).values * weights).sum(), x64)
    assert torch.equal(ours, theirs)


def test_clamp_returns_the_same_tensor_modified_in_place() -> None:
    x = torch.tensor([-2.0, 0.5, 2.0])
    version = x._version
    assert clamp_(x, -1.0, 1.0) is x
    assert torch.equal(x, torch.tensor([-1.0, 0.5, 1.0]))
    assert x._version > version


def test_clamp_records_itself_in_the_history_of_the_dirty_tensor() -> None:
    w = torch.tensor([-2.0, 0.5, 2.0], requires_grad=True)
    h = w * 2
    clamp_(h, -1.0, 1.0)
    assert type(h.grad_fn).__name__ == "ClampInPlaceBackward"


def test_clamp_grad_is_zero_outside_the_bounds_like_torch_clamp() -> None:
    w = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
    (ours,) = torch.autograd.grad(clamp_(w * 1, -1.0, 1.0).sum(), w)
    (theirs,) = torch.autograd.grad(torch.clamp(w, -1.0, 1.0).sum(), w)
    assert torch.equal(ours, theirs)


def test_clamp_grad_passes_through_at_the_bounds() -> None:
    """At a bound itself ours passes the gradient (torch.clamp did too before torch 2.14,
    which made the bounds exclusive: the release matrix records the change)."""
    w = torch.tensor([-1.0, 1.0], requires_grad=True)
    (ours,) = torch.autograd.grad(clamp_(w * 1, -1.0, 1.0).sum(), w)
    assert ours.tolist() == [1.0, 1.0]


def test_clamp_passes_gradcheck_and_gradgradcheck(x64: torch.Tensor) -> None:
    def clamped(t: torch.Tensor) -> torch.Tensor:
        return clamp_(t.clone(), -0.5, 0.5)

    assert gradcheck(clamped, (x64,))
    assert gradgradcheck(clamped, (x64,))


def test_clamp_makes_a_stale_saved_tensor_raise_on_backward() -> None:
    w = torch.tensor([0.5, 2.0], requires_grad=True)
    h = w * 1
    s = h.sin()  # saves h for its backward
    clamp_(h, -1.0, 1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()


def test_clamp_on_a_leaf_that_requires_grad_is_allowed_under_no_grad() -> None:
    w = torch.tensor([-2.0, 2.0], requires_grad=True)
    with torch.no_grad():
        clamp_(w, -1.0, 1.0)
    assert torch.equal(w.detach(), torch.tensor([-1.0, 1.0]))


@pytest.mark.parametrize("mode", [torch.no_grad, torch.inference_mode])
@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
def test_clamp_returns_x_itself_with_grad_mode_off(
    mode: Callable[[], AbstractContextManager[object]], leaf: bool
) -> None:
    w = torch.tensor([-2.0, 2.0], requires_grad=True)
    x = w if leaf else w * 1
    with mode():
        result = clamp_(x, -1.0, 1.0)
    assert result is x
    assert torch.equal(x.detach(), torch.tensor([-1.0, 1.0]))


def test_raw_apply_on_a_leaf_that_requires_grad_is_refused_by_autograd() -> None:
    w = torch.tensor([-2.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ClampInPlace.apply(w, -1.0, 1.0)


@pytest.mark.parametrize(
    "function",
    [Sigmoid.apply, lambda t: Sort.apply(t, -1, False)[0]],
    ids=["Sigmoid", "Sort"],
)
def test_apply_entry_points_build_a_graph(function: Callable[[torch.Tensor], torch.Tensor]) -> None:
    x = torch.randn(3, requires_grad=True)
    assert function(x).grad_fn is not None


# -- bad inputs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("function", "name"),
    [
        (sigmoid, "sigmoid"),
        (round_ste, "round_ste"),
        (sort, "sort"),
        (lambda x: clamp_(x, 0.0, 1.0), "clamp_"),
    ],
    ids=["sigmoid", "round_ste", "sort", "clamp_"],
)
@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ([1.0, 2.0], "expects x to be a torch.Tensor, got list"),
        (torch.tensor([1, 2]), "expects x to be a floating point tensor, got .* dtype torch.int64"),
        (torch.tensor([True]), "expects x to be a floating point tensor, got .* dtype torch.bool"),
    ],
    ids=["list", "int64", "bool"],
)
def test_functions_reject_non_float_tensors(
    function: Callable[[object], object], name: str, bad: object, match: str
) -> None:
    with pytest.raises(TypeError, match=rf"^{name}\(\) {match}"):
        function(bad)


@pytest.mark.parametrize(
    ("dim", "error", "match"),
    [
        (2, ValueError, r"dim to be an int in \[-2, 1\], got int 2"),
        (-3, ValueError, r"dim to be an int in \[-2, 1\], got int -3"),
        (1.0, TypeError, "dim to be an int, got float"),
        (True, TypeError, "dim to be an int, got bool"),
    ],
)
def test_sort_rejects_bad_dim(dim: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        sort(torch.zeros(2, 3), dim)  # type: ignore[arg-type]


def test_sort_rejects_non_bool_descending() -> None:
    with pytest.raises(TypeError, match=r"descending to be a bool .*, got int"):
        sort(torch.zeros(3), -1, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("low", "high", "error", "match"),
    [
        (1.0, -1.0, ValueError, "max to be a number >= min=1.0, got float -1.0"),
        ("0", 1.0, TypeError, "min to be an int or float, got str"),
        (0.0, None, TypeError, "max to be an int or float, got NoneType"),
        (False, 1.0, TypeError, "min to be an int or float, got bool"),
    ],
)
def test_clamp_rejects_bad_bounds(
    low: object, high: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        clamp_(torch.zeros(3), low, high)  # type: ignore[arg-type]


def test_clamp_rejects_a_leaf_that_requires_grad() -> None:
    w = torch.zeros(3, requires_grad=True)
    with pytest.raises(ValueError, match="got a leaf tensor that requires grad"):
        clamp_(w, -1.0, 1.0)


@pytest.mark.parametrize("base_is_leaf", [False, True], ids=["non-leaf base", "leaf base"])
def test_clamp_names_a_view_made_under_no_grad_not_a_leaf(base_is_leaf: bool) -> None:
    # such a view reports is_leaf True (it has no grad_fn), whatever its base is; the
    # message must say what it is, a view made under no_grad, and leave it unwritten
    w = torch.tensor([-2.0, 0.5, 2.0], requires_grad=True)
    h = w if base_is_leaf else w * 1
    with torch.no_grad():
        view = h[:2]
    with pytest.raises(ValueError, match=r"got a view made under torch\.no_grad\(\)") as info:
        clamp_(view, -1.0, 1.0)
    assert "leaf" not in str(info.value)
    assert torch.equal(h.detach(), torch.tensor([-2.0, 0.5, 2.0]))


@pytest.mark.parametrize("make_view", [lambda h: h.unbind()[0], lambda h: h.split(1)[0]])
def test_clamp_rejects_a_view_autograd_forbids_writing_before_writing(
    make_view: Callable[[torch.Tensor], torch.Tensor],
) -> None:
    # one output of a multi-output view op: autograd refuses the in-place op only after
    # ClampInPlace.forward has written it, so clamp_ must refuse it first
    w = torch.tensor([[-2.0, 0.5], [2.0, 3.0]], requires_grad=True)
    h = w * 1
    with pytest.raises(ValueError, match="modified in place"):
        clamp_(make_view(h), -1.0, 1.0)
    assert torch.equal(h.detach(), w.detach())


def test_clamp_accepts_a_multi_output_view_that_needs_no_grad() -> None:
    t = torch.tensor([[-2.0, 0.5], [2.0, 3.0]])
    clamp_(t.unbind()[0], -1.0, 1.0)
    assert torch.equal(t, torch.tensor([[-1.0, 0.5], [2.0, 3.0]]))
