"""Unit tests of ptnotes.validation for cases its docstrings state and the code missed."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ptnotes.validation import check_number, check_optimizer_options


def _caller(options): ...


@pytest.mark.skipif(
    np.finfo(np.longdouble).max <= np.finfo(np.float64).max, reason="longdouble is a double here"
)
def test_check_number_refuses_a_numpy_scalar_beyond_a_float_even_with_finite_false():
    # the module: "a number [must fit] in a float"; float() of it gives inf
    big = np.longdouble("1e4000")
    with pytest.raises(ValueError, match=r"a number within the range of a float"):
        check_number(_caller, "x", big, finite=False)
    assert check_number(_caller, "x", np.longdouble("inf"), finite=False) == math.inf


@pytest.mark.parametrize(
    ("key", "value"),
    [("beta2_decay", 0.5), ("d", 0.5), ("eps", (None, -1e-3))],
)
def test_check_optimizer_options_refuses_what_adafactor_s_constructor_refuses(key, value):
    adafactor = getattr(torch.optim, "Adafactor", None)
    if adafactor is None:
        pytest.skip("no torch.optim.Adafactor in this release")
    with pytest.raises(ValueError, match=r"should be"):
        adafactor([torch.zeros(1, requires_grad=True)], **{key: value})
    with pytest.raises(ValueError, match=r"to be a value torch\.optim\.Adafactor accepts"):
        check_optimizer_options(_caller, "o", {key: value}, adafactor)


def test_check_optimizer_options_still_leaves_nesterov_to_the_optimizer():
    options = {"nesterov": True}
    assert check_optimizer_options(_caller, "o", options, torch.optim.SGD) == options


@pytest.mark.parametrize("nan", [torch.tensor(math.nan), torch.tensor([math.nan])])
def test_check_optimizer_options_refuses_a_nan_tensor_where_the_default_is_none(nan):
    with pytest.raises(ValueError, match=r"o\['max_eval'\] to be a number, not NaN"):
        check_optimizer_options(_caller, "o", {"max_eval": nan}, torch.optim.LBFGS)


def test_check_optimizer_options_refuses_what_muon_s_constructor_refuses_and_no_more():
    muon = getattr(torch.optim, "Muon", None)
    if muon is None:
        pytest.skip("no torch.optim.Muon in this release")
    assert check_optimizer_options(_caller, "o", {"ns_steps": 5}, muon) == {"ns_steps": 5}
    with pytest.raises(ValueError, match=r"to be a value torch\.optim\.Muon accepts"):
        check_optimizer_options(_caller, "o", {"adjust_lr_fn": "bogus"}, muon)
