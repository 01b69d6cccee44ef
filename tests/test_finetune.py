"""ptnotes.finetune: freezing by name, swapping the head, per-group learning rates."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
from torch import nn

from ptnotes.finetune import freeze, param_groups, replace_head, unfreeze
from ptnotes.models import SmallCNN

ALL = [
    "features.0.weight",
    "features.0.bias",
    "features.3.weight",
    "features.3.bias",
    "fc.weight",
    "fc.bias",
]


@pytest.fixture
def model() -> SmallCNN:
    torch.manual_seed(0)
    return SmallCNN(num_classes=4)


def trainable(module: nn.Module) -> list[str]:
    return [name for name, p in module.named_parameters() if p.requires_grad]


# -- freeze / unfreeze ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (None, ALL),
        ("features.*", ALL[:4]),
        ("*.bias", ["features.0.bias", "features.3.bias", "fc.bias"]),
        ("fc.weight", ["fc.weight"]),
        ("features.[03].weight", ["features.0.weight", "features.3.weight"]),
    ],
    ids=["none", "prefix", "suffix", "exact", "character-class"],
)
def test_freeze_returns_the_names_it_froze(
    model: SmallCNN, pattern: str | None, expected: list[str]
) -> None:
    assert freeze(model, pattern) == expected
    assert trainable(model) == [name for name in ALL if name not in expected]


def test_freeze_accepts_a_predicate(model: SmallCNN) -> None:
    frozen = freeze(model, lambda name, p: p.ndim == 4)
    assert frozen == ["features.0.weight", "features.3.weight"]


def test_freeze_does_not_list_parameters_already_frozen(model: SmallCNN) -> None:
    freeze(model, "features.*")
    assert freeze(model) == ["fc.weight", "fc.bias"]


def test_unfreeze_undoes_freeze(model: SmallCNN) -> None:
    freeze(model)
    assert unfreeze(model, "fc.*") == ["fc.weight", "fc.bias"]
    assert trainable(model) == ["fc.weight", "fc.bias"]


def test_frozen_parameters_get_no_gradient(model: SmallCNN) -> None:
    freeze(model, "features.*")
    model(torch.randn(2, 3, 8, 8)).sum().backward()
    assert [name for name, p in model.named_parameters() if p.grad is not None] == [
        "fc.weight",
        "fc.bias",
    ]


def test_freeze_matching_is_case_sensitive(model: SmallCNN) -> None:
    with pytest.raises(ValueError, match=r"'FC\.\*', which matches nothing"):
        freeze(model, "FC.*")


@pytest.mark.parametrize("function", [freeze, unfreeze])
def test_freeze_rejects_pattern_that_matches_nothing(model: SmallCNN, function: Any) -> None:
    with pytest.raises(
        ValueError,
        match=r"\(features\.0\.weight, features\.0\.bias, .*\(1 more\)\), "
        r"got 'classifier\.\*', which matches nothing",
    ):
        function(model, "classifier.*")


def test_freeze_rejects_predicate_that_matches_nothing(model: SmallCNN) -> None:
    def never(name: str, parameter: nn.Parameter) -> bool:
        return False

    with pytest.raises(ValueError, match="got predicate never, which matches nothing"):
        freeze(model, never)


@pytest.mark.parametrize(
    ("module", "pattern", "error", "message"),
    [
        ("model", None, TypeError, r"freeze\(\) expects module to be a torch.nn.Module, got str"),
        (None, 3, TypeError, "pattern to be None, a str or a callable .* got int"),
        (None, "", ValueError, "non-empty pattern"),
    ],
    ids=["module-not-a-module", "pattern-int", "pattern-empty"],
)
def test_freeze_rejects_bad_arguments(
    model: SmallCNN, module: Any, pattern: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        freeze(model if module is None else module, pattern)


# -- replace_head -----------------------------------------------------------------------


def test_replace_head_returns_the_old_head_and_registers_the_new(model: SmallCNN) -> None:
    old, new = model.fc, nn.Linear(16, 7)
    assert replace_head(model, "fc", new) is old
    assert model.fc is new
    assert any(p is new.weight for p in model.parameters())
    assert model(torch.zeros(1, 3, 4, 4)).shape == (1, 7)


def test_replaced_head_is_trainable_after_freezing_the_model(model: SmallCNN) -> None:
    freeze(model)
    replace_head(model, "fc", nn.Linear(16, 2))
    assert trainable(model) == ["fc.weight", "fc.bias"]


def test_replace_head_follows_a_dotted_path(model: SmallCNN) -> None:
    old = replace_head(model, "features.3", nn.Conv2d(8, 16, 1))
    assert isinstance(old, nn.Conv2d)
    assert old.kernel_size == (3, 3)
    assert model.features[3].kernel_size == (1, 1)


@pytest.mark.parametrize("attr", ["head", "features.9", "missing.fc", ""])
def test_replace_head_rejects_missing_attribute(model: SmallCNN, attr: str) -> None:
    with pytest.raises(
        ValueError, match=rf"submodule of SmallCNN \(children: features, fc\), got str '{attr}'"
    ):
        replace_head(model, attr, nn.Identity())


@pytest.mark.parametrize(("attr", "kind"), [("num_classes", "int"), ("fc.weight", "Parameter")])
def test_replace_head_rejects_attribute_that_is_not_a_module(
    model: SmallCNN, attr: str, kind: str
) -> None:
    with pytest.raises(TypeError, match=f"only a module can be replaced.*'{attr}', a {kind}"):
        replace_head(model, attr, nn.Identity())


def test_replace_head_rejects_new_head_that_is_not_a_module(model: SmallCNN) -> None:
    with pytest.raises(TypeError, match=r"new_head to be a torch\.nn\.Module, got function"):
        replace_head(model, "fc", lambda x: x)  # type: ignore[arg-type]


class _LockedHead(nn.Module):
    """Registers an assigned head, then refuses it: its __setattr__ raises afterwards."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(2, 2)
        self.locked = True

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "head" and getattr(self, "locked", False):
            raise RuntimeError("head is locked")


class _WrappedHead(nn.Module):
    """Wraps every module assigned to head, so assignment never stores the module given."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(2, 2)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "head" and isinstance(value, nn.Module):
            value = nn.Sequential(value)
        super().__setattr__(name, value)


def test_replace_head_replaces_a_module_used_twice_under_the_name_given() -> None:
    # named_children() lists the shared module once, as "0"; "2" is registered all the same
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    new = nn.Linear(2, 2)
    assert replace_head(model, "2", new) is shared
    assert model[0] is shared
    assert model[2] is new


def test_replace_head_puts_the_old_head_back_when_assignment_raises() -> None:
    model = _LockedHead()
    old = model.head
    with pytest.raises(RuntimeError, match="head is locked"):
        replace_head(model, "head", nn.Linear(2, 3))
    assert model.head is old
    assert [name for name, _ in model.named_parameters()] == ["head.weight", "head.bias"]


def test_replace_head_refused_leaves_exactly_the_old_head() -> None:
    model = _WrappedHead()
    old = model.head  # Sequential(Linear)
    with pytest.raises(ValueError, match="does not let be replaced"):
        replace_head(model, "head", nn.Linear(2, 3))
    assert model.head is old  # not wrapped once more by the rollback


def test_unfreeze_refuses_an_inference_parameter_before_changing_anything() -> None:
    trainable_first = nn.Linear(2, 2)
    with torch.inference_mode():
        inference_made = nn.Linear(2, 2)  # its parameters are inference tensors
    model = nn.Sequential(trainable_first, inference_made)
    freeze(model)
    # torch itself raises RuntimeError at the second layer; the check names it first
    with pytest.raises(ValueError, match=r"'1\.weight', an inference tensor"):
        unfreeze(model)
    assert trainable(model) == []
    assert unfreeze(model, "0.*") == ["0.weight", "0.bias"]


def test_unfreeze_of_an_inference_model_not_frozen_changes_nothing_and_raises_nothing() -> None:
    with torch.inference_mode():
        served = nn.Linear(2, 2)  # its inference parameters require grad as built
    assert unfreeze(served) == []
    freeze(served)
    # the refusal names what torch refuses: making a frozen inference tensor require grad
    with pytest.raises(ValueError, match="not frozen inference tensors, which torch lets"):
        unfreeze(served)


def test_unfreeze_takes_an_inference_parameter_inside_inference_mode() -> None:
    with torch.inference_mode():
        served = nn.Linear(2, 2)
    freeze(served)
    with torch.inference_mode():
        assert unfreeze(served) == ["weight", "bias"]
    assert [p.requires_grad for p in served.parameters()] == [True, True]


def test_freeze_with_a_pattern_list_changes_nothing(model: SmallCNN) -> None:
    with pytest.raises(TypeError, match="None, a str or a callable"):
        freeze(model, ["fc.*", "no.such.*"])  # type: ignore[arg-type]
    assert trainable(model) == ALL


def tied() -> nn.Sequential:
    """An embedding and an output layer sharing one weight: one Parameter, two names."""
    model = nn.Sequential(nn.Embedding(4, 3), nn.Linear(3, 4, bias=False))
    model[1].weight = model[0].weight
    return model


@pytest.mark.parametrize("pattern", [None, "0.*", "1.*", "1.weight"])
def test_freeze_selects_a_tied_parameter_by_any_of_its_names_and_lists_them_all(
    pattern: str | None,
) -> None:
    # named_parameters() lists a tied parameter once, under its first name; the second
    # name must select it too, and the result must show that both names are now frozen
    model = tied()
    assert freeze(model, pattern) == ["0.weight", "1.weight"]
    assert not model[1].weight.requires_grad
    assert unfreeze(model, pattern) == ["0.weight", "1.weight"]
    assert model[0].weight.requires_grad


def test_freeze_predicate_sees_every_name_of_a_tied_parameter() -> None:
    model = tied()
    seen: list[str] = []
    assert freeze(model, lambda name, p: seen.append(name) or name == "1.weight") == [
        "0.weight",
        "1.weight",
    ]
    assert seen == ["0.weight", "1.weight"]


# -- param_groups -----------------------------------------------------------------------


def group_names(model: nn.Module, groups: list[dict[str, Any]]) -> list[list[str]]:
    names = {id(p): n for n, p in model.named_parameters()}
    return [[names[id(p)] for p in group["params"]] for group in groups]


@pytest.mark.parametrize(
    "spec",
    [
        {"fc.*": {"lr": 0.1}, "features.0.*": {"lr": 0.01}},
        [("fc.*", {"lr": 0.1}), ("features.0.*", {"lr": 0.01})],
    ],
    ids=["mapping", "pairs"],
)
def test_param_groups_puts_each_trainable_parameter_in_one_group(
    model: SmallCNN, spec: Any
) -> None:
    groups = param_groups(model, spec, default={"lr": 0.001})
    assert group_names(model, groups) == [ALL[4:], ALL[:2], ALL[2:4]]
    assert [g["lr"] for g in groups] == [0.1, 0.01, 0.001]


def test_param_groups_without_default_leaves_options_to_the_optimizer(model: SmallCNN) -> None:
    groups = param_groups(model, {"fc.*": {"lr": 0.5}})
    optimizer = torch.optim.SGD(groups, lr=0.01)
    assert [g["lr"] for g in optimizer.param_groups] == [0.5, 0.01]


def test_param_groups_leaves_frozen_parameters_out(model: SmallCNN) -> None:
    freeze(model, "features.0.*")
    groups = param_groups(model, {"fc.*": {}})
    assert group_names(model, groups) == [ALL[4:], ALL[2:4]]


def test_param_groups_omits_empty_default_group(model: SmallCNN) -> None:
    assert len(param_groups(model, {"*": {"lr": 1.0}})) == 1


def test_param_groups_apply_their_own_learning_rate(model: SmallCNN) -> None:
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.SGD(param_groups(model, {"fc.*": {"lr": 1.0}}, default={"lr": 0.0}))
    model(torch.randn(2, 3, 8, 8)).sum().backward()
    optimizer.step()
    moved = [n for n, p in model.named_parameters() if not torch.equal(p, before[n])]
    assert moved == ["fc.weight", "fc.bias"]


def test_param_groups_rejects_parameter_in_two_groups(model: SmallCNN) -> None:
    with pytest.raises(
        ValueError, match=r"at most once, got 'fc\.weight' in '\*\.weight' and 'fc\.\*'"
    ):
        param_groups(model, {"*.weight": {}, "fc.*": {}})


@pytest.mark.parametrize("make", [lambda: nn.Linear(2, 2), tied], ids=["linear", "tied"])
def test_param_groups_rejects_one_pattern_given_twice_in_a_sequence(make: Any) -> None:
    # two groups by position even when their patterns are the same string; without the
    # check both would hold the parameter and the optimizer's constructor would refuse them
    model = make()
    with pytest.raises(ValueError, match=r"at most once, got '[\w.]+' in '\*' and '\*'"):
        param_groups(model, [("*", {"lr": 0.1}), ("*", {"lr": 0.2})])


@pytest.mark.parametrize("pattern", ["0.*", "1.*", "1.weight", "*"])
def test_param_groups_selects_a_tied_parameter_by_any_of_its_names_once(pattern: str) -> None:
    # named_parameters() lists the tied weight once, as "0.weight"; "1.weight" must select
    # it too, and it must sit in its group once (an optimizer warns on a duplicate)
    model = tied()
    groups = param_groups(model, {pattern: {"lr": 0.1}}, default={"lr": 0.01})
    assert [len(g["params"]) for g in groups] == [1]
    assert groups[0]["params"][0] is model[0].weight
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.optim.SGD(groups, lr=1.0)


def test_param_groups_rejects_a_tied_parameter_selected_by_two_patterns() -> None:
    model = tied()
    with pytest.raises(ValueError, match=r"'0\.weight' in '0\.\*' and '1\.weight' in '1\.\*'"):
        param_groups(model, {"0.*": {"lr": 0.1}, "1.*": {"lr": 0.01}})


def test_param_groups_puts_an_unmatched_tied_parameter_in_the_default_group_once() -> None:
    # a module used twice: each of its parameters has two names ("0.*" and "2.*"), and
    # both names are unmatched; the default group must hold each parameter once
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.ReLU(), shared, nn.Linear(2, 1))
    groups = param_groups(model, {"3.*": {"lr": 0.1}}, default={"lr": 0.01})
    assert [len(g["params"]) for g in groups] == [2, 2]
    assert groups[1]["params"][0] is shared.weight
    assert groups[1]["params"][1] is shared.bias
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.optim.SGD(groups, lr=1.0)


class _TwoNames(nn.Module):
    """One Parameter registered under two names of the same module."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Parameter(torch.ones(2))
        self.b = self.a


def test_param_groups_takes_a_parameter_of_two_names_in_one_module_once() -> None:
    model = _TwoNames()
    assert [len(g["params"]) for g in param_groups(model, {"b": {"lr": 0.1}})] == [1]
    assert [len(g["params"]) for g in param_groups(model, {"?": {"lr": 0.1}})] == [1]
    with pytest.raises(ValueError, match=r"got 'a' in 'a' and 'b' in 'b'"):
        param_groups(model, {"a": {}, "b": {}})


def test_param_groups_for_lbfgs_takes_a_tied_parameter_by_its_second_name() -> None:
    model = tied()
    groups = param_groups(model, {"1.weight": {"lr": 0.5}}, optimizer=torch.optim.LBFGS)
    assert torch.optim.LBFGS(groups).param_groups[0]["lr"] == 0.5


def test_param_groups_rejects_frozen_parameter_in_a_group(model: SmallCNN) -> None:
    freeze(model, "fc.bias")
    with pytest.raises(ValueError, match=r"'fc\.bias' \(group 'fc\.\*'\), which is frozen"):
        param_groups(model, {"fc.*": {"lr": 0.1}})


def test_param_groups_rejects_pattern_that_matches_nothing(model: SmallCNN) -> None:
    with pytest.raises(ValueError, match=r"got 'head\.\*', which matches nothing"):
        param_groups(model, {"head.*": {"lr": 0.1}})


@pytest.mark.parametrize(
    ("groups", "default", "error", "message"),
    [
        (
            {"fc.*": {"params": []}},
            None,
            ValueError,
            "groups\\['fc.\\*'\\] to be optimizer options without 'params'",
        ),
        ({"fc.*": 0.1}, None, TypeError, "groups\\['fc.\\*'\\] to be a mapping"),
        ({"fc.*": {}}, 0.1, TypeError, "default to be a mapping .* got float"),
        ("fc.*", None, TypeError, "groups to be a mapping .* got str"),
        ([("fc.*",)], None, TypeError, "groups\\[0\\] to be a \\(pattern, options\\) pair"),
        ({3: {}}, None, TypeError, "a pattern of groups to be a str, got int"),
    ],
    ids=[
        "params-in-options",
        "options-float",
        "default-float",
        "groups-str",
        "short-pair",
        "pattern-int",
    ],
)
def test_param_groups_rejects_bad_arguments(
    model: SmallCNN, groups: Any, default: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        param_groups(model, groups, default=default)


@pytest.mark.parametrize(
    ("groups", "default"),
    [
        ({"fc.*": {"lr": 0.1}}, None),  # fc and the default group
        ({"fc.*": {"lr": 0.1}, "features.*": {}}, None),  # two patterns, all matched
        ({"fc.*": {}, "no.such.*": {}}, None),  # refused for LBFGS before matching
    ],
    ids=["pattern-and-default", "two-patterns", "two-patterns-one-unmatched"],
)
def test_param_groups_for_lbfgs_refuses_more_than_one_group(
    model: SmallCNN, groups: dict[str, dict[str, Any]], default: dict[str, Any] | None
) -> None:
    # LBFGS takes one parameter group only; its constructor raises on several, so the
    # groups built for it must be refused here, where the mistake is made
    with pytest.raises(ValueError, match="LBFGS, which takes a single parameter group"):
        param_groups(model, groups, default, optimizer=torch.optim.LBFGS)


def test_param_groups_for_lbfgs_builds_one_group_it_accepts(model: SmallCNN) -> None:
    groups = param_groups(model, {"*": {"lr": 0.5}}, optimizer=torch.optim.LBFGS)
    assert len(groups) == 1
    assert torch.optim.LBFGS(groups).param_groups[0]["lr"] == 0.5
    (only,) = param_groups(model, {}, default={"lr": 0.5}, optimizer=torch.optim.LBFGS)
    assert len(only["params"]) == len(ALL)
