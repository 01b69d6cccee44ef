"""Tests for ptnotes.init: type dispatch, the notes' class-name recipe, and where they differ."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from torch import nn

from ptnotes.init import classname_init, init_weights, string_dispatch_mismatches
from ptnotes.layers import ConvBNReLU

CONV_MODULES = [
    nn.Conv1d(4, 64, 3),
    nn.Conv2d(4, 64, 3),
    nn.Conv3d(4, 64, 3),
    nn.ConvTranspose1d(4, 64, 3),
    nn.ConvTranspose2d(4, 64, 3),
    nn.ConvTranspose3d(4, 64, 3),
]
BATCHNORM_MODULES = [nn.BatchNorm1d(8), nn.BatchNorm2d(8), nn.BatchNorm3d(8), nn.SyncBatchNorm(8)]


class ConvBlock(nn.Sequential):
    """A user container whose name contains 'Conv' but which has no weight."""


class Deconvolution(nn.ConvTranspose2d):
    """A transposed convolution whose name lacks the capital-C 'Conv'."""


class ConvLinear(nn.Linear):
    """A Linear whose name happens to contain 'Conv'."""


def fan_out(weight: torch.Tensor) -> int:
    """fan_out as kaiming_normal_ computes it: size(0) times the receptive field.

    For a transposed conv, size(0) is in_channels: torch does not swap the two fans.
    """
    return weight.shape[0] * math.prod(weight.shape[2:])


@pytest.mark.parametrize("conv", CONV_MODULES, ids=lambda m: type(m).__name__)
def test_init_weights_gives_conv_kaiming_normal_fan_out_and_zero_bias(conv: nn.Module) -> None:
    torch.manual_seed(0)
    init_weights(conv)
    expected_std = math.sqrt(2.0 / fan_out(conv.weight))
    assert conv.weight.std().item() == pytest.approx(expected_std, rel=0.15)
    assert torch.equal(conv.bias, torch.zeros_like(conv.bias))


def test_init_weights_gives_linear_xavier_uniform_and_zero_bias() -> None:
    linear = nn.Linear(30, 20)
    init_weights(linear)
    bound = math.sqrt(6.0 / (30 + 20))
    assert linear.weight.abs().max() <= bound
    assert linear.weight.abs().max() > bound / 2
    assert torch.equal(linear.bias, torch.zeros(20))


@pytest.mark.parametrize("bn", BATCHNORM_MODULES, ids=lambda m: type(m).__name__)
def test_init_weights_gives_batchnorm_ones_and_zeros(bn: nn.Module) -> None:
    with torch.no_grad():
        bn.weight.fill_(3.0)
        bn.bias.fill_(3.0)
    init_weights(bn)
    assert torch.equal(bn.weight, torch.ones(8))
    assert torch.equal(bn.bias, torch.zeros(8))


def test_init_weights_leaves_batchnorm_running_stats_alone() -> None:
    bn = nn.BatchNorm1d(3)
    bn(torch.randn(10, 3) + 5)
    running_mean = bn.running_mean.clone()
    init_weights(bn)
    assert torch.equal(bn.running_mean, running_mean)


def test_init_weights_gives_embedding_small_normal_and_zero_padding_row() -> None:
    torch.manual_seed(0)
    embedding = nn.Embedding(1000, 16, padding_idx=3)
    init_weights(embedding)
    assert embedding.weight.std().item() == pytest.approx(0.02, rel=0.1)
    assert torch.equal(embedding.weight[3], torch.zeros(16))


@pytest.mark.parametrize(
    "module", [nn.ReLU(), nn.LayerNorm(4), nn.Sequential()], ids=lambda m: type(m).__name__
)
def test_init_weights_leaves_other_modules_unchanged(module: nn.Module) -> None:
    before = {k: v.clone() for k, v in module.state_dict().items()}
    init_weights(module)
    after = module.state_dict()
    assert before.keys() == after.keys()
    assert all(torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize(
    "module",
    [nn.Conv2d(2, 2, 3, bias=False), nn.Linear(2, 2, bias=False), nn.BatchNorm2d(2, affine=False)],
    ids=["conv", "linear", "batchnorm"],
)
def test_init_weights_skips_a_missing_weight_or_bias(module: nn.Module) -> None:
    init_weights(module)


def test_init_weights_reaches_subclasses_whatever_their_name() -> None:
    deconvolution = Deconvolution(2, 2, 3)
    init_weights(deconvolution)
    assert torch.equal(deconvolution.bias, torch.zeros(2))


def test_init_weights_through_apply_visits_every_submodule() -> None:
    model = nn.Sequential(ConvBNReLU(2, 4), nn.Flatten(), nn.Linear(4, 2))
    model.apply(init_weights)
    assert torch.equal(model[0][1].weight, torch.ones(4))
    assert torch.equal(model[2].bias, torch.zeros(2))


def test_init_weights_keeps_parameters_leaves_without_grad_history() -> None:
    linear = nn.Linear(3, 3)
    init_weights(linear)
    assert linear.weight.is_leaf
    assert linear.weight.grad_fn is None
    assert linear.weight.requires_grad


def test_init_weights_raises_on_uninitialised_lazy_module() -> None:
    with pytest.raises(ValueError, match="got LazyConv2d with uninitialised"):
        init_weights(nn.LazyConv2d(4, 3))


def test_init_weights_works_on_a_lazy_module_after_its_first_forward() -> None:
    conv = nn.LazyConv2d(4, 3)
    conv(torch.zeros(1, 2, 5, 5))
    init_weights(conv)
    assert torch.equal(conv.bias, torch.zeros(4))


def test_classname_init_gives_conv_small_normal_and_keeps_conv_bias() -> None:
    torch.manual_seed(0)
    conv = nn.Conv2d(16, 16, 3)
    bias = conv.bias.clone()
    classname_init(conv)
    assert conv.weight.std().item() == pytest.approx(0.02, rel=0.1)
    assert torch.equal(conv.bias, bias)


def test_classname_init_gives_batchnorm_normal_around_one_and_zero_bias() -> None:
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(1000)
    classname_init(bn)
    assert bn.weight.mean().item() == pytest.approx(1.0, abs=0.01)
    assert bn.weight.std().item() == pytest.approx(0.02, rel=0.1)
    assert torch.equal(bn.bias, torch.zeros(1000))


@pytest.mark.parametrize(
    "module",
    [nn.Linear(4, 4), nn.Embedding(4, 4), Deconvolution(2, 2, 3)],
    ids=["Linear", "Embedding", "Deconvolution"],
)
def test_classname_init_leaves_modules_without_a_matching_name(module: nn.Module) -> None:
    weight = module.weight.clone()
    classname_init(module)
    assert torch.equal(module.weight, weight)


@pytest.mark.parametrize(
    "module",
    [ConvBlock(nn.ReLU()), ConvBNReLU(2, 2), nn.BatchNorm2d(2, affine=False), nn.LazyConv2d(2, 3)],
    ids=["ConvBlock", "ConvBNReLU", "BatchNorm2d-affine-False", "LazyConv2d"],
)
def test_classname_init_skips_a_matched_module_it_cannot_initialise(module: nn.Module) -> None:
    classname_init(module)


def test_classname_init_skips_a_parametrized_weight_without_reading_it() -> None:
    from torch.nn.utils.parametrizations import spectral_norm

    conv = spectral_norm(nn.Conv2d(2, 2, 3))  # training mode: a read runs a power iteration
    state = {key: value.clone() for key, value in conv.state_dict().items()}
    classname_init(conv)
    assert all(torch.equal(value, state[key]) for key, value in conv.state_dict().items())


def test_notes_recipe_crashes_on_a_container_named_conv() -> None:
    def notes_recipe(m: nn.Module) -> None:
        if type(m).__name__.find("Conv") != -1:
            m.weight.data.normal_(0.0, 0.02)

    with pytest.raises(AttributeError, match="'ConvBlock' object has no attribute 'weight'"):
        ConvBlock(nn.ReLU()).apply(notes_recipe)


def test_notes_recipe_on_a_lazy_conv_is_silently_lost_at_first_forward() -> None:
    conv = nn.LazyConv2d(64, 3)
    conv.weight.data.normal_(0.0, 0.02)  # no error, no effect
    conv(torch.zeros(1, 2, 5, 5))
    assert conv.weight.std().item() > 0.1  # torch's default (about 0.136 here), not 0.02


@pytest.mark.parametrize(
    ("module", "reason"),
    [
        (ConvBlock(nn.ReLU()), "name matches 'Conv' but there is no weight"),
        (ConvBNReLU(2, 2), "name matches 'Conv' but there is no weight"),
        (nn.BatchNorm2d(2, affine=False), "name matches 'BatchNorm' but weight is None"),
        (nn.LazyConv2d(2, 3), "name matches 'Conv' but weight is uninitialised (lazy)"),
        (nn.LazyBatchNorm1d(), "name matches 'BatchNorm' but weight is uninitialised (lazy)"),
        (nn.Linear(2, 2), "class-name rule: none; isinstance rule: Linear"),
        (nn.Embedding(2, 2), "class-name rule: none; isinstance rule: Embedding"),
        (Deconvolution(2, 2, 3), "class-name rule: none; isinstance rule: Conv"),
        (ConvLinear(2, 2), "class-name rule: Conv; isinstance rule: Linear"),
    ],
    ids=[
        "container-ConvBlock",
        "container-ConvBNReLU",
        "batchnorm-affine-False",
        "LazyConv2d",
        "LazyBatchNorm1d",
        "Linear",
        "Embedding",
        "Deconvolution",
        "ConvLinear",
    ],
)
def test_string_dispatch_mismatches_reports_each_disagreement(
    module: nn.Module, reason: str
) -> None:
    (mismatch,) = string_dispatch_mismatches(module)
    assert mismatch[:2] == ("", type(module).__name__)
    assert mismatch[2].startswith(reason)


@pytest.mark.parametrize(
    "module",
    [*CONV_MODULES, *BATCHNORM_MODULES, nn.ReLU(), nn.LayerNorm(3)],
    ids=lambda m: type(m).__name__,
)
def test_string_dispatch_mismatches_is_empty_where_the_rules_agree(module: nn.Module) -> None:
    assert string_dispatch_mismatches(module) == []


def test_string_dispatch_mismatches_names_submodules_in_order() -> None:
    model = nn.Sequential(ConvBNReLU(2, 4), nn.Flatten(), nn.Linear(4, 2))
    assert [(name, classname) for name, classname, _ in string_dispatch_mismatches(model)] == [
        ("0", "ConvBNReLU"),
        ("2", "Linear"),
    ]


def test_string_dispatch_mismatches_does_not_modify_the_model() -> None:
    model = nn.Sequential(nn.Conv2d(2, 2, 3), nn.Linear(2, 2))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    string_dispatch_mismatches(model)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


# -- bad inputs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("function", "name"),
    [
        (init_weights, "init_weights"),
        (classname_init, "classname_init"),
        (string_dispatch_mismatches, "string_dispatch_mismatches"),
    ],
)
@pytest.mark.parametrize(
    ("bad", "type_name"),
    [(nn.Linear, "type"), (torch.zeros(2), "Tensor"), ([nn.ReLU()], "list")],
    ids=["class-not-instance", "tensor", "list"],
)
def test_init_functions_reject_non_modules(
    function: object, name: str, bad: object, type_name: str
) -> None:
    assert callable(function)
    with pytest.raises(
        TypeError,
        match=rf"^{name}\(\) expects (module|model) to be a torch.nn.Module, got {type_name}\b",
    ):
        function(bad)


def test_init_weights_initialises_the_effective_weight_of_weight_norm() -> None:
    from torch.nn.utils.parametrizations import weight_norm

    torch.manual_seed(0)
    layer = weight_norm(nn.Linear(64, 64))
    init_weights(layer)
    bound = math.sqrt(6 / (64 + 64))  # xavier_uniform_, gain 1
    assert layer.weight.abs().max().item() <= bound
    assert layer.weight.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.1)
    assert layer.bias.abs().sum().item() == 0.0


def test_init_weights_refuses_a_parametrization_that_cannot_take_the_value() -> None:
    from torch.nn.utils.parametrizations import orthogonal

    with pytest.raises(ValueError, match=r"parametrization .* cannot"):
        init_weights(orthogonal(nn.Linear(4, 4)))


def test_init_weights_refuses_a_weight_computed_by_a_hook() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the hook API is deprecated
        layer = nn.utils.weight_norm(nn.Linear(4, 4))
    with pytest.raises(ValueError, match="weight is computed by a hook"):
        init_weights(layer)


@pytest.mark.parametrize("parametrization", ["spectral_norm", "weight_norm"])
def test_string_dispatch_mismatches_leaves_a_parametrized_module_as_it_was(
    parametrization: str,
) -> None:
    conv = getattr(nn.utils.parametrizations, parametrization)(nn.Conv2d(2, 4, 3))
    before = {k: v.clone() for k, v in conv.state_dict().items()}
    assert string_dispatch_mismatches(conv) == []
    after = conv.state_dict()
    assert before.keys() == after.keys()
    assert all(torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_init_weights_initialises_a_low_precision_weight_norm(dtype: torch.dtype) -> None:
    from torch.nn.utils.parametrizations import weight_norm

    torch.manual_seed(0)
    conv = weight_norm(nn.Conv2d(3, 8, 3)).to(dtype)
    init_weights(conv)  # the recomputed weight differs from the draw by its rounding only
    assert conv.weight.dtype == dtype
    assert conv.bias.abs().sum().item() == 0.0
    std = math.sqrt(2 / fan_out(conv.weight))
    assert conv.weight.float().std().item() == pytest.approx(std, rel=0.35)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_init_weights_still_refuses_a_low_precision_spectral_norm(dtype: torch.dtype) -> None:
    from torch.nn.utils.parametrizations import spectral_norm

    torch.manual_seed(0)
    layer = spectral_norm(nn.Linear(64, 64)).to(dtype)
    before = {k: v.clone() for k, v in layer.state_dict().items()}
    with pytest.raises(ValueError, match=r"parametrization .* cannot"):
        init_weights(layer)  # weight / sigma is not the draw, even to half precision
    assert all(torch.equal(v, before[k]) for k, v in layer.state_dict().items())


def test_init_weights_puts_back_a_hook_computed_weight_when_the_bias_is_refused() -> None:
    from torch.nn.utils import parametrize

    class Exp(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.exp()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the hook API is deprecated
        layer = nn.utils.weight_norm(nn.Linear(3, 3))
    with torch.no_grad():
        layer(torch.randn(1, 3))  # the hook's weight is now a plain tensor: it is written
    parametrize.register_parametrization(layer, "bias", Exp())  # cannot take zeros
    weight = layer.weight
    before = weight.clone()
    with pytest.raises(ValueError, match="bias can take"):
        init_weights(layer)
    assert layer.weight is weight
    assert torch.equal(layer.weight, before)


def test_init_weights_under_inference_mode_writes_a_normal_module() -> None:
    layer = nn.Linear(4, 4)
    with torch.inference_mode():
        init_weights(layer)
    assert layer.bias.abs().sum().item() == 0.0
    assert layer.weight.is_leaf
    assert layer.weight.requires_grad


def test_a_refused_init_weights_leaves_a_pending_backward_working() -> None:
    from torch.nn.utils.parametrizations import orthogonal

    torch.manual_seed(0)
    layer = orthogonal(nn.Linear(3, 3))
    loss = layer(torch.randn(2, 3)).pow(2).sum()  # saves the parametrization's tensors
    with pytest.raises(ValueError, match=r"parametrization .* cannot"):
        init_weights(layer)
    loss.backward()  # nothing was written back where nothing had changed
    assert layer.parametrizations.weight.original.grad is not None


def test_classname_init_draws_the_weight_of_a_batch_norm_whose_bias_is_none() -> None:
    recipe_target, safe = nn.BatchNorm2d(4), nn.BatchNorm2d(4)
    recipe_target.bias = None
    safe.bias = None
    recipe_target.weight.data.normal_(1.0, 0.02)  # the notes' recipe, BatchNorm branch: the
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'data'"):
        recipe_target.bias.data.fill_(0)  # weight is drawn, then the bias crashes
    classname_init(safe)
    assert safe.bias is None
    assert bool((safe.weight != 1).all())
    assert abs(safe.weight.mean().item() - 1.0) < 0.1


def test_string_dispatch_mismatches_reason_for_a_lazy_module_init_weights_does_not_match() -> None:
    from torch.nn.modules.lazy import LazyModuleMixin
    from torch.nn.parameter import UninitializedParameter

    class ConvMixer(LazyModuleMixin, nn.Module):  # name matches 'Conv'; no isinstance rule
        def __init__(self) -> None:
            super().__init__()
            self.weight = UninitializedParameter()

        def initialize_parameters(self, *args: object) -> None:
            pass

    module = ConvMixer()
    init_weights(module)  # no error: init_weights leaves it untouched
    ((_, _, reason),) = string_dispatch_mismatches(module)
    assert reason.endswith("the recipe has no effect and init_weights leaves it untouched")
    ((_, _, lazy_conv_reason),) = string_dispatch_mismatches(nn.LazyConv2d(2, 3))
    assert lazy_conv_reason.endswith("init_weights raises ValueError")


def test_init_weights_on_a_hook_weight_norm_after_an_inference_mode_forward() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hooked = torch.nn.utils.weight_norm(nn.Linear(3, 3))
    with torch.inference_mode():
        hooked(torch.ones(1, 3))
    assert hooked.weight.grad_fn is None  # no graph, and still not overwritten
    state = {k: v.clone() for k, v in hooked.state_dict().items()}
    weight = hooked.weight.clone()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        init_weights(hooked)
    assert torch.equal(hooked.weight, weight)
    assert all(torch.equal(v, state[k]) for k, v in hooked.state_dict().items())
