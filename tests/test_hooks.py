"""ptnotes.hooks: recording gradient norms with temporary hooks."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from torch import nn

from ptnotes.hooks import GradNormRecorder


@pytest.fixture
def linear() -> nn.Linear:
    """A Linear(2, 1) with weight [[1, 1]] and bias 0: gradients are easy to compute."""
    model = nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.fill_(1.0)
        model.bias.zero_()
    return model


def backward(model: nn.Module, x: list[list[float]]) -> None:
    model(torch.tensor(x)).sum().backward()


def test_records_one_norm_per_backward_pass(linear: nn.Linear) -> None:
    with GradNormRecorder(linear) as recorder:
        backward(linear, [[3.0, 4.0]])
        backward(linear, [[6.0, 8.0]])
    assert recorder.parameter_norms == {"weight": [5.0, 10.0], "bias": [1.0, 1.0]}


def test_records_the_gradient_of_each_pass_not_the_accumulated_grad(linear: nn.Linear) -> None:
    with GradNormRecorder(linear) as recorder:
        backward(linear, [[3.0, 4.0]])
        backward(linear, [[3.0, 4.0]])
    assert recorder.parameter_norms["weight"] == [5.0, 5.0]
    assert linear.weight.grad is not None
    assert float(linear.weight.grad.norm()) == 10.0


def test_last_returns_the_latest_norm_of_each_parameter(linear: nn.Linear) -> None:
    with GradNormRecorder(linear) as recorder:
        backward(linear, [[3.0, 4.0]])
        backward(linear, [[0.0, 1.0]])
    assert recorder.last() == {"weight": 1.0, "bias": 1.0}


def test_last_is_empty_before_any_backward(linear: nn.Linear) -> None:
    with GradNormRecorder(linear) as recorder:
        pass
    assert recorder.last() == {}


@pytest.mark.parametrize(("norm_type", "expected"), [(1, 7.0), (2.0, 5.0), (math.inf, 4.0)])
def test_norm_type_selects_the_vector_norm(
    linear: nn.Linear, norm_type: float, expected: float
) -> None:
    with GradNormRecorder(linear, norm_type=norm_type) as recorder:
        backward(linear, [[3.0, 4.0]])
    assert recorder.last()["weight"] == expected


def test_hooks_are_removed_on_exit(linear: nn.Linear) -> None:
    with GradNormRecorder(linear) as recorder:
        assert recorder.active
        backward(linear, [[3.0, 4.0]])
    assert not recorder.active
    backward(linear, [[3.0, 4.0]])
    assert recorder.parameter_norms["weight"] == [5.0]
    assert not linear.weight._backward_hooks


def test_hooks_are_removed_when_the_block_raises(linear: nn.Linear) -> None:
    recorder = GradNormRecorder(linear)
    with pytest.raises(ZeroDivisionError), recorder:
        _ = 1 / 0
    assert not recorder.active
    assert not linear.weight._backward_hooks


def test_hooks_do_not_change_the_gradient(linear: nn.Linear) -> None:
    backward(linear, [[3.0, 4.0]])
    assert linear.weight.grad is not None
    plain = linear.weight.grad.clone()
    linear.zero_grad()
    with GradNormRecorder(linear, modules=True):
        backward(linear, [[3.0, 4.0]])
    assert torch.equal(linear.weight.grad, plain)


def test_frozen_parameters_are_not_watched() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    model[0].requires_grad_(False)
    with GradNormRecorder(model) as recorder:
        backward(model, [[1.0, 1.0]])
    assert list(recorder.parameter_norms) == ["1.weight", "1.bias"]


def test_modules_records_output_gradient_of_each_leaf_module() -> None:
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    with GradNormRecorder(model, modules=True) as recorder:
        model(torch.ones(4, 2)).sum().backward()
    assert list(recorder.output_norms) == ["0", "1", "2"]
    # d sum(out) / d out is a (4, 1) tensor of ones: norm 2
    assert recorder.output_norms["2"] == [2.0]


def test_backward_after_the_block_records_nothing() -> None:
    model = nn.Sequential(nn.Linear(2, 1))
    with GradNormRecorder(model, modules=True) as recorder:
        loss = model(torch.ones(1, 2)).sum()
    loss.backward()
    assert recorder.parameter_norms == {"0.weight": [], "0.bias": []}
    assert recorder.output_norms == {"0": []}


def test_output_norms_stay_empty_without_modules(linear: nn.Linear) -> None:
    with GradNormRecorder(linear) as recorder:
        backward(linear, [[3.0, 4.0]])
    assert recorder.output_norms == {}


def test_entering_an_active_recorder_twice_is_refused(linear: nn.Linear) -> None:
    with GradNormRecorder(linear) as recorder, pytest.raises(RuntimeError, match="already"):
        recorder.__enter__()


def test_a_recorder_can_be_reused_and_starts_empty(linear: nn.Linear) -> None:
    recorder = GradNormRecorder(linear)
    with recorder:
        backward(linear, [[3.0, 4.0]])
    with recorder:
        backward(linear, [[6.0, 8.0]])
    assert recorder.parameter_norms["weight"] == [10.0]


BAD_ARGUMENTS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"model": "fc"}, TypeError, "expects model to be a torch.nn.Module, got str 'fc'"),
    ({"model": None}, TypeError, "expects model to be a torch.nn.Module"),
    ({"norm_type": "2"}, TypeError, "expects norm_type to be an int or float"),
    ({"norm_type": True}, TypeError, "expects norm_type to be an int or float, got bool"),
    ({"norm_type": 0}, ValueError, "expects norm_type to be a number > 0"),
    ({"norm_type": -1.0}, ValueError, "expects norm_type to be a number > 0"),
    ({"norm_type": math.nan}, ValueError, "not NaN"),
    ({"modules": 1}, TypeError, "expects modules to be a bool"),
    ({"modules": "yes"}, TypeError, "expects modules to be a bool"),
    ({"model": nn.ReLU()}, ValueError, "expects model to have a parameter that requires grad"),
]


@pytest.mark.parametrize(("arguments", "error", "message"), BAD_ARGUMENTS)
def test_bad_arguments_are_refused_naming_the_argument(
    arguments: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments = {"model": nn.Linear(2, 1), **arguments}
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        GradNormRecorder(**arguments)


def test_fully_frozen_model_is_refused() -> None:
    model = nn.Linear(2, 1).requires_grad_(False)
    with pytest.raises(ValueError, match="got Linear with none"):
        GradNormRecorder(model)


class RefusesForwardHooks(nn.Linear):
    def register_forward_hook(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no forward hooks here")


def test_entering_is_all_or_nothing_when_a_hook_cannot_be_registered(
    unchanged: Any,
) -> None:
    model = nn.Sequential(nn.Linear(1, 1), RefusesForwardHooks(1, 1))
    recorder = GradNormRecorder(model, modules=True)
    with pytest.raises(RuntimeError, match="no forward hooks"), unchanged(model):
        recorder.__enter__()
    assert not recorder.active
    model[1] = nn.Linear(1, 1)  # fixed: the same recorder enters now
    with recorder:
        backward(model, [[1.0]])
    assert sorted(recorder.parameter_norms) == ["0.bias", "0.weight", "1.bias", "1.weight"]


def test_a_parameter_frozen_after_construction_is_not_watched(linear: nn.Linear) -> None:
    recorder = GradNormRecorder(linear)
    linear.bias.requires_grad_(False)  # register_hook would refuse it
    with recorder:
        backward(linear, [[3.0, 4.0]])
    assert recorder.last() == {"weight": 5.0}


def test_a_model_frozen_after_construction_is_refused_at_entry(linear: nn.Linear) -> None:
    recorder = GradNormRecorder(linear)
    linear.requires_grad_(False)
    with pytest.raises(ValueError, match="requires grad when the block starts"):
        recorder.__enter__()
    assert not recorder.active


def test_float16_norms_are_computed_in_float32() -> None:
    model = nn.Linear(2, 1, bias=False).half()
    with torch.no_grad():
        model.weight.zero_()
    with GradNormRecorder(model) as recorder:
        backward_half = torch.full((1, 2), 60000.0, dtype=torch.float16)
        model(backward_half).sum().backward()
    assert recorder.last()["weight"] == pytest.approx(60000 * 2**0.5)


def test_a_module_called_twice_gets_one_key_per_call() -> None:
    layer = nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        layer.weight.fill_(3.0)
    model = nn.Sequential(layer, layer)  # the same module twice
    with GradNormRecorder(model, modules=True) as recorder:
        backward(model, [[1.0]])
        backward(model, [[1.0]])
    # d(out)/d(first output) = 3, d(out)/d(second output) = 1; one entry per pass each
    assert recorder.output_norms == {"0": [3.0, 3.0], "0#2": [1.0, 1.0]}


@pytest.mark.parametrize("first", [nn.Identity(), nn.Dropout(0.5).eval()])
def test_a_leaf_output_gets_one_entry_per_backward_pass(first: nn.Module) -> None:
    # Identity, and Dropout in eval mode, return their input itself: a leaf whose hooks
    # outlive the graph, so a hook per forward pass would fire again in every later pass
    model = nn.Sequential(first, nn.Linear(2, 1))
    x = torch.tensor([[3.0, 4.0]], requires_grad=True)
    with torch.no_grad():
        model[1].weight.copy_(torch.tensor([[3.0, 4.0]]))
    with GradNormRecorder(model, modules=True) as recorder:
        for _ in range(3):
            model(x).sum().backward()
    assert recorder.output_norms == {"0": [5.0, 5.0, 5.0], "1": [1.0, 1.0, 1.0]}
    assert not x._backward_hooks  # removed on exit, as the parameters' hooks are


def test_a_copy_made_inside_the_block_records_nothing() -> None:
    import copy

    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    with GradNormRecorder(model, modules=True) as recorder:
        duplicate = copy.deepcopy(model)  # copies the forward hooks, not the tensor hooks
        duplicate(torch.ones(1, 2)).sum().backward()
    assert recorder.output_norms == {"0": [], "1": []}
    assert all(not norms for norms in recorder.parameter_norms.values())


def test_an_output_hook_of_an_earlier_block_records_nothing_in_a_later_one() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    recorder = GradNormRecorder(model, modules=True)
    with recorder:
        out = model(torch.ones(1, 2))  # its hooks stay on the graph after the block
    with recorder:
        out.sum().backward()
    assert recorder.output_norms == {"0": [], "1": []}
    assert recorder.parameter_norms["1.bias"] == [1.0]  # the parameters' hooks are new


def test_a_leaf_output_is_not_kept_alive_by_the_recorder() -> None:
    import weakref

    model = nn.Sequential(nn.Identity(), nn.Linear(2, 1))
    with torch.no_grad():
        model[1].weight.copy_(torch.tensor([[0.6, 0.8]]))
    with GradNormRecorder(model, modules=True) as recorder:
        for _ in range(2):  # a new input each step, as in a loop over batches
            x = torch.ones(1, 2, requires_grad=True)
            model(x).sum().backward()
            gone = weakref.ref(x)
            del x
            assert gone() is None
    assert recorder.output_norms["0"] == pytest.approx([1.0, 1.0])


@pytest.mark.parametrize("norm_type", [1, 2.0, math.inf])
def test_a_sparse_gradient_is_measured_like_its_dense_form(norm_type: float) -> None:
    # nn.Embedding(sparse=True) gives a sparse COO gradient, with index 1 twice (uncoalesced)
    embedding = nn.Embedding(4, 2, sparse=True)
    with GradNormRecorder(embedding, norm_type=norm_type) as recorder:
        embedding(torch.tensor([1, 1, 3])).sum().backward()
    assert embedding.weight.grad is not None
    assert embedding.weight.grad.is_sparse
    dense = torch.linalg.vector_norm(embedding.weight.grad.to_dense(), ord=norm_type)
    assert recorder.last()["weight"] == pytest.approx(float(dense))


class WithEmptyParameter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.empty = nn.Parameter(torch.zeros(0))  # such as a zero-width layer's weight
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.scale).sum() + self.empty.sum()


@pytest.mark.parametrize("norm_type", [1, 2.0, math.inf])
def test_an_empty_gradient_has_norm_zero(norm_type: float) -> None:
    # torch's inf norm refuses an empty tensor; the hook must not raise inside backward()
    model = WithEmptyParameter()
    with GradNormRecorder(model, norm_type=norm_type) as recorder:
        model(torch.tensor([3.0])).backward()
    assert recorder.last() == {"empty": 0.0, "scale": 3.0}


def test_norm_type_beyond_a_float_is_refused_and_infinity_is_taken() -> None:
    model = nn.Linear(2, 1)
    with pytest.raises(ValueError, match="within the range of a float"):
        GradNormRecorder(model, norm_type=10**400)
    with GradNormRecorder(model, norm_type=float("inf")) as recorder:
        model(torch.ones(1, 2)).sum().backward()
    assert list(recorder.parameter_norms) == ["weight", "bias"]
    assert recorder.parameter_norms["bias"] == [1.0]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("norm_type", [1e20, 1e39, 1e308, 10**308])
def test_a_huge_norm_type_gives_the_largest_magnitude(dtype: torch.dtype, norm_type: float) -> None:
    layer = nn.Linear(2, 1, bias=False).to(dtype)
    with GradNormRecorder(layer, norm_type=norm_type) as recorder:
        layer(torch.tensor([[3.0, -4.0]], dtype=dtype)).sum().backward()
    assert recorder.parameter_norms["weight"] == [4.0]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("norm_type", [1e17, 1e18])
def test_an_order_just_below_infinity_does_not_underflow(
    dtype: torch.dtype, norm_type: float
) -> None:
    layer = nn.Linear(2, 1, bias=False).to(dtype)
    with GradNormRecorder(layer, norm_type=norm_type) as recorder:
        layer(torch.tensor([[0.3, -0.4]], dtype=dtype)).sum().backward()
    assert layer.weight.grad is not None
    assert recorder.parameter_norms["weight"] == [float(layer.weight.grad.abs().max())]


def test_a_sum_of_powers_below_the_normal_range_is_rescaled() -> None:
    # float32: 0.004 ** 100 underflows to 0; (3e-23) ** 2 and (4e-23) ** 2 are subnormal
    for norm_type, values, expected in (
        (100.0, [0.003, 0.004], 0.004),
        (2.0, [3e-23, 4e-23], 5e-23),
    ):
        layer = nn.Linear(2, 1, bias=False)
        with GradNormRecorder(layer, norm_type=norm_type) as recorder:
            layer(torch.tensor([values])).sum().backward()
        assert recorder.parameter_norms["weight"][0] == pytest.approx(expected, rel=1e-6)


def test_a_zero_gradient_has_norm_zero() -> None:
    layer = nn.Linear(2, 1, bias=False)
    with GradNormRecorder(layer, norm_type=100.0) as recorder:
        layer(torch.zeros(1, 2)).sum().backward()
    assert recorder.parameter_norms["weight"] == [0.0]
