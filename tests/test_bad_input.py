"""Bad input never gives a wrong answer: a table of inputs per public function of ptnotes.

Every row is either an input that must be refused with a clear error (the exception
type, and a message in the style of :mod:`ptnotes.validation` that names the caller and
the argument: ``"<caller>() expects <argument> to be ..."``), or an input that must give
the correct result. Row ids read ``<module>:<what is called>:<input>``, so
``pytest --collect-only -q tests/test_bad_input.py`` counts the rows per module.
"""

from __future__ import annotations

import datetime
import math
import pickle
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm
from torch.utils.data import ConcatDataset, Subset, TensorDataset

from ptnotes.checkpoint import load_checkpoint, save_checkpoint
from ptnotes.convert import to_numpy
from ptnotes.data import (
    BatchIndexSampler,
    ShardedIterableDataset,
    TensorBatchDataset,
    batched_loader,
)
from ptnotes.ddp_example import ddp_step, make_dataset, make_model
from ptnotes.distributed import WorkerError, find_free_port, run_parallel
from ptnotes.finetune import freeze, param_groups, replace_head, unfreeze
from ptnotes.functions import (
    ClampInPlace,
    RoundSTE,
    Sigmoid,
    Sort,
    clamp_,
    round_ste,
    sigmoid,
    sort,
)
from ptnotes.graph import graph_dot, graph_text, walk_graph
from ptnotes.hooks import GradNormRecorder
from ptnotes.init import classname_init, init_weights, string_dispatch_mismatches
from ptnotes.layers import ConvBNReLU, Linear
from ptnotes.models import SmallCNN
from ptnotes.reproducibility import MAX_GLOBAL_SEED, seed_everything, seed_worker, seeded_generator
from ptnotes.sequential import same_structure, sequential_from
from ptnotes.validation import (
    MAX_SEED,
    check_bool,
    check_choice,
    check_device,
    check_int,
    check_number,
    check_optimizer_options,
    check_seed,
)
from tests._state import GLOBAL_RNG

# -- the two kinds of row ---------------------------------------------------------------


@dataclass(frozen=True)
class Refused:
    """The call raises exactly ``error``, with a message naming ``caller`` and ``argument``."""

    error: type[Exception]
    caller: str
    argument: str
    fragment: str = ""


def refused(
    row: str,
    call: Callable[[], object],
    error: type[Exception],
    caller: str,
    argument: str,
    fragment: str = "",
) -> Any:
    return pytest.param(call, Refused(error, caller, argument, fragment), id=row)


def result(row: str, call: Callable[[], object], check: Callable[[Any], object]) -> Any:
    return pytest.param(call, check, id=row)


# -- shared set-up: each row builds its own objects, so rows are independent -------------


def cnn() -> SmallCNN:
    torch.manual_seed(0)
    return SmallCNN(num_classes=3)


def line() -> nn.Linear:
    """``y = w x`` with ``w = 0``: one SGD step on ``x = (1, 2), y = (2, 4)`` gives ``w = 1``."""
    model = nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(0.0)
    return model


def sgd(model: nn.Module) -> torch.optim.SGD:
    return torch.optim.SGD(model.parameters(), lr=0.1)


X = torch.tensor([[1.0], [2.0]])
Y = torch.tensor([[2.0], [4.0]])


def step(batch: Any = (X, Y), **kwargs: Any) -> float:
    model = line()
    return train_step_of(model, batch, **kwargs)


def train_step_of(model: nn.Module, batch: Any, **kwargs: Any) -> float:
    from ptnotes.training import train_step

    options: dict[str, Any] = {"loss_fn": nn.MSELoss(), **kwargs}
    if "optimizer" not in options:
        options["optimizer"] = sgd(model)
    return train_step(model, batch, options["loss_fn"], options["optimizer"], **_rest(options))


def accumulate(micro_batches: Any, **kwargs: Any) -> tuple[float, float]:
    from ptnotes.training import accumulate_step

    model = line()
    options: dict[str, Any] = {"loss_fn": nn.MSELoss(), "optimizer": sgd(model), **kwargs}
    loss = accumulate_step(
        model, micro_batches, options["loss_fn"], options["optimizer"], **_rest(options)
    )
    return loss, model.weight.item()


def _rest(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k not in ("loss_fn", "optimizer")}


def dataset(n: int = 3) -> TensorBatchDataset:
    return TensorBatchDataset(torch.arange(float(n)), torch.arange(n))


def batches(loader: Any) -> list[list[int]]:
    return [b.tolist() if isinstance(b, torch.Tensor) else b[1].tolist() for b in loader]


def graph() -> tuple[torch.Tensor, torch.Tensor]:
    w = torch.tensor(2.0, requires_grad=True)
    return w, (w * 3).exp()


def frozen_features() -> SmallCNN:
    model = cnn()
    freeze(model, "features.*")
    return model


def initialised_like_plain(make: Callable[[nn.Linear], nn.Module]) -> bool:
    """``init_weights`` gives a parametrized layer the effective weight a plain one gets."""
    torch.manual_seed(0)
    plain = nn.Linear(3, 4)
    parametrized = make(nn.Linear(3, 4))
    torch.manual_seed(1)
    init_weights(plain)
    torch.manual_seed(1)
    init_weights(parametrized)
    weight = getattr(parametrized, "weight")  # noqa: B009  # computed at every access
    return torch.allclose(weight, plain.weight, atol=1e-6) and bool(
        (getattr(parametrized, "bias") == 0).all()  # noqa: B009
    )


def hook_weight_norm() -> nn.Module:
    """A layer under the deprecated, hook-based ``torch.nn.utils.weight_norm``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return nn.utils.weight_norm(nn.Linear(3, 4))


def checkpoint_file(**extra: Any) -> str:
    model = nn.Linear(1, 1)
    path = str(Path(tempfile.mkdtemp()) / "ckpt.pt")
    save_checkpoint(path, model, sgd(model), **extra)
    return path


def not_a_checkpoint() -> str:
    path = str(Path(tempfile.mkdtemp()) / "other.pt")
    torch.save({"weights": torch.zeros(1)}, path)
    return path


def top_level(rank: int, world_size: int) -> int:
    """A function run_parallel could run (it is never started here)."""
    return rank


def no_params() -> nn.Module:
    return nn.ReLU()


def _f() -> None:
    """The caller named by the validation rows."""


# -- ptnotes.convert --------------------------------------------------------------------

TENSOR = torch.tensor([1.0, 2.0])
CONVERT_REFUSED = [
    refused(
        "convert:to_numpy:tensor=list", lambda: to_numpy([1.0]), TypeError, "to_numpy", "tensor"
    ),
    refused(
        "convert:to_numpy:tensor=None", lambda: to_numpy(None), TypeError, "to_numpy", "tensor"
    ),
    refused(
        "convert:to_numpy:copy='no'",
        lambda: to_numpy(TENSOR, copy="no"),
        TypeError,
        "to_numpy",
        "copy",
        "got str 'no'",
    ),
    refused(
        "convert:to_numpy:copy=1", lambda: to_numpy(TENSOR, copy=1), TypeError, "to_numpy", "copy"
    ),
    refused(
        "convert:to_numpy:sparse",
        lambda: to_numpy(TENSOR.to_sparse()),
        ValueError,
        "to_numpy",
        "tensor",
        "sparse_coo",
    ),
    refused(
        "convert:to_numpy:bfloat16",
        lambda: to_numpy(TENSOR.bfloat16()),
        ValueError,
        "to_numpy",
        "tensor",
        "bfloat16",
    ),
    refused(
        "convert:to_numpy:meta",
        lambda: to_numpy(torch.empty(2, device="meta")),
        ValueError,
        "to_numpy",
        "tensor",
        "meta",
    ),
]
CONVERT_RESULTS = [
    result(
        "convert:to_numpy:requires_grad",
        lambda: to_numpy(torch.ones(2, requires_grad=True)),
        lambda a: a.tolist() == [1.0, 1.0],
    ),
    result(
        "convert:to_numpy:copy=True",
        lambda: (TENSOR, to_numpy(TENSOR, copy=True)),
        lambda r: not np.shares_memory(r[1], r[0].numpy()),
    ),
    result(
        "convert:to_numpy:copy=False-shares",
        lambda: (TENSOR, to_numpy(TENSOR)),
        lambda r: np.shares_memory(r[1], r[0].numpy()),
    ),
    result(
        "convert:to_numpy:conj-view",
        lambda: to_numpy(torch.tensor([1 + 2j]).conj()),
        lambda a: a.tolist() == [1 - 2j],
    ),
    result(
        "convert:to_numpy:neg-view",
        lambda: to_numpy(torch.tensor([1 + 2j]).conj().imag),
        lambda a: a.tolist() == [-2.0],
    ),
    result(
        "convert:to_numpy:0-dim",
        lambda: to_numpy(torch.tensor(3)),
        lambda a: a.shape == () and a.item() == 3,
    ),
]

# -- ptnotes.layers ---------------------------------------------------------------------

LAYERS_REFUSED = [
    refused(
        "layers:Linear:in_features='3'", lambda: Linear("3", 2), TypeError, "Linear", "in_features"
    ),
    refused(
        "layers:Linear:in_features=True",
        lambda: Linear(True, 2),
        TypeError,
        "Linear",
        "in_features",
    ),
    refused(
        "layers:Linear:in_features=0",
        lambda: Linear(0, 2),
        ValueError,
        "Linear",
        "in_features",
        ">= 1",
    ),
    refused(
        "layers:Linear:out_features=2.0",
        lambda: Linear(3, 2.0),
        TypeError,
        "Linear",
        "out_features",
    ),
    refused(
        "layers:Linear:out_features=-1", lambda: Linear(3, -1), ValueError, "Linear", "out_features"
    ),
    refused(
        "layers:Linear:bias='False'",
        lambda: Linear(3, 2, bias="False"),
        TypeError,
        "Linear",
        "bias",
    ),
    refused("layers:Linear:bias=1", lambda: Linear(3, 2, bias=1), TypeError, "Linear", "bias"),
    refused(
        "layers:Linear:dtype='float32'",
        lambda: Linear(3, 2, dtype="float32"),
        TypeError,
        "Linear",
        "dtype",
    ),
    refused(
        "layers:Linear:dtype=int64",
        lambda: Linear(3, 2, dtype=torch.int64),
        ValueError,
        "Linear",
        "dtype",
        "floating",
    ),
    refused(
        "layers:Linear:device=1.5", lambda: Linear(3, 2, device=1.5), TypeError, "Linear", "device"
    ),
    refused(
        "layers:Linear:device='gpu'",
        lambda: Linear(3, 2, device="gpu"),
        ValueError,
        "Linear",
        "device",
        "'gpu'",
    ),
    refused(
        "layers:ConvBNReLU:in_channels=0",
        lambda: ConvBNReLU(0, 2),
        ValueError,
        "ConvBNReLU",
        "in_channels",
    ),
    refused(
        "layers:ConvBNReLU:out_channels=None",
        lambda: ConvBNReLU(1, None),
        TypeError,
        "ConvBNReLU",
        "out_channels",
    ),
    refused(
        "layers:ConvBNReLU:kernel_size=3.0",
        lambda: ConvBNReLU(1, 2, kernel_size=3.0),
        TypeError,
        "ConvBNReLU",
        "kernel_size",
    ),
    refused(
        "layers:ConvBNReLU:stride=True",
        lambda: ConvBNReLU(1, 2, stride=True),
        TypeError,
        "ConvBNReLU",
        "stride",
    ),
    refused(
        "layers:ConvBNReLU:stride=0",
        lambda: ConvBNReLU(1, 2, stride=0),
        ValueError,
        "ConvBNReLU",
        "stride",
    ),
    refused(
        "layers:ConvBNReLU:padding=-1",
        lambda: ConvBNReLU(1, 2, padding=-1),
        ValueError,
        "ConvBNReLU",
        "padding",
    ),
    refused(
        "layers:ConvBNReLU:padding='same'",
        lambda: ConvBNReLU(1, 2, padding="same"),
        TypeError,
        "ConvBNReLU",
        "padding",
    ),
]
LAYERS_RESULTS = [
    result("layers:Linear:bias=False", lambda: Linear(3, 2, bias=False), lambda m: m.bias is None),
    result(
        "layers:Linear:device='cpu'",
        lambda: Linear(3, 2, device="cpu"),
        lambda m: m.weight.device.type == "cpu",
    ),
    result(
        "layers:Linear:dtype=float64",
        lambda: Linear(3, 2, dtype=torch.float64),
        lambda m: m.weight.dtype == torch.float64,
    ),
    result(
        "layers:Linear:forward", lambda: Linear(3, 2)(torch.ones(4, 3)).shape, lambda s: s == (4, 2)
    ),
    result(
        "layers:ConvBNReLU:default-padding",
        lambda: ConvBNReLU(3, 8)(torch.zeros(2, 3, 5, 5)).shape,
        lambda s: s == (2, 8, 5, 5),
    ),
    result(
        "layers:ConvBNReLU:padding=0",
        lambda: ConvBNReLU(3, 8, padding=0)(torch.zeros(2, 3, 5, 5)).shape,
        lambda s: s == (2, 8, 3, 3),
    ),
]

# -- ptnotes.functions ------------------------------------------------------------------

V = torch.tensor([-2.0, 0.5, 2.0])
FUNCTIONS_REFUSED = [
    refused("functions:sigmoid:x=list", lambda: sigmoid([1.0]), TypeError, "sigmoid", "x"),
    refused(
        "functions:sigmoid:x=int-tensor",
        lambda: sigmoid(torch.tensor([1])),
        TypeError,
        "sigmoid",
        "x",
        "floating",
    ),
    refused("functions:round_ste:x='x'", lambda: round_ste("x"), TypeError, "round_ste", "x"),
    refused(
        "functions:round_ste:x=complex",
        lambda: round_ste(torch.tensor([1 + 1j])),
        TypeError,
        "round_ste",
        "x",
    ),
    refused(
        "functions:sort:x=int-tensor", lambda: sort(torch.tensor([2, 1])), TypeError, "sort", "x"
    ),
    refused(
        "functions:sort:dim=1-of-1-D", lambda: sort(V, 1), ValueError, "sort", "dim", "[-1, 0]"
    ),
    refused("functions:sort:dim=True", lambda: sort(V, True), TypeError, "sort", "dim"),
    refused("functions:sort:dim=0.0", lambda: sort(V, 0.0), TypeError, "sort", "dim"),
    refused(
        "functions:sort:descending='yes'",
        lambda: sort(V, descending="yes"),
        TypeError,
        "sort",
        "descending",
    ),
    refused(
        "functions:sort:descending=1",
        lambda: sort(V, descending=1),
        TypeError,
        "sort",
        "descending",
    ),
    refused(
        "functions:clamp_:min=nan",
        lambda: clamp_(V.clone(), math.nan, 1.0),
        ValueError,
        "clamp_",
        "min",
        "NaN",
    ),
    refused(
        "functions:clamp_:max=nan",
        lambda: clamp_(V.clone(), 0.0, math.nan),
        ValueError,
        "clamp_",
        "max",
        "NaN",
    ),
    refused(
        "functions:clamp_:min='0'", lambda: clamp_(V.clone(), "0", 1.0), TypeError, "clamp_", "min"
    ),
    refused(
        "functions:clamp_:min=False",
        lambda: clamp_(V.clone(), False, 1.0),
        TypeError,
        "clamp_",
        "min",
    ),
    refused(
        "functions:clamp_:max=tensor",
        lambda: clamp_(V.clone(), 0.0, torch.tensor(1.0)),
        TypeError,
        "clamp_",
        "max",
    ),
    refused(
        "functions:clamp_:max<min",
        lambda: clamp_(V.clone(), 1.0, 0.0),
        ValueError,
        "clamp_",
        "max",
        ">= min",
    ),
    refused(
        "functions:clamp_:x=int-tensor",
        lambda: clamp_(torch.tensor([1, 2]), 0, 1),
        TypeError,
        "clamp_",
        "x",
    ),
    refused(
        "functions:clamp_:x=leaf-requiring-grad",
        lambda: clamp_(torch.ones(2, requires_grad=True), 0, 1),
        ValueError,
        "clamp_",
        "x",
        "leaf",
    ),
]
FUNCTIONS_RESULTS = [
    result(
        "functions:sigmoid:zero", lambda: sigmoid(torch.zeros(1)), lambda y: y.tolist() == [0.5]
    ),
    result(
        "functions:Sigmoid.apply",
        lambda: Sigmoid.apply(torch.zeros(1)),
        lambda y: y.tolist() == [0.5],
    ),
    result(
        "functions:round_ste:halves-to-even",
        lambda: round_ste(torch.tensor([0.4, 1.5, 2.5])),
        lambda y: y.tolist() == [0.0, 2.0, 2.0],
    ),
    result(
        "functions:RoundSTE.apply",
        lambda: RoundSTE.apply(torch.tensor([0.6])),
        lambda y: y.tolist() == [1.0],
    ),
    result(
        "functions:sort:descending",
        lambda: sort(torch.tensor([3.0, 1.0, 2.0]), descending=True),
        lambda r: r[0].tolist() == [3.0, 2.0, 1.0] and r[1].tolist() == [0, 2, 1],
    ),
    result(
        "functions:sort:0-dim", lambda: sort(torch.tensor(3.0), 0), lambda r: r[0].item() == 3.0
    ),
    result(
        "functions:Sort.apply",
        lambda: Sort.apply(torch.tensor([2.0, 1.0]), 0, False),
        lambda r: r[0].tolist() == [1.0, 2.0],
    ),
    result(
        "functions:clamp_:min=-inf",
        lambda: clamp_(V.clone(), -math.inf, 1.0),
        lambda y: y.tolist() == [-2.0, 0.5, 1.0],
    ),
    result(
        "functions:clamp_:float16-max=1e6",
        lambda: clamp_(torch.tensor([1.0, -7e4], dtype=torch.float16), -1e6, 1e6),
        lambda y: y.tolist() == [1.0, -math.inf],
    ),
    result(
        "functions:clamp_:int-bounds",
        lambda: clamp_(V.clone(), 0, 1),
        lambda y: y.tolist() == [0.0, 0.5, 1.0],
    ),
    result(
        "functions:ClampInPlace.apply",
        lambda: ClampInPlace.apply(V.clone(), 0.0, 1.0),
        lambda y: y.tolist() == [0.0, 0.5, 1.0],
    ),
]

# -- ptnotes.sequential -----------------------------------------------------------------

RELU = nn.ReLU()
SEQUENTIAL_REFUSED = [
    refused(
        "sequential:sequential_from:layers=dict",
        lambda: sequential_from({"a": RELU}, "positional"),
        TypeError,
        "sequential_from",
        "layers",
    ),
    refused(
        "sequential:sequential_from:layers=str",
        lambda: sequential_from("ab", "positional"),
        TypeError,
        "sequential_from",
        "layers",
    ),
    refused(
        "sequential:sequential_from:layers=[module]",
        lambda: sequential_from([RELU], "positional"),
        TypeError,
        "sequential_from",
        "layers[0]",
    ),
    refused(
        "sequential:sequential_from:name=1",
        lambda: sequential_from([(1, RELU)], "positional"),
        TypeError,
        "sequential_from",
        "the name of layers[0]",
    ),
    refused(
        "sequential:sequential_from:module='relu'",
        lambda: sequential_from([("a", "relu")], "positional"),
        TypeError,
        "sequential_from",
        "the module of layers[0]",
    ),
    refused(
        "sequential:sequential_from:name-repeated",
        lambda: sequential_from([("a", RELU), ("a", nn.Tanh())], "ordered_dict"),
        ValueError,
        "sequential_from",
        "the name of layers[1]",
        "not used before",
    ),
    refused(
        "sequential:sequential_from:name-with-dot",
        lambda: sequential_from([("a.b", RELU)], "add_module"),
        ValueError,
        "sequential_from",
        "the name of layers[0]",
    ),
    refused(
        "sequential:sequential_from:name=''",
        lambda: sequential_from([("", RELU)], "positional"),
        ValueError,
        "sequential_from",
        "the name of layers[0]",
    ),
    refused(
        "sequential:sequential_from:style='dict'",
        lambda: sequential_from([("a", RELU)], "dict"),
        ValueError,
        "sequential_from",
        "style",
    ),
    refused(
        "sequential:sequential_from:style=1",
        lambda: sequential_from([("a", RELU)], 1),
        TypeError,
        "sequential_from",
        "style",
    ),
    refused(
        "sequential:same_structure:a='a'",
        lambda: same_structure("a", RELU),
        TypeError,
        "same_structure",
        "a",
    ),
    refused(
        "sequential:same_structure:b=None",
        lambda: same_structure(RELU, None),
        TypeError,
        "same_structure",
        "b",
    ),
    refused(
        "sequential:same_structure:ignore_names='no'",
        lambda: same_structure(RELU, RELU, ignore_names="no"),
        TypeError,
        "same_structure",
        "ignore_names",
    ),
    refused(
        "sequential:same_structure:ignore_names=0",
        lambda: same_structure(RELU, RELU, ignore_names=0),
        TypeError,
        "same_structure",
        "ignore_names",
    ),
]
PAIRS = [("conv1", nn.Conv2d(1, 2, 3)), ("relu1", nn.ReLU())]
SEQUENTIAL_RESULTS = [
    result(
        "sequential:sequential_from:empty",
        lambda: sequential_from([], "positional"),
        lambda s: len(s) == 0,
    ),
    result(
        "sequential:sequential_from:positional",
        lambda: sequential_from(PAIRS, "positional"),
        lambda s: list(s.state_dict()) == ["0.weight", "0.bias"],
    ),
    result(
        "sequential:sequential_from:ordered_dict",
        lambda: sequential_from(PAIRS, "ordered_dict"),
        lambda s: list(s.state_dict()) == ["conv1.weight", "conv1.bias"],
    ),
    result(
        "sequential:same_structure:names-differ",
        lambda: same_structure(
            sequential_from(PAIRS, "positional"), sequential_from(PAIRS, "add_module")
        ),
        lambda r: r is False,
    ),
    result(
        "sequential:same_structure:ignore_names",
        lambda: same_structure(
            sequential_from(PAIRS, "positional"),
            sequential_from(PAIRS, "add_module"),
            ignore_names=True,
        ),
        lambda r: r is True,
    ),
]

# -- ptnotes.init -----------------------------------------------------------------------

INIT_REFUSED = [
    refused(
        "init:init_weights:module='m'",
        lambda: init_weights("m"),
        TypeError,
        "init_weights",
        "module",
    ),
    refused(
        "init:init_weights:lazy",
        lambda: init_weights(nn.LazyLinear(3)),
        ValueError,
        "init_weights",
        "module",
        "lazy",
    ),
    refused(
        "init:init_weights:orthogonal",
        lambda: init_weights(orthogonal(nn.Linear(4, 4))),
        ValueError,
        "init_weights",
        "module",
        "_Orthogonal",
    ),
    refused(
        "init:init_weights:spectral_norm",
        lambda: init_weights(spectral_norm(nn.Linear(3, 4))),
        ValueError,
        "init_weights",
        "module",
        "_SpectralNorm",
    ),
    refused(
        "init:init_weights:old-hook-weight_norm",
        lambda: init_weights(hook_weight_norm()),
        ValueError,
        "init_weights",
        "module",
        "hook",
    ),
    refused(
        "init:classname_init:module=None",
        lambda: classname_init(None),
        TypeError,
        "classname_init",
        "module",
    ),
    refused(
        "init:string_dispatch_mismatches:model='m'",
        lambda: string_dispatch_mismatches("m"),
        TypeError,
        "string_dispatch_mismatches",
        "model",
    ),
]


def _initialised(module: nn.Module) -> nn.Module:
    init_weights(module)
    return module


def _classname_initialised(module: nn.Module) -> nn.Module:
    classname_init(module)
    return module


INIT_RESULTS = [
    result(
        "init:init_weights:weight_norm", lambda: initialised_like_plain(weight_norm), lambda ok: ok
    ),
    result(
        "init:init_weights:conv-bias-zero",
        lambda: _initialised(nn.Conv2d(1, 2, 3)),
        lambda m: bool((m.bias == 0).all()),
    ),
    result(
        "init:init_weights:batchnorm",
        lambda: _initialised(nn.BatchNorm2d(2)),
        lambda m: m.weight.tolist() == [1.0, 1.0],
    ),
    result(
        "init:init_weights:embedding-padding",
        lambda: _initialised(nn.Embedding(4, 2, padding_idx=1)),
        lambda m: m.weight[1].tolist() == [0.0, 0.0],
    ),
    result(
        "init:init_weights:no-rule",
        lambda: _initialised(nn.ReLU()),
        lambda m: isinstance(m, nn.ReLU),
    ),
    result(
        "init:classname_init:affine=False",
        lambda: _classname_initialised(nn.BatchNorm2d(2, affine=False)),
        lambda m: m.weight is None,
    ),
    result(
        "init:classname_init:container",
        lambda: _classname_initialised(ConvBNReLU(1, 2)),
        lambda m: isinstance(m, ConvBNReLU),
    ),
    result(
        "init:string_dispatch_mismatches:linear",
        lambda: string_dispatch_mismatches(nn.Linear(1, 1)),
        lambda r: len(r) == 1,
    ),
    result(
        "init:string_dispatch_mismatches:conv",
        lambda: string_dispatch_mismatches(nn.Conv2d(1, 1, 1)),
        lambda r: r == [],
    ),
]

# -- ptnotes.data -----------------------------------------------------------------------

DATA_REFUSED = [
    refused(
        "data:TensorBatchDataset:no-tensor",
        lambda: TensorBatchDataset(),
        ValueError,
        "TensorBatchDataset",
        "tensors",
    ),
    refused(
        "data:TensorBatchDataset:tensors[0]=list",
        lambda: TensorBatchDataset([1, 2]),
        TypeError,
        "TensorBatchDataset",
        "tensors[0]",
    ),
    refused(
        "data:TensorBatchDataset:0-dim",
        lambda: TensorBatchDataset(torch.tensor(1.0)),
        ValueError,
        "TensorBatchDataset",
        "tensors[0]",
    ),
    refused(
        "data:TensorBatchDataset:sizes-differ",
        lambda: TensorBatchDataset(torch.zeros(3), torch.zeros(2)),
        ValueError,
        "TensorBatchDataset",
        "tensors",
        "[3, 2]",
    ),
    refused(
        "data:TensorBatchDataset.__getitem__:index=1.5",
        lambda: dataset()[1.5],
        TypeError,
        "TensorBatchDataset.__getitem__",
        "index",
    ),
    refused(
        "data:TensorBatchDataset.__getitem__:index=True",
        lambda: dataset()[True],
        TypeError,
        "TensorBatchDataset.__getitem__",
        "index",
    ),
    refused(
        "data:TensorBatchDataset.__getitem__:bool-mask",
        lambda: dataset()[torch.tensor([True, False, True])],
        ValueError,
        "TensorBatchDataset.__getitem__",
        "index",
        "torch.bool",
    ),
    refused(
        "data:TensorBatchDataset.__getitem__:0-dim-tensor",
        lambda: dataset()[torch.tensor(1)],
        ValueError,
        "TensorBatchDataset.__getitem__",
        "index",
        "ndim=0",
    ),
    refused(
        "data:TensorBatchDataset.__getitem__:['a']",
        lambda: dataset()[["a"]],
        TypeError,
        "TensorBatchDataset.__getitem__",
        "index[0]",
    ),
    refused(
        "data:TensorBatchDataset.__getitems__:indices='01'",
        lambda: dataset().__getitems__("01"),
        TypeError,
        "TensorBatchDataset.__getitems__",
        "indices",
    ),
    refused(
        "data:TensorBatchDataset.__getitems__:[0.0]",
        lambda: dataset().__getitems__([0.0]),
        TypeError,
        "TensorBatchDataset.__getitems__",
        "indices[0]",
    ),
    refused(
        "data:BatchIndexSampler:data_source=3.0",
        lambda: BatchIndexSampler(3.0, 2),
        TypeError,
        "BatchIndexSampler",
        "data_source",
    ),
    refused(
        "data:BatchIndexSampler:data_source=-1",
        lambda: BatchIndexSampler(-1, 2),
        ValueError,
        "BatchIndexSampler",
        "data_source",
    ),
    refused(
        "data:BatchIndexSampler:batch_size=0",
        lambda: BatchIndexSampler(4, 0),
        ValueError,
        "BatchIndexSampler",
        "batch_size",
    ),
    refused(
        "data:BatchIndexSampler:batch_size='2'",
        lambda: BatchIndexSampler(4, "2"),
        TypeError,
        "BatchIndexSampler",
        "batch_size",
    ),
    refused(
        "data:BatchIndexSampler:shuffle='no'",
        lambda: BatchIndexSampler(4, 2, shuffle="no"),
        TypeError,
        "BatchIndexSampler",
        "shuffle",
    ),
    refused(
        "data:BatchIndexSampler:shuffle=1",
        lambda: BatchIndexSampler(4, 2, shuffle=1),
        TypeError,
        "BatchIndexSampler",
        "shuffle",
    ),
    refused(
        "data:BatchIndexSampler:drop_last='False'",
        lambda: BatchIndexSampler(4, 2, drop_last="False"),
        TypeError,
        "BatchIndexSampler",
        "drop_last",
    ),
    refused(
        "data:BatchIndexSampler:generator='g'",
        lambda: BatchIndexSampler(4, 2, generator="g"),
        TypeError,
        "BatchIndexSampler",
        "generator",
    ),
    refused(
        "data:BatchIndexSampler:generator-with-2-replicas",
        lambda: BatchIndexSampler(4, 2, generator=torch.Generator(), num_replicas=2),
        ValueError,
        "BatchIndexSampler",
        "generator",
    ),
    refused(
        "data:BatchIndexSampler:num_replicas=0",
        lambda: BatchIndexSampler(4, 2, num_replicas=0),
        ValueError,
        "BatchIndexSampler",
        "num_replicas",
    ),
    refused(
        "data:BatchIndexSampler:rank=2-of-2",
        lambda: BatchIndexSampler(4, 2, num_replicas=2, rank=2),
        ValueError,
        "BatchIndexSampler",
        "rank",
        "[0, 1]",
    ),
    refused(
        "data:BatchIndexSampler:rank='0'",
        lambda: BatchIndexSampler(4, 2, rank="0"),
        TypeError,
        "BatchIndexSampler",
        "rank",
    ),
    refused(
        "data:BatchIndexSampler:seed=2**64",
        lambda: BatchIndexSampler(4, 2, seed=2**64),
        ValueError,
        "BatchIndexSampler",
        "seed",
    ),
    refused(
        "data:BatchIndexSampler:seed=-1",
        lambda: BatchIndexSampler(4, 2, seed=-1),
        ValueError,
        "BatchIndexSampler",
        "seed",
    ),
    refused(
        "data:BatchIndexSampler:seed=1.0",
        lambda: BatchIndexSampler(4, 2, seed=1.0),
        TypeError,
        "BatchIndexSampler",
        "seed",
    ),
    refused(
        "data:BatchIndexSampler:seed=True",
        lambda: BatchIndexSampler(4, 2, seed=True),
        TypeError,
        "BatchIndexSampler",
        "seed",
    ),
    refused(
        "data:BatchIndexSampler.set_epoch:epoch=-1",
        lambda: BatchIndexSampler(4, 2).set_epoch(-1),
        ValueError,
        "BatchIndexSampler.set_epoch",
        "epoch",
    ),
    refused(
        "data:BatchIndexSampler.set_epoch:epoch='1'",
        lambda: BatchIndexSampler(4, 2).set_epoch("1"),
        TypeError,
        "BatchIndexSampler.set_epoch",
        "epoch",
    ),
    refused(
        "data:BatchIndexSampler.set_epoch:epoch=2**64",
        lambda: BatchIndexSampler(4, 2).set_epoch(2**64),
        ValueError,
        "BatchIndexSampler.set_epoch",
        "epoch",
    ),
    refused(
        "data:batched_loader:dataset=list",
        lambda: batched_loader([1, 2, 3], 2),
        TypeError,
        "batched_loader",
        "dataset",
    ),
    refused(
        "data:batched_loader:dataset=iterable",
        lambda: batched_loader(ShardedIterableDataset([1, 2]), 2),
        TypeError,
        "batched_loader",
        "dataset",
        "map-style",
    ),
    refused(
        "data:batched_loader:batch_size=0",
        lambda: batched_loader(dataset(), 0),
        ValueError,
        "batched_loader",
        "batch_size",
    ),
    refused(
        "data:batched_loader:shuffle='no'",
        lambda: batched_loader(dataset(), 2, shuffle="no"),
        TypeError,
        "batched_loader",
        "shuffle",
        "got str 'no'",
    ),
    refused(
        "data:batched_loader:drop_last='False'",
        lambda: batched_loader(dataset(), 2, drop_last="False"),
        TypeError,
        "batched_loader",
        "drop_last",
    ),
    refused(
        "data:batched_loader:num_workers=-1",
        lambda: batched_loader(dataset(), 2, num_workers=-1),
        ValueError,
        "batched_loader",
        "num_workers",
    ),
    refused(
        "data:batched_loader:num_workers=1.0",
        lambda: batched_loader(dataset(), 2, num_workers=1.0),
        TypeError,
        "batched_loader",
        "num_workers",
    ),
    refused(
        "data:batched_loader:timeout=nan",
        lambda: batched_loader(dataset(), 2, timeout=math.nan),
        ValueError,
        "batched_loader",
        "timeout",
        "NaN",
    ),
    refused(
        "data:batched_loader:timeout=inf",
        lambda: batched_loader(dataset(), 2, timeout=math.inf),
        ValueError,
        "batched_loader",
        "timeout",
        "finite",
    ),
    refused(
        "data:batched_loader:timeout=-1",
        lambda: batched_loader(dataset(), 2, timeout=-1),
        ValueError,
        "batched_loader",
        "timeout",
    ),
    refused(
        "data:batched_loader:timeout='5'",
        lambda: batched_loader(dataset(), 2, timeout="5"),
        TypeError,
        "batched_loader",
        "timeout",
    ),
    refused(
        "data:batched_loader:pin_memory='yes'",
        lambda: batched_loader(dataset(), 2, pin_memory="yes"),
        TypeError,
        "batched_loader",
        "pin_memory",
    ),
    refused(
        "data:batched_loader:seed=2**64",
        lambda: batched_loader(dataset(), 2, seed=2**64),
        ValueError,
        "batched_loader",
        "seed",
    ),
    refused(
        "data:batched_loader:seed=-1",
        lambda: batched_loader(dataset(), 2, seed=-1),
        ValueError,
        "batched_loader",
        "seed",
    ),
    refused(
        "data:batched_loader:generator-with-2-replicas",
        lambda: batched_loader(dataset(4), 2, generator=torch.Generator(), num_replicas=2),
        ValueError,
        "batched_loader",
        "generator",
    ),
    refused(
        "data:batched_loader:rank=1-of-1",
        lambda: batched_loader(dataset(), 2, rank=1),
        ValueError,
        "batched_loader",
        "rank",
    ),
    refused(
        "data:ShardedIterableDataset:source=0-dim",
        lambda: ShardedIterableDataset(torch.tensor(1.0)),
        ValueError,
        "ShardedIterableDataset",
        "source",
    ),
    refused(
        "data:ShardedIterableDataset:source='abc'",
        lambda: ShardedIterableDataset("abc"),
        TypeError,
        "ShardedIterableDataset",
        "source",
    ),
    refused(
        "data:ShardedIterableDataset:source=5",
        lambda: ShardedIterableDataset(5),
        TypeError,
        "ShardedIterableDataset",
        "source",
    ),
    refused(
        "data:ShardedIterableDataset:num_replicas=0",
        lambda: ShardedIterableDataset([1], num_replicas=0),
        ValueError,
        "ShardedIterableDataset",
        "num_replicas",
    ),
    refused(
        "data:ShardedIterableDataset:rank=-1",
        lambda: ShardedIterableDataset([1], rank=-1),
        ValueError,
        "ShardedIterableDataset",
        "rank",
    ),
    refused(
        "data:ShardedIterableDataset:rank='0'",
        lambda: ShardedIterableDataset([1], rank="0"),
        TypeError,
        "ShardedIterableDataset",
        "rank",
    ),
]


def _shuffled_at_the_largest_seed() -> list[int]:
    sampler = BatchIndexSampler(4, 4, shuffle=True, seed=MAX_SEED)
    sampler.set_epoch(MAX_SEED)
    return sorted(next(iter(sampler)).tolist())


DATA_RESULTS = [
    result("data:TensorBatchDataset:empty", lambda: len(dataset(0)), lambda n: n == 0),
    result(
        "data:TensorBatchDataset.__getitem__:-1", lambda: dataset()[-1], lambda r: r[1].item() == 2
    ),
    result(
        "data:TensorBatchDataset.__getitem__:[2, 0]",
        lambda: dataset()[[2, 0]],
        lambda r: r[1].tolist() == [2, 0],
    ),
    result(
        "data:TensorBatchDataset.__getitem__:int32-tensor",
        lambda: dataset()[torch.tensor([1], dtype=torch.int32)],
        lambda r: r[1].tolist() == [1],
    ),
    result(
        "data:BatchIndexSampler:batches",
        lambda: batches(BatchIndexSampler(7, 3)),
        lambda b: b == [[0, 1, 2], [3, 4, 5], [6]],
    ),
    result(
        "data:BatchIndexSampler:empty-share-len",
        lambda: len(BatchIndexSampler(3, 2, num_replicas=4, rank=3)),
        lambda n: n == 0,
    ),
    result(
        "data:BatchIndexSampler:empty-share-no-batch",
        lambda: batches(BatchIndexSampler(3, 2, num_replicas=4, rank=3)),
        lambda b: b == [],
    ),
    result(
        "data:BatchIndexSampler:no-samples",
        lambda: (len(BatchIndexSampler(0, 2)), batches(BatchIndexSampler(0, 2))),
        lambda r: r == (0, []),
    ),
    result(
        "data:BatchIndexSampler:drop_last-share<batch",
        lambda: (
            len(BatchIndexSampler(3, 4, drop_last=True)),
            batches(BatchIndexSampler(3, 4, drop_last=True)),
        ),
        lambda r: r == (0, []),
    ),
    result(
        "data:BatchIndexSampler:seed=MAX_SEED+epoch=MAX_SEED",
        _shuffled_at_the_largest_seed,
        lambda r: r == [0, 1, 2, 3],
    ),
    result(
        "data:BatchIndexSampler:sized-source",
        lambda: batches(BatchIndexSampler([10, 20, 30], 2)),
        lambda b: b == [[0, 1], [2]],
    ),
    result(
        "data:batched_loader:batches",
        lambda: batches(batched_loader(dataset(5), 2)),
        lambda b: b == [[0, 1], [2, 3], [4]],
    ),
    result(
        "data:batched_loader:empty-share",
        lambda: (
            len(batched_loader(dataset(), 2, num_replicas=4, rank=3)),
            batches(batched_loader(dataset(), 2, num_replicas=4, rank=3)),
        ),
        lambda r: r == (0, []),
    ),
    result(
        "data:batched_loader:drop_last-share<batch",
        lambda: (
            len(batched_loader(dataset(), 4, drop_last=True)),
            batches(batched_loader(dataset(), 4, drop_last=True)),
        ),
        lambda r: r == (0, []),
    ),
    result(
        "data:batched_loader:empty-dataset",
        lambda: batches(batched_loader(dataset(0), 2)),
        lambda b: b == [],
    ),
    result(
        "data:batched_loader:timeout-without-workers",
        lambda: batched_loader(dataset(), 2, timeout=5.0).timeout,
        lambda t: t == 0,
    ),
    result(
        "data:ShardedIterableDataset:empty-share",
        lambda: (
            len(ShardedIterableDataset([1, 2, 3], num_replicas=4, rank=3)),
            list(ShardedIterableDataset([1, 2, 3], num_replicas=4, rank=3)),
        ),
        lambda r: r == (0, []),
    ),
    result(
        "data:ShardedIterableDataset:tensor-rows",
        lambda: [t.tolist() for t in ShardedIterableDataset(torch.arange(6).reshape(3, 2))],
        lambda r: r == [[0, 1], [2, 3], [4, 5]],
    ),
]

# -- ptnotes.models ---------------------------------------------------------------------

MODELS_REFUSED = [
    refused(
        "models:SmallCNN:num_classes=0",
        lambda: SmallCNN(num_classes=0),
        ValueError,
        "SmallCNN",
        "num_classes",
    ),
    refused(
        "models:SmallCNN:num_classes='10'",
        lambda: SmallCNN(num_classes="10"),
        TypeError,
        "SmallCNN",
        "num_classes",
    ),
    refused(
        "models:SmallCNN:in_channels=0",
        lambda: SmallCNN(in_channels=0),
        ValueError,
        "SmallCNN",
        "in_channels",
    ),
    refused(
        "models:SmallCNN:in_channels=3.0",
        lambda: SmallCNN(in_channels=3.0),
        TypeError,
        "SmallCNN",
        "in_channels",
    ),
    refused(
        "models:SmallCNN.forward:unbatched",
        lambda: cnn()(torch.zeros(3, 8, 8)),
        ValueError,
        "SmallCNN.forward",
        "x",
        "x.unsqueeze(0)",
    ),
    refused(
        "models:SmallCNN.forward:1x8-image",
        lambda: cnn()(torch.zeros(1, 3, 1, 8)),
        ValueError,
        "SmallCNN.forward",
        "x",
        "H, W >= 2",
    ),
    refused(
        "models:SmallCNN.forward:wrong-channels",
        lambda: cnn()(torch.zeros(1, 1, 8, 8)),
        ValueError,
        "SmallCNN.forward",
        "x",
        "(N, 3, H, W)",
    ),
    refused(
        "models:SmallCNN.forward:int-tensor",
        lambda: cnn()(torch.zeros(1, 3, 8, 8, dtype=torch.long)),
        TypeError,
        "SmallCNN.forward",
        "x",
        "floating",
    ),
    refused(
        "models:SmallCNN.forward:x=list", lambda: cnn()([0.0]), TypeError, "SmallCNN.forward", "x"
    ),
]
MODELS_RESULTS = [
    result(
        "models:SmallCNN.forward:2x2-minimum",
        lambda: cnn()(torch.zeros(2, 3, 2, 2)).shape,
        lambda s: s == (2, 3),
    ),
    result(
        "models:SmallCNN.forward:empty-batch",
        lambda: cnn()(torch.zeros(0, 3, 8, 8)).shape,
        lambda s: s == (0, 3),
    ),
    result(
        "models:SmallCNN:in_channels=1",
        lambda: SmallCNN(4, in_channels=1)(torch.zeros(1, 1, 5, 7)).shape,
        lambda s: s == (1, 4),
    ),
]

# -- ptnotes.finetune -------------------------------------------------------------------

FINETUNE_REFUSED = [
    refused("finetune:freeze:module='c'", lambda: freeze("c"), TypeError, "freeze", "module"),
    refused("finetune:freeze:pattern=3", lambda: freeze(cnn(), 3), TypeError, "freeze", "pattern"),
    refused(
        "finetune:freeze:pattern=''",
        lambda: freeze(cnn(), ""),
        ValueError,
        "freeze",
        "pattern",
        "non-empty",
    ),
    refused(
        "finetune:freeze:pattern-matches-nothing",
        lambda: freeze(cnn(), "head.*"),
        ValueError,
        "freeze",
        "pattern",
        "matches nothing",
    ),
    refused(
        "finetune:freeze:predicate-returns-'no'",
        lambda: freeze(cnn(), lambda n, p: "no"),
        TypeError,
        "freeze",
        "pattern(name, parameter)",
        "got str 'no'",
    ),
    refused(
        "finetune:freeze:predicate-returns-tensor",
        lambda: freeze(cnn(), lambda n, p: p > 0),
        TypeError,
        "freeze",
        "pattern(name, parameter)",
        "Tensor",
    ),
    refused(
        "finetune:freeze:predicate-selects-nothing",
        lambda: freeze(cnn(), lambda n, p: False),
        ValueError,
        "freeze",
        "pattern",
        "matches nothing",
    ),
    refused(
        "finetune:unfreeze:pattern=5", lambda: unfreeze(cnn(), 5), TypeError, "unfreeze", "pattern"
    ),
    refused(
        "finetune:unfreeze:predicate-returns-1",
        lambda: unfreeze(cnn(), lambda n, p: 1),
        TypeError,
        "unfreeze",
        "pattern(name, parameter)",
    ),
    refused(
        "finetune:replace_head:model='m'",
        lambda: replace_head("m", "fc", nn.Linear(16, 2)),
        TypeError,
        "replace_head",
        "model",
    ),
    refused(
        "finetune:replace_head:attr=3",
        lambda: replace_head(cnn(), 3, nn.Linear(16, 2)),
        TypeError,
        "replace_head",
        "attr",
    ),
    refused(
        "finetune:replace_head:new_head='x'",
        lambda: replace_head(cnn(), "fc", "x"),
        TypeError,
        "replace_head",
        "new_head",
    ),
    refused(
        "finetune:replace_head:attr='head'",
        lambda: replace_head(cnn(), "head", nn.Linear(16, 2)),
        ValueError,
        "replace_head",
        "attr",
        "children: features, fc",
    ),
    refused(
        "finetune:replace_head:attr=''",
        lambda: replace_head(cnn(), "", nn.Linear(16, 2)),
        ValueError,
        "replace_head",
        "attr",
    ),
    refused(
        "finetune:replace_head:attr='features.99'",
        lambda: replace_head(cnn(), "features.99", nn.Linear(16, 2)),
        ValueError,
        "replace_head",
        "attr",
    ),
    refused(
        "finetune:replace_head:attr-not-a-module",
        lambda: replace_head(cnn(), "num_classes", nn.Linear(16, 2)),
        TypeError,
        "replace_head",
        "attr",
    ),
    refused(
        "finetune:param_groups:model='m'",
        lambda: param_groups("m", {}),
        TypeError,
        "param_groups",
        "model",
    ),
    refused(
        "finetune:param_groups:key='lrr'",
        lambda: param_groups(cnn(), {"fc.*": {"lrr": 0.1}}),
        ValueError,
        "param_groups",
        "groups['fc.*']",
        "unknown key 'lrr'",
    ),
    refused(
        "finetune:param_groups:lr='x'",
        lambda: param_groups(cnn(), {"fc.*": {"lr": "x"}}),
        TypeError,
        "param_groups",
        "groups['fc.*']['lr']",
    ),
    refused(
        "finetune:param_groups:lr=nan",
        lambda: param_groups(cnn(), {"fc.*": {"lr": math.nan}}),
        ValueError,
        "param_groups",
        "groups['fc.*']['lr']",
        "NaN",
    ),
    refused(
        "finetune:param_groups:lr=-1",
        lambda: param_groups(cnn(), {"fc.*": {"lr": -1.0}}),
        ValueError,
        "param_groups",
        "groups['fc.*']['lr']",
        ">= 0",
    ),
    refused(
        "finetune:param_groups:lr=None",
        lambda: param_groups(cnn(), {"fc.*": {"lr": None}}),
        TypeError,
        "param_groups",
        "groups['fc.*']['lr']",
    ),
    refused(
        "finetune:param_groups:lr=2-element-tensor",
        lambda: param_groups(cnn(), {"fc.*": {"lr": torch.tensor([0.1, 0.2])}}),
        TypeError,
        "param_groups",
        "groups['fc.*']['lr']",
    ),
    refused(
        "finetune:param_groups:weight_decay=inf",
        lambda: param_groups(cnn(), {"fc.*": {"weight_decay": math.inf}}),
        ValueError,
        "param_groups",
        "groups['fc.*']['weight_decay']",
        "finite",
    ),
    refused(
        "finetune:param_groups:momentum=True",
        lambda: param_groups(cnn(), {"fc.*": {"momentum": True}}, optimizer=torch.optim.SGD),
        TypeError,
        "param_groups",
        "groups['fc.*']['momentum']",
    ),
    refused(
        "finetune:param_groups:nesterov='yes'",
        lambda: param_groups(cnn(), {"fc.*": {"nesterov": "yes"}}, optimizer=torch.optim.SGD),
        TypeError,
        "param_groups",
        "groups['fc.*']['nesterov']",
    ),
    refused(
        "finetune:param_groups:maximize=0",
        lambda: param_groups(cnn(), {"fc.*": {"maximize": 0}}),
        TypeError,
        "param_groups",
        "groups['fc.*']['maximize']",
    ),
    refused(
        "finetune:param_groups:foreach='yes'",
        lambda: param_groups(cnn(), {"fc.*": {"foreach": "yes"}}),
        TypeError,
        "param_groups",
        "groups['fc.*']['foreach']",
    ),
    refused(
        "finetune:param_groups:fused=1",
        lambda: param_groups(cnn(), {"fc.*": {"fused": 1}}, optimizer=torch.optim.Adam),
        TypeError,
        "param_groups",
        "groups['fc.*']['fused']",
    ),
    refused(
        "finetune:param_groups:eps='x'",
        lambda: param_groups(cnn(), {"fc.*": {"eps": "x"}}),
        TypeError,
        "param_groups",
        "groups['fc.*']['eps']",
    ),
    refused(
        "finetune:param_groups:betas=3-tuple",
        lambda: param_groups(
            cnn(), {"fc.*": {"betas": (0.9, 0.9, 0.9)}}, optimizer=torch.optim.Adam
        ),
        TypeError,
        "param_groups",
        "groups['fc.*']['betas']",
        "2 numbers",
    ),
    refused(
        "finetune:param_groups:betas=nan",
        lambda: param_groups(cnn(), {"fc.*": {"betas": (0.9, math.nan)}}),
        ValueError,
        "param_groups",
        "groups['fc.*']['betas'][1]",
    ),
    refused(
        "finetune:param_groups:betas-for-SGD",
        lambda: param_groups(cnn(), {"fc.*": {"betas": (0.9, 0.99)}}, optimizer=torch.optim.SGD),
        ValueError,
        "param_groups",
        "groups['fc.*']",
        "unknown key 'betas'",
    ),
    refused(
        "finetune:param_groups:optimizer='SGD'",
        lambda: param_groups(cnn(), {"fc.*": {}}, optimizer="SGD"),
        TypeError,
        "param_groups",
        "optimizer",
    ),
    refused(
        "finetune:param_groups:optimizer=dict",
        lambda: param_groups(cnn(), {"fc.*": {}}, optimizer=dict),
        TypeError,
        "param_groups",
        "optimizer",
    ),
    refused(
        "finetune:param_groups:default-key='lrr'",
        lambda: param_groups(cnn(), {"fc.*": {}}, {"lrr": 1}),
        ValueError,
        "param_groups",
        "default",
        "unknown key 'lrr'",
    ),
    refused(
        "finetune:param_groups:default='x'",
        lambda: param_groups(cnn(), {"fc.*": {}}, "x"),
        TypeError,
        "param_groups",
        "default",
    ),
    refused(
        "finetune:param_groups:groups='fc.*'",
        lambda: param_groups(cnn(), "fc.*"),
        TypeError,
        "param_groups",
        "groups",
    ),
    refused(
        "finetune:param_groups:groups[0]-not-a-pair",
        lambda: param_groups(cnn(), [("fc.*",)]),
        TypeError,
        "param_groups",
        "groups[0]",
    ),
    refused(
        "finetune:param_groups:pattern=3",
        lambda: param_groups(cnn(), {3: {}}),
        TypeError,
        "param_groups",
        "a pattern of groups",
    ),
    refused(
        "finetune:param_groups:options=list",
        lambda: param_groups(cnn(), {"fc.*": [0.1]}),
        TypeError,
        "param_groups",
        "groups['fc.*']",
    ),
    refused(
        "finetune:param_groups:key='params'",
        lambda: param_groups(cnn(), {"fc.*": {"params": []}}),
        ValueError,
        "param_groups",
        "groups['fc.*']",
        "'params'",
    ),
    refused(
        "finetune:param_groups:parameter-in-two-groups",
        lambda: param_groups(cnn(), {"*.weight": {}, "fc.*": {}}),
        ValueError,
        "param_groups",
        "groups",
        "'fc.weight'",
    ),
    refused(
        "finetune:param_groups:frozen-parameter",
        lambda: param_groups(frozen_features(), {"features.*": {}}),
        ValueError,
        "param_groups",
        "groups",
        "frozen",
    ),
    refused(
        "finetune:param_groups:pattern-matches-nothing",
        lambda: param_groups(cnn(), {"head.*": {}}),
        ValueError,
        "param_groups",
        "the pattern 'head.*' of groups",
    ),
]
FINETUNE_RESULTS = [
    result(
        "finetune:freeze:features",
        lambda: freeze(cnn(), "features.*"),
        lambda n: (
            n == ["features.0.weight", "features.0.bias", "features.3.weight", "features.3.bias"]
        ),
    ),
    result(
        "finetune:freeze:predicate",
        lambda: freeze(cnn(), lambda n, p: p.ndim == 1),
        lambda n: n == ["features.0.bias", "features.3.bias", "fc.bias"],
    ),
    result("finetune:freeze:all", lambda: len(freeze(cnn())), lambda n: n == 6),
    result(
        "finetune:unfreeze:after-freeze",
        lambda: unfreeze(frozen_features(), "features.3.*"),
        lambda n: n == ["features.3.weight", "features.3.bias"],
    ),
    result(
        "finetune:replace_head:fc",
        lambda: replace_head(cnn(), "fc", nn.Linear(16, 2)).out_features,
        lambda n: n == 3,
    ),
    result(
        "finetune:replace_head:nested",
        lambda: replace_head(cnn(), "features.0", nn.Conv2d(3, 8, 3, padding=1)),
        lambda old: isinstance(old, nn.Conv2d),
    ),
    result(
        "finetune:param_groups:two-groups",
        lambda: param_groups(cnn(), {"fc.*": {"lr": 0.1}}, {"lr": 0.01}),
        lambda g: [(len(x["params"]), x["lr"]) for x in g] == [(2, 0.1), (4, 0.01)],
    ),
    result(
        "finetune:param_groups:frozen-left-out",
        lambda: param_groups(frozen_features(), {"fc.*": {"lr": 0.1}}),
        lambda g: [len(x["params"]) for x in g] == [2],
    ),
    result(
        "finetune:param_groups:lr=tensor",
        lambda: param_groups(cnn(), {"fc.*": {"lr": torch.tensor(0.1)}}),
        lambda g: len(g) == 2,
    ),
    result(
        "finetune:param_groups:foreach=None",
        lambda: param_groups(cnn(), {"fc.*": {"foreach": None}}),
        lambda g: g[0]["foreach"] is None,
    ),
    pytest.param(
        lambda: param_groups(cnn(), {"fc.*": {"eps": (None, 1e-3)}}),
        lambda g: g[0]["eps"] == (None, 1e-3),
        id="finetune:param_groups:eps=(None, 1e-3)",
        # Adafactor's eps is a pair; torch.optim has had Adafactor since 2.5.
        marks=pytest.mark.skipif(
            not hasattr(torch.optim, "Adafactor"), reason="no torch.optim.Adafactor before 2.5"
        ),
    ),
    result(
        "finetune:param_groups:into-SGD",
        lambda: torch.optim.SGD(
            param_groups(cnn(), {"fc.*": {"lr": 0.1}}, optimizer=torch.optim.SGD), lr=0.01
        ),
        lambda o: [g["lr"] for g in o.param_groups] == [0.1, 0.01],
    ),
]

# -- ptnotes.training -------------------------------------------------------------------


def _frozen_half_step() -> float:
    """A frozen parameter need not be in the optimizer."""
    from ptnotes.training import train_step

    model = nn.Linear(1, 1)
    with torch.no_grad():
        model.weight.fill_(0.0)
        model.bias.fill_(0.0)
    model.bias.requires_grad_(False)
    return train_step(model, (X, Y), nn.MSELoss(), torch.optim.SGD([model.weight], lr=0.1))


def _other_optimizer() -> float:
    from ptnotes.training import train_step

    return train_step(line(), (X, Y), nn.MSELoss(), sgd(line()))


def _optimizer_without_fc() -> float:
    from ptnotes.training import train_step

    model = cnn()
    optimizer = torch.optim.SGD(model.features.parameters(), lr=0.1)
    target = torch.tensor([0, 1])
    return train_step(model, (torch.zeros(2, 3, 4, 4), target), nn.CrossEntropyLoss(), optimizer)


def _class_indices() -> float:
    from ptnotes.training import train_step

    model = cnn()
    target = torch.tensor([0, 2])
    return train_step(model, (torch.zeros(2, 3, 4, 4), target), nn.CrossEntropyLoss(), sgd(model))


def _step_and_weight(**kwargs: Any) -> tuple[float, float]:
    model = line()
    loss = train_step_of(model, (X, Y), **kwargs)
    return loss, model.weight.item()


TRAINING_REFUSED = [
    refused(
        "training:train_step:model='m'",
        lambda: train_step_of("m", (X, Y), optimizer=sgd(line())),
        TypeError,
        "train_step",
        "model",
    ),
    refused(
        "training:train_step:loss_fn='mse'",
        lambda: step(loss_fn="mse"),
        TypeError,
        "train_step",
        "loss_fn",
    ),
    refused(
        "training:train_step:optimizer='sgd'",
        lambda: step(optimizer="sgd"),
        TypeError,
        "train_step",
        "optimizer",
    ),
    refused(
        "training:train_step:optimizer-of-another-model",
        _other_optimizer,
        ValueError,
        "train_step",
        "optimizer",
        "does not hold weight",
    ),
    refused(
        "training:train_step:optimizer-without-fc",
        _optimizer_without_fc,
        ValueError,
        "train_step",
        "optimizer",
        "fc.weight",
    ),
    refused(
        "training:train_step:batch=3-list",
        lambda: step([X, Y, Y]),
        TypeError,
        "train_step",
        "batch",
        "(inputs, targets) pair",
    ),
    refused("training:train_step:batch=tensor", lambda: step(X), TypeError, "train_step", "batch"),
    refused(
        "training:train_step:empty-batch",
        lambda: step((X[:0], Y[:0])),
        ValueError,
        "train_step",
        "batch",
        "at least one sample",
    ),
    refused(
        "training:train_step:target-(N,)-output-(N,1)",
        lambda: step((X, Y[:, 0])),
        ValueError,
        "train_step",
        "targets",
        "broadcast",
    ),
    refused(
        "training:train_step:target-(N,1)-output-(N,)",
        lambda: train_step_of(nn.Sequential(line(), nn.Flatten(0)), (X, Y)),
        ValueError,
        "train_step",
        "targets",
        "broadcast",
    ),
    refused(
        "training:train_step:loss-not-scalar",
        lambda: step(loss_fn=nn.MSELoss(reduction="none")),
        ValueError,
        "train_step",
        "loss_fn",
        "scalar",
    ),
    refused(
        "training:train_step:max_grad_norm=nan",
        lambda: step(max_grad_norm=math.nan),
        ValueError,
        "train_step",
        "max_grad_norm",
        "NaN",
    ),
    refused(
        "training:train_step:max_grad_norm=inf",
        lambda: step(max_grad_norm=math.inf),
        ValueError,
        "train_step",
        "max_grad_norm",
        "finite",
    ),
    refused(
        "training:train_step:max_grad_norm=0",
        lambda: step(max_grad_norm=0),
        ValueError,
        "train_step",
        "max_grad_norm",
        "> 0",
    ),
    refused(
        "training:train_step:max_grad_norm='1'",
        lambda: step(max_grad_norm="1"),
        TypeError,
        "train_step",
        "max_grad_norm",
    ),
    refused(
        "training:accumulate_step:micro_batches=[]",
        lambda: accumulate([]),
        ValueError,
        "accumulate_step",
        "micro_batches",
        "at least one",
    ),
    refused(
        "training:accumulate_step:micro_batches=iterator",
        lambda: accumulate(iter([(X, Y)])),
        TypeError,
        "accumulate_step",
        "micro_batches",
        "sequence",
    ),
    refused(
        "training:accumulate_step:micro_batches='ab'",
        lambda: accumulate("ab"),
        TypeError,
        "accumulate_step",
        "micro_batches",
    ),
    refused(
        "training:accumulate_step:empty-micro-batch",
        lambda: accumulate([(X, Y), (X[:0], Y[:0])]),
        ValueError,
        "accumulate_step",
        "micro_batches[1]",
        "at least one sample",
    ),
    refused(
        "training:accumulate_step:micro-batch-not-a-pair",
        lambda: accumulate([X]),
        TypeError,
        "accumulate_step",
        "micro_batches[0]",
    ),
    refused(
        "training:accumulate_step:inputs=list",
        lambda: accumulate([([1.0], Y)]),
        TypeError,
        "accumulate_step",
        "the inputs of micro_batches[0]",
    ),
    refused(
        "training:accumulate_step:target-(N,)-output-(N,1)",
        lambda: accumulate([(X, Y[:, 0])]),
        ValueError,
        "accumulate_step",
        "targets",
        "broadcast",
    ),
    refused(
        "training:accumulate_step:loss_fn=None",
        lambda: accumulate([(X, Y)], loss_fn=None),
        TypeError,
        "accumulate_step",
        "loss_fn",
    ),
    refused(
        "training:accumulate_step:max_grad_norm=-1",
        lambda: accumulate([(X, Y)], max_grad_norm=-1.0),
        ValueError,
        "accumulate_step",
        "max_grad_norm",
    ),
]
TRAINING_RESULTS = [
    result("training:train_step:one-step", lambda: _step_and_weight(), lambda r: r == (10.0, 1.0)),
    result(
        "training:train_step:clipped",
        lambda: _step_and_weight(max_grad_norm=1.0),
        lambda r: r[0] == 10.0 and math.isclose(r[1], 0.1, rel_tol=1e-6),
    ),
    result(
        "training:train_step:frozen-bias-not-in-optimizer",
        _frozen_half_step,
        lambda loss: loss == 10.0,
    ),
    result(
        "training:train_step:class-index-targets", _class_indices, lambda loss: math.isfinite(loss)
    ),
    result(
        "training:accumulate_step:equals-one-step",
        lambda: accumulate([(X[:1], Y[:1]), (X[1:], Y[1:])]),
        lambda r: r == (10.0, 1.0),
    ),
    result(
        "training:accumulate_step:unequal-sizes",
        lambda: accumulate([(X[:1], Y[:1]), (torch.cat([X, X])[1:], torch.cat([Y, Y])[1:])]),
        lambda r: math.isclose(r[0], (4 + 16 + 4 + 16) / 4, rel_tol=1e-6),
    ),
]

# -- ptnotes.graph ----------------------------------------------------------------------

GRAPH_REFUSED = [
    refused(
        "graph:walk_graph:tensor='x'", lambda: walk_graph("x"), TypeError, "walk_graph", "tensor"
    ),
    refused(
        "graph:walk_graph:no-graph",
        lambda: walk_graph(torch.ones(2)),
        ValueError,
        "walk_graph",
        "tensor",
        "no_grad",
    ),
    refused(
        "graph:graph_text:tensor=None", lambda: graph_text(None), TypeError, "graph_text", "tensor"
    ),
    refused(
        "graph:graph_text:names=list",
        lambda: graph_text(graph()[1], ["w"]),
        TypeError,
        "graph_text",
        "names",
    ),
    refused(
        "graph:graph_text:names-key=1",
        lambda: graph_text(graph()[1], {1: graph()[0]}),
        TypeError,
        "graph_text",
        "a key of names",
    ),
    refused(
        "graph:graph_text:names-value=1",
        lambda: graph_text(graph()[1], {"w": 1}),
        TypeError,
        "graph_text",
        "names['w']",
    ),
    refused(
        "graph:graph_text:details='yes'",
        lambda: graph_text(graph()[1], details="yes"),
        TypeError,
        "graph_text",
        "details",
    ),
    refused(
        "graph:graph_dot:details=1",
        lambda: graph_dot(graph()[1], details=1),
        TypeError,
        "graph_dot",
        "details",
    ),
    refused(
        "graph:graph_dot:no-graph",
        lambda: graph_dot(torch.ones(2).detach()),
        ValueError,
        "graph_dot",
        "tensor",
    ),
]


def _named_text() -> str:
    w, y = graph()
    return graph_text(y, {"w": w, "y": y})


GRAPH_RESULTS = [
    result(
        "graph:walk_graph:nodes",
        lambda: [n.name for n in walk_graph(graph()[1])],
        lambda n: n == ["ExpBackward0", "MulBackward0", "AccumulateGrad"],
    ),
    result(
        "graph:walk_graph:leaf",
        lambda: walk_graph(graph()[0]),
        lambda n: [x.kind for x in n] == ["leaf"],
    ),
    result(
        "graph:graph_text:names",
        _named_text,
        lambda t: "AccumulateGrad(w, shape=())" in t and "ExpBackward0 (y)" in t,
    ),
    result(
        "graph:graph_dot:digraph",
        lambda: graph_dot(graph()[1]),
        lambda t: t.startswith("digraph autograd {"),
    ),
]

# -- ptnotes.distributed and ptnotes.ddp_example ----------------------------------------

DISTRIBUTED_REFUSED = [
    refused(
        "distributed:find_free_port:host=None",
        lambda: find_free_port(None),
        TypeError,
        "find_free_port",
        "host",
        "NoneType",
    ),
    refused(
        "distributed:find_free_port:host=1",
        lambda: find_free_port(1),
        TypeError,
        "find_free_port",
        "host",
    ),
    refused(
        "distributed:find_free_port:host-of-another-machine",
        lambda: find_free_port("192.0.2.1"),
        ValueError,
        "find_free_port",
        "host",
        "this machine",
    ),
    refused(
        "distributed:run_parallel:world_size=0",
        lambda: run_parallel(top_level, 0),
        ValueError,
        "run_parallel",
        "world_size",
    ),
    refused(
        "distributed:run_parallel:world_size='2'",
        lambda: run_parallel(top_level, "2"),
        TypeError,
        "run_parallel",
        "world_size",
    ),
    refused(
        "distributed:run_parallel:world_size=True",
        lambda: run_parallel(top_level, True),
        TypeError,
        "run_parallel",
        "world_size",
    ),
    refused(
        "distributed:run_parallel:timeout=nan",
        lambda: run_parallel(top_level, 1, timeout=math.nan),
        ValueError,
        "run_parallel",
        "timeout",
        "NaN",
    ),
    refused(
        "distributed:run_parallel:timeout=inf",
        lambda: run_parallel(top_level, 1, timeout=math.inf),
        ValueError,
        "run_parallel",
        "timeout",
        "finite",
    ),
    refused(
        "distributed:run_parallel:timeout=0",
        lambda: run_parallel(top_level, 1, timeout=0),
        ValueError,
        "run_parallel",
        "timeout",
    ),
    refused(
        "distributed:run_parallel:timeout='60'",
        lambda: run_parallel(top_level, 1, timeout="60"),
        TypeError,
        "run_parallel",
        "timeout",
    ),
    refused(
        "distributed:run_parallel:backend=1",
        lambda: run_parallel(top_level, 1, backend=1),
        TypeError,
        "run_parallel",
        "backend",
    ),
    refused(
        "distributed:run_parallel:backend='nope'",
        lambda: run_parallel(top_level, 1, backend="nope"),
        ValueError,
        "run_parallel",
        "backend",
    ),
    refused(
        "distributed:run_parallel:fn='f'",
        lambda: run_parallel("f", 1),
        TypeError,
        "run_parallel",
        "fn",
    ),
    refused(
        "distributed:run_parallel:fn=lambda",
        lambda: run_parallel(lambda r, w: r, 1),
        TypeError,
        "run_parallel",
        "fn",
        "picklable",
    ),
    refused(
        "distributed:run_parallel:args-unpicklable",
        lambda: run_parallel(top_level, 1, lambda: 0),
        TypeError,
        "run_parallel",
        "args",
    ),
    refused(
        "distributed:make_dataset:size=0",
        lambda: make_dataset(0),
        ValueError,
        "make_dataset",
        "size",
    ),
    refused(
        "distributed:make_dataset:size='1'",
        lambda: make_dataset("1"),
        TypeError,
        "make_dataset",
        "size",
    ),
    refused(
        "distributed:make_dataset:features=0",
        lambda: make_dataset(4, 0),
        ValueError,
        "make_dataset",
        "features",
    ),
    refused(
        "distributed:make_model:features=True",
        lambda: make_model(True),
        TypeError,
        "make_model",
        "features",
    ),
    refused(
        "distributed:make_model:features=0",
        lambda: make_model(0),
        ValueError,
        "make_model",
        "features",
    ),
    refused(
        "distributed:ddp_step:rank=1-of-1", lambda: ddp_step(1, 1), ValueError, "ddp_step", "rank"
    ),
    refused(
        "distributed:ddp_step:rank=-1", lambda: ddp_step(-1, 1), ValueError, "ddp_step", "rank"
    ),
    refused(
        "distributed:ddp_step:world_size='1'",
        lambda: ddp_step(0, "1"),
        TypeError,
        "ddp_step",
        "world_size",
    ),
    refused(
        "distributed:ddp_step:world_size=3-without-group",
        lambda: ddp_step(0, 3),
        ValueError,
        "ddp_step",
        "(rank, world_size)",
        "got (0, 3)",
    ),
]
DISTRIBUTED_RESULTS = [
    result("distributed:find_free_port:default", lambda: find_free_port(), lambda p: 0 < p < 65536),
    result(
        "distributed:WorkerError:pickles",
        lambda: pickle.loads(pickle.dumps(WorkerError(2, "boom"))),
        lambda e: (e.rank, e.details) == (2, "boom"),
    ),
    result(
        "distributed:make_dataset:shapes",
        lambda: [t.shape for t in make_dataset(4, 2)[:]],
        lambda s: s == [(4, 2), (4, 1)],
    ),
    result(
        "distributed:make_model:features=2",
        lambda: make_model(2),
        lambda m: m.in_features == 2 and m.weight.dtype == torch.float64,
    ),
    result(
        "distributed:ddp_step:single-process",
        lambda: ddp_step(0, 1),
        lambda r: r.indices == list(range(16)) and round(r.loss, 4) == 38.2168,
    ),
]

# -- ptnotes.hooks and ptnotes.checkpoint -------------------------------------------------

HOOKS_REFUSED = [
    refused(
        "hooks:GradNormRecorder:model='m'",
        lambda: GradNormRecorder("m"),
        TypeError,
        "GradNormRecorder",
        "model",
    ),
    refused(
        "hooks:GradNormRecorder:norm_type=nan",
        lambda: GradNormRecorder(nn.Linear(1, 1), norm_type=math.nan),
        ValueError,
        "GradNormRecorder",
        "norm_type",
        "NaN",
    ),
    refused(
        "hooks:GradNormRecorder:norm_type=0",
        lambda: GradNormRecorder(nn.Linear(1, 1), norm_type=0),
        ValueError,
        "GradNormRecorder",
        "norm_type",
    ),
    refused(
        "hooks:GradNormRecorder:norm_type='2'",
        lambda: GradNormRecorder(nn.Linear(1, 1), norm_type="2"),
        TypeError,
        "GradNormRecorder",
        "norm_type",
    ),
    refused(
        "hooks:GradNormRecorder:modules='yes'",
        lambda: GradNormRecorder(nn.Linear(1, 1), modules="yes"),
        TypeError,
        "GradNormRecorder",
        "modules",
    ),
    refused(
        "hooks:GradNormRecorder:no-trainable-parameter",
        lambda: GradNormRecorder(no_params()),
        ValueError,
        "GradNormRecorder",
        "model",
    ),
]


def _recorded(norm_type: float) -> dict[str, float]:
    model = nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(1.0)
    with GradNormRecorder(model, norm_type=norm_type) as recorder:
        model(torch.tensor([[3.0, -4.0]])).sum().backward()
    return recorder.last()


HOOKS_RESULTS = [
    result(
        "hooks:GradNormRecorder:norm_type=2", lambda: _recorded(2.0), lambda r: r == {"weight": 5.0}
    ),
    result(
        "hooks:GradNormRecorder:norm_type=inf",
        lambda: _recorded(math.inf),
        lambda r: r == {"weight": 4.0},
    ),
]
LINEAR = nn.Linear(1, 1)
CHECKPOINT_REFUSED = [
    refused(
        "checkpoint:save_checkpoint:path=1",
        lambda: save_checkpoint(1, LINEAR, sgd(LINEAR)),
        TypeError,
        "save_checkpoint",
        "path",
    ),
    refused(
        "checkpoint:save_checkpoint:model='m'",
        lambda: save_checkpoint("x.pt", "m", sgd(LINEAR)),
        TypeError,
        "save_checkpoint",
        "model",
    ),
    refused(
        "checkpoint:save_checkpoint:optimizer='o'",
        lambda: save_checkpoint("x.pt", LINEAR, "o"),
        TypeError,
        "save_checkpoint",
        "optimizer",
    ),
    refused(
        "checkpoint:save_checkpoint:scheduler=1",
        lambda: save_checkpoint("x.pt", LINEAR, sgd(LINEAR), scheduler=1),
        TypeError,
        "save_checkpoint",
        "scheduler",
    ),
    refused(
        "checkpoint:load_checkpoint:path=1",
        lambda: load_checkpoint(1, LINEAR),
        TypeError,
        "load_checkpoint",
        "path",
    ),
    refused(
        "checkpoint:load_checkpoint:model=None",
        lambda: load_checkpoint("x.pt", None),
        TypeError,
        "load_checkpoint",
        "model",
    ),
    refused(
        "checkpoint:load_checkpoint:optimizer='o'",
        lambda: load_checkpoint("x.pt", LINEAR, "o"),
        TypeError,
        "load_checkpoint",
        "optimizer",
    ),
    refused(
        "checkpoint:load_checkpoint:scheduler=1",
        lambda: load_checkpoint("x.pt", LINEAR, scheduler=1),
        TypeError,
        "load_checkpoint",
        "scheduler",
    ),
    refused(
        "checkpoint:load_checkpoint:map_location=1",
        lambda: load_checkpoint("x.pt", LINEAR, map_location=1),
        TypeError,
        "load_checkpoint",
        "map_location",
    ),
    refused(
        "checkpoint:load_checkpoint:not-a-checkpoint",
        lambda: load_checkpoint(not_a_checkpoint(), LINEAR),
        ValueError,
        "load_checkpoint",
        "path",
        "save_checkpoint",
    ),
    refused(
        "checkpoint:load_checkpoint:scheduler-not-saved",
        lambda: load_checkpoint(
            checkpoint_file(),
            nn.Linear(1, 1),
            scheduler=torch.optim.lr_scheduler.StepLR(sgd(LINEAR), 1),
        ),
        ValueError,
        "load_checkpoint",
        "scheduler",
    ),
]
CHECKPOINT_RESULTS = [
    result(
        "checkpoint:load_checkpoint:extra",
        lambda: load_checkpoint(checkpoint_file(epoch=3), nn.Linear(1, 1)),
        lambda extra: extra == {"epoch": 3},
    ),
]

# -- ptnotes.reproducibility ----------------------------------------------------------------

REPRODUCIBILITY_REFUSED = [
    refused(
        "reproducibility:seed_everything:seed=-1",
        lambda: seed_everything(-1),
        ValueError,
        "seed_everything",
        "seed",
        "[0, 4294967295]",
    ),
    refused(
        "reproducibility:seed_everything:seed=2**32",
        lambda: seed_everything(MAX_GLOBAL_SEED + 1),
        ValueError,
        "seed_everything",
        "seed",
        "[0, 4294967295]",
    ),
    refused(
        "reproducibility:seed_everything:seed=1.0",
        lambda: seed_everything(1.0),
        TypeError,
        "seed_everything",
        "seed",
    ),
    refused(
        "reproducibility:seed_everything:seed=True",
        lambda: seed_everything(True),
        TypeError,
        "seed_everything",
        "seed",
    ),
    refused(
        "reproducibility:seeded_generator:seed=-1",
        lambda: seeded_generator(-1),
        ValueError,
        "seeded_generator",
        "seed",
    ),
    refused(
        "reproducibility:seeded_generator:seed=MAX_SEED+1",
        lambda: seeded_generator(MAX_SEED + 1),
        ValueError,
        "seeded_generator",
        "seed",
    ),
    refused(
        "reproducibility:seeded_generator:seed='0'",
        lambda: seeded_generator("0"),
        TypeError,
        "seeded_generator",
        "seed",
    ),
    refused(
        "reproducibility:seed_worker:main-process",
        lambda: seed_worker(0),
        ValueError,
        "seed_worker",
        "worker_id",
        "no worker process",
    ),
    refused(
        "reproducibility:seed_worker:worker_id=-1",
        lambda: seed_worker(-1),
        ValueError,
        "seed_worker",
        "worker_id",
        ">= 0",
    ),
    refused(
        "reproducibility:seed_worker:worker_id=0.0",
        lambda: seed_worker(0.0),
        TypeError,
        "seed_worker",
        "worker_id",
    ),
]
REPRODUCIBILITY_RESULTS = [
    result(
        "reproducibility:seeded_generator:seed=MAX_SEED",
        lambda: seeded_generator(MAX_SEED),
        lambda g: g.initial_seed() == MAX_SEED,
    ),
    result(
        "reproducibility:seed_everything:seed=MAX_GLOBAL_SEED",
        lambda: (seed_everything(MAX_GLOBAL_SEED), torch.initial_seed()),
        lambda r: r == (None, MAX_GLOBAL_SEED),
    ),
]

# -- ptnotes.validation: the layer itself -------------------------------------------------

VALIDATION_REFUSED = [
    refused(
        "validation:check_bool:'False'",
        lambda: check_bool(_f, "flag", "False"),
        TypeError,
        "_f",
        "flag",
    ),
    refused("validation:check_int:True", lambda: check_int(_f, "n", True), TypeError, "_f", "n"),
    refused(
        "validation:check_number:nan",
        lambda: check_number(_f, "x", math.nan, finite=False),
        ValueError,
        "_f",
        "x",
        "NaN",
    ),
    refused(
        "validation:check_number:inf",
        lambda: check_number(_f, "x", math.inf),
        ValueError,
        "_f",
        "x",
        "finite",
    ),
    refused(
        "validation:check_seed:2**64",
        lambda: check_seed(_f, "seed", 2**64),
        ValueError,
        "_f",
        "seed",
    ),
    refused(
        "validation:check_choice:'dict'",
        lambda: check_choice(_f, "style", "dict", ("a", "b")),
        ValueError,
        "_f",
        "style",
    ),
    refused(
        "validation:check_optimizer_options:'lrr'",
        lambda: check_optimizer_options(_f, "options", {"lrr": 1}),
        ValueError,
        "_f",
        "options",
        "unknown key 'lrr'",
    ),
]
VALIDATION_RESULTS = [
    result(
        "validation:check_seed:MAX_SEED",
        lambda: check_seed(_f, "seed", MAX_SEED),
        lambda s: s == 2**63 - 1,
    ),
    result(
        "validation:check_number:int-to-float",
        lambda: check_number(_f, "x", 3),
        lambda x: x == 3.0 and isinstance(x, float),
    ),
    result(
        "validation:check_optimizer_options:lr=numpy.float32-as-given",
        lambda: check_optimizer_options(_f, "options", {"lr": np.float32(0.1)}, torch.optim.SGD),
        lambda o: type(o["lr"]) is np.float32,
    ),
    result(
        "validation:check_optimizer_options:lr=1-element-tensor-as-given",
        lambda: check_optimizer_options(_f, "options", {"lr": torch.tensor([0.1])}),
        lambda o: isinstance(o["lr"], torch.Tensor) and o["lr"].shape == (1,),
    ),
]

# -- the kinds of issue 21: NumPy scalars, huge integers, all-or-nothing --------------------
#
# Generated rows: every int, bool and number argument of the public functions, tried with
# the values a careless caller passes: a NumPy scalar of the right kind (accepted, the
# correct result), a numpy.bool_ where an int or number is expected (refused, named), an
# int beyond int64 (refused with a ValueError, not torch's OverflowError), a float too
# large (refused, not a bare OverflowError).

HUGE = 2**64
HUGER = 2**1100  # beyond float's range

INT_ARGUMENTS: list[tuple[str, Callable[[Any], object], str, str, Callable[[Any], object]]] = [
    (
        "layers:Linear:in_features",
        lambda v: Linear(v, 2),
        "Linear",
        "in_features",
        lambda m: m.in_features == 3 and type(m.in_features) is int,
    ),
    (
        "layers:Linear:out_features",
        lambda v: Linear(2, v),
        "Linear",
        "out_features",
        lambda m: m.weight.shape == (3, 2),
    ),
    (
        "layers:ConvBNReLU:in_channels",
        lambda v: ConvBNReLU(v, 2),
        "ConvBNReLU",
        "in_channels",
        lambda m: m[0].in_channels == 3,
    ),
    (
        "layers:ConvBNReLU:out_channels",
        lambda v: ConvBNReLU(1, v),
        "ConvBNReLU",
        "out_channels",
        lambda m: m[1].num_features == 3,
    ),
    (
        "layers:ConvBNReLU:kernel_size",
        lambda v: ConvBNReLU(1, 2, kernel_size=v),
        "ConvBNReLU",
        "kernel_size",
        lambda m: m[0].padding == (1, 1),
    ),
    (
        "layers:ConvBNReLU:stride",
        lambda v: ConvBNReLU(1, 2, stride=v),
        "ConvBNReLU",
        "stride",
        lambda m: m[0].stride == (3, 3),
    ),
    (
        "layers:ConvBNReLU:padding",
        lambda v: ConvBNReLU(1, 2, padding=v),
        "ConvBNReLU",
        "padding",
        lambda m: m[0].padding == (3, 3),
    ),
    (
        "models:SmallCNN:num_classes",
        lambda v: SmallCNN(num_classes=v),
        "SmallCNN",
        "num_classes",
        lambda m: m.fc.out_features == 3,
    ),
    (
        "models:SmallCNN:in_channels",
        lambda v: SmallCNN(in_channels=v),
        "SmallCNN",
        "in_channels",
        lambda m: m.features[0].in_channels == 3,
    ),
    (
        "data:BatchIndexSampler:data_source",
        lambda v: BatchIndexSampler(v, 2),
        "BatchIndexSampler",
        "data_source",
        lambda s: batches(s) == [[0, 1], [2]],
    ),
    (
        "data:BatchIndexSampler:batch_size",
        lambda v: BatchIndexSampler(4, v),
        "BatchIndexSampler",
        "batch_size",
        lambda s: batches(s) == [[0, 1, 2], [3]],
    ),
    (
        "data:BatchIndexSampler:num_replicas",
        lambda v: BatchIndexSampler(6, 2, num_replicas=v),
        "BatchIndexSampler",
        "num_replicas",
        lambda s: batches(s) == [[0, 3]],
    ),
    (
        "data:BatchIndexSampler:seed",
        lambda v: BatchIndexSampler(4, 4, shuffle=True, seed=v),
        "BatchIndexSampler",
        "seed",
        lambda s: sorted(batches(s)[0]) == [0, 1, 2, 3],
    ),
    (
        "data:BatchIndexSampler.set_epoch:epoch",
        lambda v: BatchIndexSampler(4, 2).set_epoch(v),
        "BatchIndexSampler.set_epoch",
        "epoch",
        lambda r: r is None,
    ),
    (
        "data:batched_loader:batch_size",
        lambda v: batched_loader(dataset(4), v),
        "batched_loader",
        "batch_size",
        lambda loader: batches(loader) == [[0, 1, 2], [3]],
    ),
    (
        "data:batched_loader:num_replicas",
        lambda v: batched_loader(dataset(6), 2, num_replicas=v),
        "batched_loader",
        "num_replicas",
        lambda loader: batches(loader) == [[0, 3]],
    ),
    (
        "data:batched_loader:seed",
        lambda v: batched_loader(dataset(4), 4, shuffle=True, seed=v),
        "batched_loader",
        "seed",
        lambda loader: sorted(batches(loader)[0]) == [0, 1, 2, 3],
    ),
    (
        "data:ShardedIterableDataset:num_replicas",
        lambda v: ShardedIterableDataset(list(range(6)), num_replicas=v),
        "ShardedIterableDataset",
        "num_replicas",
        lambda d: list(d) == [0, 3],
    ),
    (
        "reproducibility:seed_everything:seed",
        lambda v: (seed_everything(v), torch.initial_seed()),
        "seed_everything",
        "seed",
        lambda r: r == (None, 3),
    ),
    (
        "reproducibility:seeded_generator:seed",
        lambda v: seeded_generator(v),
        "seeded_generator",
        "seed",
        lambda g: g.initial_seed() == 3,
    ),
    (
        "distributed:make_dataset:size",
        lambda v: make_dataset(v),
        "make_dataset",
        "size",
        lambda d: len(d) == 3,
    ),
    (
        "distributed:make_model:features",
        lambda v: make_model(v),
        "make_model",
        "features",
        lambda m: m.in_features == 3,
    ),
]
BOOL_ARGUMENTS: list[tuple[str, Callable[[Any], object], str, str, Callable[[Any], object]]] = [
    (
        "layers:Linear:bias",
        lambda v: Linear(2, 2, bias=v),
        "Linear",
        "bias",
        lambda m: m.bias is not None,
    ),
    (
        "convert:to_numpy:copy",
        lambda v: (TENSOR, to_numpy(TENSOR, copy=v)),
        "to_numpy",
        "copy",
        lambda r: not np.shares_memory(r[1], r[0].numpy()),
    ),
    (
        "functions:sort:descending",
        lambda v: sort(torch.tensor([1.0, 2.0]), descending=v),
        "sort",
        "descending",
        lambda r: r[0].tolist() == [2.0, 1.0],
    ),
    (
        "sequential:same_structure:ignore_names",
        lambda v: same_structure(
            sequential_from(PAIRS, "positional"),
            sequential_from(PAIRS, "add_module"),
            ignore_names=v,
        ),
        "same_structure",
        "ignore_names",
        lambda r: r is True,
    ),
    (
        "data:BatchIndexSampler:drop_last",
        lambda v: BatchIndexSampler(3, 2, drop_last=v),
        "BatchIndexSampler",
        "drop_last",
        lambda s: batches(s) == [[0, 1]],
    ),
    (
        "data:BatchIndexSampler:shuffle",
        lambda v: BatchIndexSampler(3, 3, shuffle=v),
        "BatchIndexSampler",
        "shuffle",
        lambda s: sorted(batches(s)[0]) == [0, 1, 2],
    ),
    (
        "data:batched_loader:drop_last",
        lambda v: batched_loader(dataset(3), 2, drop_last=v),
        "batched_loader",
        "drop_last",
        lambda loader: batches(loader) == [[0, 1]],
    ),
    (
        "data:batched_loader:pin_memory",
        lambda v: batched_loader(dataset(3), 2, pin_memory=v),
        "batched_loader",
        "pin_memory",
        lambda loader: loader.pin_memory is True,
    ),
    (
        "hooks:GradNormRecorder:modules",
        lambda v: GradNormRecorder(nn.Linear(1, 1), modules=v),
        "GradNormRecorder",
        "modules",
        lambda r: isinstance(r, GradNormRecorder),
    ),
    (
        "graph:graph_text:details",
        lambda v: graph_text(graph()[1], details=v),
        "graph_text",
        "details",
        lambda t: "ExpBackward0" in t,
    ),
    (
        "graph:graph_dot:details",
        lambda v: graph_dot(graph()[1], details=v),
        "graph_dot",
        "details",
        lambda t: t.startswith("digraph"),
    ),
]
NUMBER_ARGUMENTS: list[tuple[str, Callable[[Any], object], str, str, Callable[[Any], object]]] = [
    (
        "functions:clamp_:max",
        lambda v: clamp_(V.clone(), -1.0, v),
        "clamp_",
        "max",
        lambda y: y.tolist() == [-1.0, 0.5, 0.5],
    ),
    (
        "hooks:GradNormRecorder:norm_type",
        lambda v: _recorded(v),
        "GradNormRecorder",
        "norm_type",
        lambda r: math.isclose(r["weight"], (3**0.5 + 4**0.5) ** 2, rel_tol=1e-5),
    ),
    (
        "data:batched_loader:timeout",
        lambda v: batched_loader(dataset(), 2, timeout=v),
        "batched_loader",
        "timeout",
        lambda loader: loader.timeout == 0,
    ),
    (
        "training:train_step:max_grad_norm",
        lambda v: _step_and_weight(max_grad_norm=v),
        "train_step",
        "max_grad_norm",
        lambda r: math.isclose(r[1], 0.05, rel_tol=1e-5),
    ),
]


def _generated() -> tuple[list[Any], list[Any]]:
    refusals: list[Any] = []
    results: list[Any] = []
    for row, build, caller, argument, check in INT_ARGUMENTS:
        refusals.append(
            refused(f"{row}=2**64", lambda b=build: b(HUGE), ValueError, caller, argument)
        )
        refusals.append(
            refused(
                f"{row}=numpy.bool_",
                lambda b=build: b(np.bool_(True)),
                TypeError,
                caller,
                argument,
                "numpy.bool",
            )
        )
        results.append(result(f"{row}=numpy.int64", lambda b=build: b(np.int64(3)), check))
    for row, build, caller, argument, check in BOOL_ARGUMENTS:
        refusals.append(
            refused(
                f"{row}=numpy.float64",
                lambda b=build: b(np.float64(1.0)),
                TypeError,
                caller,
                argument,
            )
        )
        results.append(result(f"{row}=numpy.bool_", lambda b=build: b(np.bool_(True)), check))
    for row, build, caller, argument, check in NUMBER_ARGUMENTS:
        refusals.append(
            refused(f"{row}=2**1100", lambda b=build: b(HUGER), ValueError, caller, argument)
        )
        refusals.append(
            refused(
                f"{row}=numpy.bool_",
                lambda b=build: b(np.bool_(True)),
                TypeError,
                caller,
                argument,
                "numpy.bool",
            )
        )
        value = np.float32(0.5)
        results.append(result(f"{row}=numpy.float32", lambda b=build, v=value: b(v), check))
    return refusals, results


GENERATED_REFUSED, GENERATED_RESULTS = _generated()


# -- rows of the kinds found by the probes -----------------------------------------------


def saved_file(**extra: Any) -> str:
    """A checkpoint of a trained ``nn.Linear(2, 1)``, AdamW and StepLR."""
    model = nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)
    model(torch.ones(1, 2)).sum().backward()
    optimizer.step()
    scheduler.step()
    path = str(Path(tempfile.mkdtemp()) / "ckpt.pt")
    save_checkpoint(path, model, optimizer, scheduler, **extra)
    return path


def file_with(content: bytes) -> str:
    path = str(Path(tempfile.mkdtemp()) / "ckpt.pt")
    Path(path).write_bytes(content)
    return path


def truncated_file() -> str:
    path = saved_file()
    Path(path).write_bytes(Path(path).read_bytes()[:100])
    return path


def load_into(
    model: nn.Module,
    optimizer: Callable[[nn.Module], torch.optim.Optimizer] | None = None,
    scheduler: Callable[[torch.optim.Optimizer], Any] | None = None,
    path: str | None = None,
) -> dict[str, Any]:
    built = None if optimizer is None else optimizer(model)
    schedule = None if scheduler is None or built is None else scheduler(built)
    return load_checkpoint(path or saved_file(), model, built, schedule)


def adamw(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=0.1)


class WithPropertyHead(nn.Module):
    """A model whose ``head`` is a property returning its registered child ``fc``."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)

    @property
    def head(self) -> nn.Module:
        return self.fc

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(x)


class Counts(nn.Module):
    """A layer with an integer parameter (which can never require grad)."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        self.counts = nn.Parameter(torch.zeros(2, dtype=torch.long), requires_grad=False)


class AsBuffer(nn.Module):
    def __init__(self, persistent: bool = True) -> None:
        super().__init__()
        self.register_buffer("weight", torch.zeros(2, 2), persistent=persistent)


class AsParameter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(2, 2))


def twice_called() -> dict[str, list[float]]:
    """A layer applied twice in one forward: one key per call, one entry per pass each."""
    shared = nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        shared.weight.fill_(2.0)

    class Twice(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.shared = shared

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.shared(self.shared(x))

    model = Twice()
    with GradNormRecorder(model, modules=True) as recorder:
        model(torch.ones(1, 1)).sum().backward()
    return recorder.output_norms


def float16_norms() -> dict[str, float]:
    """Gradients of 60000 fit in float16 (max 65504); their norm, 84852.8, does not."""
    model = nn.Linear(2, 1, bias=False).half()
    with torch.no_grad():
        model.weight.zero_()
    with GradNormRecorder(model) as recorder:
        model(torch.full((1, 2), 60000.0, dtype=torch.float16)).sum().backward()
    return recorder.last()


def frozen_after_init() -> dict[str, float]:
    model = nn.Linear(1, 1)
    recorder = GradNormRecorder(model)
    model.bias.requires_grad_(False)
    with recorder:
        model(torch.ones(1, 1)).sum().backward()
    return recorder.last()


def bn_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))


def classifier_step(targets: torch.Tensor, loss_fn: Any = None) -> float:
    model = bn_model()
    return train_step_of(
        model, (torch.randn(4, 2), targets), loss_fn=loss_fn or nn.CrossEntropyLoss()
    )


def detached(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return nn.functional.mse_loss(output.detach(), target)


ISSUE_21_REFUSED = [
    # validation
    refused(
        "validation:check_bool:numpy.float64",
        lambda: check_bool(_f, "flag", np.float64(1.0)),
        TypeError,
        "_f",
        "flag",
        "got numpy.float64 1.0",
    ),
    refused(
        "validation:check_int:numpy.bool_",
        lambda: check_int(_f, "n", np.bool_(True)),
        TypeError,
        "_f",
        "n",
        "got numpy.bool True",
    ),
    refused(
        "validation:check_int:2**64-no-bounds",
        lambda: check_int(_f, "n", 2**64),
        ValueError,
        "_f",
        "n",
        "int64",
    ),
    refused(
        "validation:check_number:2**1100",
        lambda: check_number(_f, "x", 2**1100),
        ValueError,
        "_f",
        "x",
        "range of a float",
    ),
    refused(
        "validation:check_optimizer_options:Adam-betas>1",
        lambda: check_optimizer_options(_f, "options", {"betas": (0.9, 1.5)}, torch.optim.Adam),
        ValueError,
        "_f",
        "options['betas']",
        "Invalid beta parameter",
    ),
    refused(
        "validation:check_optimizer_options:LBFGS-max_eval-nan",
        lambda: check_optimizer_options(_f, "options", {"max_eval": math.nan}, torch.optim.LBFGS),
        ValueError,
        "_f",
        "options['max_eval']",
        "not NaN",
    ),
    refused(
        "validation:check_choice:True-among-ints",
        lambda: check_choice(_f, "groups", True, (1, 2)),
        TypeError,
        "_f",
        "groups",
        "got bool True",
    ),
    # finetune
    refused(
        "finetune:param_groups:Adam-betas>1",
        lambda: param_groups(cnn(), {"fc.*": {"betas": (0.9, 1.5)}}, optimizer=torch.optim.Adam),
        ValueError,
        "param_groups",
        "groups['fc.*']['betas']",
        "torch.optim.Adam accepts",
    ),
    refused(
        "finetune:param_groups:betas>1-any-optimizer",
        lambda: param_groups(cnn(), {"fc.*": {"betas": (1.0, 0.999)}}),
        ValueError,
        "param_groups",
        "groups['fc.*']['betas']",
        "Invalid beta",
    ),
    refused(
        "finetune:param_groups:SGD-momentum=-1",
        lambda: param_groups(cnn(), {"fc.*": {"momentum": -1.0}}, optimizer=torch.optim.SGD),
        ValueError,
        "param_groups",
        "groups['fc.*']['momentum']",
    ),
    refused(
        "finetune:replace_head:property",
        lambda: replace_head(WithPropertyHead(), "head", nn.Linear(2, 2)),
        ValueError,
        "replace_head",
        "attr",
        "property",
    ),
    refused(
        "finetune:replace_head:model-as-its-own-head",
        lambda: (lambda m: replace_head(m, "fc", m))(cnn()),
        ValueError,
        "replace_head",
        "new_head",
        "contains",
    ),
    refused(
        "finetune:replace_head:parent-as-head",
        lambda: (lambda m: replace_head(m, "features.0", m.features))(cnn()),
        ValueError,
        "replace_head",
        "new_head",
    ),
    refused(
        "finetune:unfreeze:integer-parameter",
        lambda: unfreeze(Counts()),
        ValueError,
        "unfreeze",
        "pattern",
        "torch.int64",
    ),
    # data
    refused(
        "data:BatchIndexSampler:data_source='abc'",
        lambda: BatchIndexSampler("abc", 2),
        TypeError,
        "BatchIndexSampler",
        "data_source",
    ),
    refused(
        "data:BatchIndexSampler:data_source=b'ab'",
        lambda: BatchIndexSampler(b"ab", 2),
        TypeError,
        "BatchIndexSampler",
        "data_source",
    ),
    refused(
        "data:batched_loader:Subset",
        lambda: batched_loader(torch.utils.data.Subset(dataset(4), [0, 2]), 2),
        TypeError,
        "batched_loader",
        "dataset",
        "Subset",
    ),
    refused(
        "data:batched_loader:ConcatDataset",
        lambda: batched_loader(torch.utils.data.ConcatDataset([dataset(2), dataset(2)]), 2),
        TypeError,
        "batched_loader",
        "dataset",
    ),
    # training
    refused(
        "training:train_step:frozen-model",
        lambda: (lambda m: train_step_of(m, (X, Y), optimizer=sgd(m)))(
            line().requires_grad_(False)
        ),
        ValueError,
        "train_step",
        "model",
        "frozen",
    ),
    refused(
        "training:train_step:model-without-parameters",
        lambda: train_step_of(nn.Identity(), (X, Y), optimizer=sgd(line())),
        ValueError,
        "train_step",
        "model",
        "no parameter",
    ),
    refused(
        "training:train_step:detached-loss",
        lambda: step(loss_fn=detached),
        ValueError,
        "train_step",
        "loss_fn",
        "does not require grad",
    ),
    refused(
        "training:train_step:int32-class-targets",
        lambda: classifier_step(torch.tensor([0, 1, 2, 0], dtype=torch.int32)),
        TypeError,
        "train_step",
        "targets",
        "int64",
    ),
    refused(
        "training:train_step:float-class-targets-of-wrong-shape",
        lambda: classifier_step(torch.tensor([0.0, 1.0, 2.0, 0.0])),
        ValueError,
        "train_step",
        "targets",
        "class probabilities of the output's shape (4, 3)",
    ),
    refused(
        "training:train_step:class-index-out-of-range",
        lambda: classifier_step(torch.tensor([0, 1, 7, 0])),
        ValueError,
        "train_step",
        "batch",
        "IndexError from loss_fn",
    ),
    refused(
        "training:train_step:int-targets-for-MSELoss",
        lambda: step((X, Y.long())),
        TypeError,
        "train_step",
        "targets",
        "floating point",
    ),
    refused(
        "training:train_step:int-targets-for-F.mse_loss",
        lambda: step((X, Y.long()), loss_fn=nn.functional.mse_loss),
        TypeError,
        "train_step",
        "targets",
    ),
    refused(
        "training:train_step:targets-on-another-device",
        lambda: step((X, Y.to("meta"))),
        ValueError,
        "train_step",
        "targets",
        "meta",
    ),
    refused(
        "training:accumulate_step:int-targets-in-second-micro-batch",
        lambda: accumulate([(X, Y), (X, Y.long())]),
        TypeError,
        "accumulate_step",
        "targets",
    ),
    refused(
        "training:accumulate_step:detached-loss",
        lambda: accumulate([(X, Y)], loss_fn=detached),
        ValueError,
        "accumulate_step",
        "loss_fn",
    ),
    # checkpoint: save
    refused(
        "checkpoint:save_checkpoint:extra=np.mean",
        lambda: saved_file(loss=np.mean([1.0, 2.0])),
        TypeError,
        "save_checkpoint",
        "loss",
        "numpy.float64",
    ),
    refused(
        "checkpoint:save_checkpoint:extra=np.random.get_state",
        lambda: saved_file(rng=np.random.get_state()),
        TypeError,
        "save_checkpoint",
        "rng",
        "numpy.ndarray at rng[1]",
    ),
    refused(
        "checkpoint:save_checkpoint:extra=datetime",
        lambda: saved_file(when=datetime.datetime(2026, 1, 1)),
        TypeError,
        "save_checkpoint",
        "when",
        "datetime.datetime",
    ),
    refused(
        "checkpoint:save_checkpoint:extra=ndarray",
        lambda: saved_file(weights=np.zeros(2)),
        TypeError,
        "save_checkpoint",
        "weights",
        "numpy.ndarray",
    ),
    refused(
        "checkpoint:save_checkpoint:extra=lambda",
        lambda: saved_file(fn=lambda: 0),
        TypeError,
        "save_checkpoint",
        "fn",
        "cannot be pickled",
    ),
    refused(
        "checkpoint:save_checkpoint:optimizer-of-another-model",
        lambda: save_checkpoint(
            str(Path(tempfile.mkdtemp()) / "c.pt"), nn.Linear(1, 1), sgd(nn.Linear(1, 1))
        ),
        ValueError,
        "save_checkpoint",
        "optimizer",
        "not a parameter of model",
    ),
    refused(
        "checkpoint:save_checkpoint:scheduler-of-another-optimizer",
        lambda: save_checkpoint(
            str(Path(tempfile.mkdtemp()) / "c.pt"),
            LINEAR,
            sgd(LINEAR),
            torch.optim.lr_scheduler.StepLR(sgd(LINEAR), 1),
        ),
        ValueError,
        "save_checkpoint",
        "scheduler",
    ),
    refused(
        "checkpoint:save_checkpoint:path=folder",
        lambda: save_checkpoint(tempfile.mkdtemp(), LINEAR, sgd(LINEAR)),
        ValueError,
        "save_checkpoint",
        "path",
        "a directory",
    ),
    refused(
        "checkpoint:save_checkpoint:path-in-missing-folder",
        lambda: save_checkpoint(str(Path(tempfile.mkdtemp()) / "a" / "c.pt"), LINEAR, sgd(LINEAR)),
        FileNotFoundError,
        "save_checkpoint",
        "path",
        "existing folder",
    ),
    # checkpoint: load
    refused(
        "checkpoint:load_checkpoint:shape-mismatch",
        lambda: load_into(nn.Linear(3, 1)),
        ValueError,
        "load_checkpoint",
        "model",
        "weight is (1, 2) torch.float32 in the checkpoint, (1, 3) torch.float32 in model",
    ),
    refused(
        "checkpoint:load_checkpoint:dtype-mismatch",
        lambda: load_into(nn.Linear(2, 1).double()),
        ValueError,
        "load_checkpoint",
        "model",
        "torch.float64 in model",
    ),
    refused(
        "checkpoint:load_checkpoint:missing-key",
        lambda: load_into(nn.Linear(2, 1, bias=False)),
        ValueError,
        "load_checkpoint",
        "model",
        "not in model: bias",
    ),
    refused(
        "checkpoint:load_checkpoint:unexpected-key",
        lambda: load_into(nn.Sequential(nn.Linear(2, 1))),
        ValueError,
        "load_checkpoint",
        "model",
        "missing from the checkpoint: 0.weight",
    ),
    refused(
        "checkpoint:load_checkpoint:SGD-state-into-Adam",
        lambda: load_into(
            nn.Linear(2, 1),
            path=(
                lambda m: (
                    save_checkpoint(p := str(Path(tempfile.mkdtemp()) / "c.pt"), m, sgd(m)),
                    p,
                )[1]
            )(nn.Linear(2, 1)),
            optimizer=lambda m: torch.optim.Adam(m.parameters()),
        ),
        ValueError,
        "load_checkpoint",
        "optimizer",
        "a torch.optim.SGD, as in the checkpoint",
    ),
    refused(
        "checkpoint:load_checkpoint:AdamW-state-into-Adam",
        lambda: load_into(nn.Linear(2, 1), lambda m: torch.optim.Adam(m.parameters())),
        ValueError,
        "load_checkpoint",
        "optimizer",
        "got a torch.optim.Adam",
    ),
    refused(
        "checkpoint:load_checkpoint:StepLR-into-ExponentialLR",
        lambda: load_into(
            nn.Linear(2, 1), adamw, lambda o: torch.optim.lr_scheduler.ExponentialLR(o, 0.5)
        ),
        ValueError,
        "load_checkpoint",
        "scheduler",
        "StepLR",
    ),
    refused(
        "checkpoint:load_checkpoint:optimizer-of-another-model",
        lambda: load_into(nn.Linear(2, 1), lambda m: adamw(nn.Linear(2, 1))),
        ValueError,
        "load_checkpoint",
        "optimizer",
        "not a parameter of model",
    ),
    refused(
        "checkpoint:load_checkpoint:parameters-in-another-order",
        lambda: load_into(nn.Linear(2, 1), lambda m: torch.optim.AdamW([m.bias, m.weight], lr=0.1)),
        ValueError,
        "load_checkpoint",
        "optimizer",
        "same order",
    ),
    refused(
        "checkpoint:load_checkpoint:group-layout",
        lambda: load_into(
            nn.Linear(2, 1),
            lambda m: torch.optim.AdamW([{"params": [m.weight]}, {"params": [m.bias]}]),
        ),
        ValueError,
        "load_checkpoint",
        "optimizer",
        "sizes [2]",
    ),
    refused(
        "checkpoint:load_checkpoint:empty-file",
        lambda: load_checkpoint(file_with(b""), LINEAR),
        ValueError,
        "load_checkpoint",
        "path",
        "empty",
    ),
    refused(
        "checkpoint:load_checkpoint:truncated-file",
        lambda: load_checkpoint(truncated_file(), LINEAR),
        ValueError,
        "load_checkpoint",
        "path",
        "damaged",
    ),
    refused(
        "checkpoint:load_checkpoint:plain-pickle",
        lambda: load_checkpoint(file_with(pickle.dumps({1: 2})), LINEAR),
        ValueError,
        "load_checkpoint",
        "path",
        "damaged",
    ),
    refused(
        "checkpoint:load_checkpoint:pickled-object",
        lambda: load_checkpoint(
            file_with(pickle.dumps(datetime.date(2026, 1, 1), protocol=2)), LINEAR
        ),
        ValueError,
        "load_checkpoint",
        "path",
        "weights_only=True refuses",
    ),
    refused(
        "checkpoint:load_checkpoint:missing-file",
        lambda: load_checkpoint(str(Path(tempfile.mkdtemp()) / "none.pt"), LINEAR),
        FileNotFoundError,
        "load_checkpoint",
        "path",
        "does not exist",
    ),
    refused(
        "checkpoint:load_checkpoint:path=folder",
        lambda: load_checkpoint(tempfile.mkdtemp(), LINEAR),
        ValueError,
        "load_checkpoint",
        "path",
    ),
]
ISSUE_21_RESULTS = [
    result(
        "validation:check_bool:numpy.bool_",
        lambda: check_bool(_f, "flag", np.bool_(False)),
        lambda b: b is False,
    ),
    result(
        "validation:check_int:numpy.int64",
        lambda: check_int(_f, "n", np.int64(7), minimum=1),
        lambda n: n == 7 and type(n) is int,
    ),
    result(
        "validation:check_number:numpy.float32",
        lambda: check_number(_f, "x", np.float32(0.5)),
        lambda x: x == 0.5 and type(x) is float,
    ),
    result(
        "validation:check_int:INT64_MAX",
        lambda: check_int(_f, "n", 2**63 - 1),
        lambda n: n == 2**63 - 1,
    ),
    result(
        "finetune:param_groups:SGD-nesterov-with-momentum-from-the-constructor",
        lambda: torch.optim.SGD(
            param_groups(cnn(), {"fc.*": {"nesterov": True}}, optimizer=torch.optim.SGD),
            lr=0.1,
            momentum=0.9,
        ),
        lambda o: o.param_groups[0]["nesterov"] is True,
    ),
    result(
        "finetune:param_groups:Adam-betas-in-range",
        lambda: param_groups(cnn(), {"fc.*": {"betas": (0.8, 0.9)}}, optimizer=torch.optim.Adam),
        lambda g: g[0]["betas"] == (0.8, 0.9),
    ),
    result(
        "finetune:freeze:integer-parameter-already-frozen",
        lambda: freeze(Counts()),
        lambda names: names == ["scale"],
    ),
    result(
        "sequential:same_structure:parameter-vs-buffer",
        lambda: same_structure(AsParameter(), AsBuffer()),
        lambda r: r is False,
    ),
    result(
        "sequential:same_structure:persistent-vs-not",
        lambda: same_structure(AsBuffer(), AsBuffer(persistent=False)),
        lambda r: r is False,
    ),
    result(
        "sequential:same_structure:buffer-vs-buffer",
        lambda: same_structure(AsBuffer(), AsBuffer()),
        lambda r: r is True,
    ),
    result(
        "hooks:GradNormRecorder:float16-norms-in-float32",
        float16_norms,
        lambda r: (
            math.isfinite(r["weight"]) and math.isclose(r["weight"], 60000 * 2**0.5, rel_tol=1e-6)
        ),
    ),
    result(
        "hooks:GradNormRecorder:module-called-twice-labelled",
        twice_called,
        lambda r: (
            list(r) == ["shared", "shared#2"] and r["shared"] == [2.0] and r["shared#2"] == [1.0]
        ),
    ),
    result(
        "hooks:GradNormRecorder:parameter-frozen-after-init",
        frozen_after_init,
        lambda r: list(r) == ["weight"],
    ),
    result(
        "data:TensorBatchDataset.__getitem__:numpy.int64",
        lambda: dataset()[np.int64(2)],
        lambda r: r[1].item() == 2,
    ),
    result(
        "data:batched_loader:Subset-with-tensor-indices",
        lambda: batches(
            batched_loader(torch.utils.data.Subset(dataset(4), torch.tensor([3, 1])), 2)
        ),
        lambda b: b == [[3, 1]],
    ),
    result(
        "training:train_step:float-class-probabilities",
        lambda: classifier_step(torch.full((4, 3), 1 / 3)),
        lambda loss: math.isfinite(loss),
    ),
    result(
        "checkpoint:save_checkpoint:extra-converted-from-numpy",
        lambda: load_checkpoint(
            saved_file(loss=float(np.mean([1.0, 2.0])), weights=torch.from_numpy(np.zeros(2))),
            nn.Linear(2, 1),
        ),
        lambda extra: extra["loss"] == 1.5 and extra["weights"].tolist() == [0.0, 0.0],
    ),
    result(
        "checkpoint:load_checkpoint:resume-everything",
        lambda: load_into(nn.Linear(2, 1), adamw, lambda o: torch.optim.lr_scheduler.StepLR(o, 1)),
        lambda extra: extra == {},
    ),
]


# -- recheck of issue 21: cases invented anew (a careless user, an adversarial reader) ----


def lazy_bn_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.LazyLinear(3), nn.BatchNorm1d(3))


def saved_run() -> Path:
    """A checkpoint of :func:`trained_run` without its scheduler."""
    path = Path(tempfile.mkdtemp()) / "ckpt.pt"
    model, optimizer, _ = trained_run()
    save_checkpoint(path, model, optimizer)
    return path


def unwritable_folder() -> None:
    refusal = PermissionError(13, "Permission denied")
    with mock.patch("ptnotes.checkpoint.tempfile.NamedTemporaryFile", side_effect=refusal):
        save_checkpoint(Path(tempfile.mkdtemp()) / "ckpt.pt", LINEAR, sgd(LINEAR))


def lazy_resumed() -> tuple[int, tuple[int, ...]]:
    model = lazy_bn_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    load_checkpoint(saved_run(), model, optimizer)
    weight = model[0].weight
    return tuple(weight.shape), tuple(optimizer.state[weight]["momentum_buffer"].shape)


def sparse_step(optimizer: Callable[[Any], torch.optim.Optimizer]) -> float:
    from ptnotes.training import train_step

    model = nn.Sequential(nn.Embedding(4, 1, sparse=True), nn.Flatten(0))
    batch = (torch.tensor([0, 1]), torch.tensor([1.0, 2.0]))
    return train_step(model, batch, nn.MSELoss(), optimizer(model.parameters()))


def direct_calls() -> dict[str, list[float]]:
    model = nn.Sequential(nn.Linear(2, 2))
    with GradNormRecorder(model, modules=True) as recorder:
        for _ in range(3):
            model[0](torch.ones(1, 2)).sum().backward()
    return recorder.output_norms


def large_norm(dtype: torch.dtype) -> float:
    layer = nn.Linear(4, 1, bias=False).to(dtype)
    with GradNormRecorder(layer) as recorder:
        layer(torch.full((1, 4), 1e20, dtype=dtype)).sum().backward()
    return recorder.parameter_norms["weight"][0]


def chained_subsets(inner: Any) -> list[list[int]]:
    tensors = TensorDataset(torch.arange(6.0), torch.arange(6))
    loader = batched_loader(Subset(Subset(tensors, inner), torch.tensor([0, 2])), 2)
    return [y.tolist() for _, y in loader]


def autocast_call(model: SmallCNN, x: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return model(x)


def half_double_cnn() -> SmallCNN:
    model = cnn()
    model.features.double()  # the backbone only
    return model


def under_autocast() -> torch.dtype:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return cnn()(torch.zeros(1, 3, 4, 4, dtype=torch.bfloat16)).dtype


def nested() -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "the PyTorch API of nested tensors is in prototype"
        return torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)])


def empty_linear() -> nn.Linear:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "Initializing zero-element tensors is a no-op"
        return nn.Linear(0, 0)


def inference_tensor() -> torch.Tensor:
    with torch.inference_mode():
        return torch.ones(2)


RECHECK_21_REFUSED = [
    refused(
        "checkpoint:save_checkpoint:path=''",
        lambda: save_checkpoint("", LINEAR, sgd(LINEAR)),
        ValueError,
        "save_checkpoint",
        "path",
    ),
    refused(
        "checkpoint:save_checkpoint:path-with-NUL",
        lambda: save_checkpoint("ckpt\0.pt", LINEAR, sgd(LINEAR)),
        ValueError,
        "save_checkpoint",
        "path",
    ),
    refused(
        "checkpoint:load_checkpoint:path=''",
        lambda: load_checkpoint("", LINEAR),
        ValueError,
        "load_checkpoint",
        "path",
    ),
    refused(
        "checkpoint:save_checkpoint:unwritable-folder",
        unwritable_folder,
        PermissionError,
        "save_checkpoint",
        "path",
        "in a folder it can write to",
    ),
    refused(
        "checkpoint:save_checkpoint:scheduler=optimizer",
        lambda: save_checkpoint("x.pt", LINEAR, sgd(LINEAR), sgd(LINEAR)),
        TypeError,
        "save_checkpoint",
        "scheduler",
        "an optimizer or a model",
    ),
    refused(
        "checkpoint:load_checkpoint:scheduler=model",
        lambda: load_checkpoint("x.pt", LINEAR, None, LINEAR),
        TypeError,
        "load_checkpoint",
        "scheduler",
    ),
    refused(
        "checkpoint:save_checkpoint:meta-model",
        lambda: (lambda m: save_checkpoint("x.pt", m, sgd(m)))(nn.Linear(2, 1, device="meta")),
        ValueError,
        "save_checkpoint",
        "model",
        "meta device",
    ),
    refused(
        "checkpoint:load_checkpoint:meta-model",
        lambda: load_checkpoint(saved_run(), bn_model().to("meta")),
        ValueError,
        "load_checkpoint",
        "model",
        "meta device",
    ),
    refused(
        "checkpoint:load_checkpoint:map_location='gpu'",
        lambda: load_checkpoint(saved_run(), bn_model(), map_location="gpu"),
        ValueError,
        "load_checkpoint",
        "map_location",
        "'gpu'",
    ),
    refused(
        "checkpoint:load_checkpoint:map_location='meta'",
        lambda: load_checkpoint(saved_run(), bn_model(), map_location=torch.device("meta")),
        ValueError,
        "load_checkpoint",
        "map_location",
        "meta device",
    ),
    refused(
        "checkpoint:load_checkpoint:map_location-not-on-this-machine",
        lambda: load_checkpoint(saved_run(), bn_model(), map_location="hpu"),
        ValueError,
        "load_checkpoint",
        "map_location",
        "this machine",
    ),
    refused(
        "training:train_step:inputs-on-meta",
        lambda: step((X.to("meta"), Y)),
        ValueError,
        "train_step",
        "inputs",
        "model's device",
    ),
    refused(
        "training:accumulate_step:inputs-on-meta",
        lambda: accumulate([(X.to("meta"), Y)]),
        ValueError,
        "accumulate_step",
        "the inputs of micro_batches[0]",
    ),
    refused(
        "training:train_step:inputs-the-model-refuses",
        lambda: step((torch.ones(2, 3), Y)),
        ValueError,
        "train_step",
        "batch",
        "RuntimeError from model",
    ),
    refused(
        "training:train_step:list-targets-MSELoss",
        lambda: step((X, [[2.0], [4.0]])),
        TypeError,
        "train_step",
        "targets",
        "a tensor for MSELoss",
    ),
    refused(
        "training:train_step:LBFGS",
        lambda: step(optimizer=torch.optim.LBFGS(LINEAR.parameters())),
        TypeError,
        "train_step",
        "optimizer",
        "closure",
    ),
    refused(
        "training:accumulate_step:LBFGS",
        lambda: accumulate([(X, Y)], optimizer=torch.optim.LBFGS(LINEAR.parameters())),
        TypeError,
        "accumulate_step",
        "optimizer",
        "closure",
    ),
    refused(
        "training:train_step:SparseAdam-dense-gradients",
        lambda: train_step_of(
            LINEAR, (X, Y), optimizer=torch.optim.SparseAdam(LINEAR.parameters())
        ),
        ValueError,
        "train_step",
        "optimizer",
        "dense",
    ),
    refused(
        "checkpoint:load_checkpoint:map_location='cpu:1'",
        lambda: load_checkpoint(saved_linear()[0], nn.Linear(2, 1), map_location="cpu:1"),
        ValueError,
        "load_checkpoint",
        "map_location",
        "the CPU is one device",
    ),
    refused(  # a CPU build has no accelerator; a CUDA build without a GPU has no driver
        "layers:Linear:device=0-without-accelerator",
        lambda: Linear(3, 2, device=0),
        ValueError,
        "Linear",
        "device",
    ),
    refused(
        "training:train_step:Adam-sparse-gradients",
        lambda: sparse_step(torch.optim.Adam),
        ValueError,
        "train_step",
        "optimizer",
        "sparse gradient",
    ),
    refused(
        "hooks:GradNormRecorder.__enter__:lazy-model",
        lambda: GradNormRecorder(nn.LazyLinear(2)).__enter__(),
        ValueError,
        "GradNormRecorder",
        "model",
        "uninitialised (lazy)",
    ),
    refused(
        "data:batched_loader:Subset(tensor)-of-Subset(list)",
        lambda: chained_subsets([0, 1, 2]),
        TypeError,
        "batched_loader",
        "dataset",
        "Subset inside Subset",
    ),
    refused(
        "data:batched_loader:Subset(tensor)-of-ConcatDataset",
        lambda: batched_loader(Subset(ConcatDataset([dataset(), dataset()]), torch.tensor([0])), 1),
        TypeError,
        "batched_loader",
        "dataset",
        "ConcatDataset inside Subset",
    ),
    refused(
        "convert:to_numpy:nested-tensor",
        lambda: to_numpy(nested()),
        ValueError,
        "to_numpy",
        "tensor",
        "nested",
    ),
    refused(
        "functions:clamp_:expanded-view",
        lambda: clamp_(torch.zeros(1).expand(3), 1.0, 2.0),
        ValueError,
        "clamp_",
        "x",
        "expanded view",
    ),
    refused(
        "functions:clamp_:inference-tensor-outside-inference-mode",
        lambda: clamp_(inference_tensor(), 0.0, 0.5),
        ValueError,
        "clamp_",
        "x",
        "inference_mode",
    ),
    refused(
        "layers:Linear:device-not-on-this-machine",
        lambda: Linear(3, 2, device="hpu"),
        ValueError,
        "Linear",
        "device",
        "this machine",
    ),
    refused(
        "models:SmallCNN.forward:float64-batch",
        lambda: cnn()(torch.zeros(1, 3, 4, 4, dtype=torch.float64)),
        ValueError,
        "SmallCNN.forward",
        "x",
        "model's dtype and device",
    ),
    refused(
        "models:SmallCNN.forward:float64-batch-under-autocast",
        lambda: autocast_call(cnn(), torch.zeros(1, 3, 4, 4, dtype=torch.float64)),
        ValueError,
        "SmallCNN.forward",
        "x",
        "model's dtype and device",
    ),
    refused(
        "models:SmallCNN.forward:float32-batch-float64-model-under-autocast",
        lambda: autocast_call(cnn().double(), torch.zeros(1, 3, 4, 4)),
        ValueError,
        "SmallCNN.forward",
        "x",
        "torch.float64",
    ),
    refused(
        "models:SmallCNN.forward:half-converted-model",
        lambda: half_double_cnn()(torch.zeros(1, 3, 4, 4, dtype=torch.float64)),
        ValueError,
        "SmallCNN.forward",
        "the model",
        "one dtype and device",
    ),
    refused(
        "models:SmallCNN.forward:meta-batch",
        lambda: cnn()(torch.zeros(1, 3, 4, 4, device="meta")),
        ValueError,
        "SmallCNN.forward",
        "x",
        "on meta",
    ),
    refused(
        "distributed:run_parallel:timeout=1e12",
        lambda: run_parallel(top_level, 1, timeout=1e12),
        ValueError,
        "run_parallel",
        "timeout",
        "<= 2147483",
    ),
    refused(
        "validation:check_device:'gpu'",
        lambda: check_device(_f, "device", "gpu"),
        ValueError,
        "_f",
        "device",
    ),
    refused(
        "validation:check_device:True",
        lambda: check_device(_f, "device", True),
        TypeError,
        "_f",
        "device",
    ),
    refused(
        "validation:check_device:'meta'-without-meta",
        lambda: check_device(_f, "device", "meta", meta=False),
        ValueError,
        "_f",
        "device",
    ),
]
RECHECK_21_RESULTS = [
    result(
        "checkpoint:load_checkpoint:lazy-model-and-its-optimizer",
        lazy_resumed,
        lambda shapes: shapes == ((3, 2), (3, 2)),
    ),
    result(
        "training:train_step:SGD-sparse-gradients",
        lambda: sparse_step(lambda p: torch.optim.SGD(p, lr=0.1)),
        math.isfinite,
    ),
    result(
        "hooks:GradNormRecorder:bfloat16-norm-beyond-float32",
        lambda: large_norm(torch.bfloat16),
        lambda norm: math.isfinite(norm) and abs(norm - 2e20) / 2e20 < 0.01,
    ),
    result(
        "hooks:GradNormRecorder:float32-norm-beyond-float32",
        lambda: large_norm(torch.float32),
        lambda norm: math.isfinite(norm) and abs(norm - 2e20) / 2e20 < 1e-6,
    ),
    result(
        "hooks:GradNormRecorder:submodule-called-directly-per-pass",
        direct_calls,
        lambda norms: list(norms) == ["0"] and len(norms["0"]) == 3,
    ),
    result(
        "data:batched_loader:Subset(tensor)-of-Subset(tensor)",
        lambda: chained_subsets(torch.tensor([1, 2, 3])),
        lambda batches: batches == [[1, 3]],
    ),
    result(
        "sequential:sequential_from:name='forward'-positional",
        lambda: sequential_from([("forward", nn.ReLU())], "positional"),
        lambda built: isinstance(built[0], nn.ReLU),
    ),
    result(
        "sequential:same_structure:weight_norm-twice",
        lambda: same_structure(weight_norm(nn.Linear(2, 2)), weight_norm(nn.Linear(2, 2))),
        lambda same: same is True,
    ),
    result(
        "sequential:same_structure:LazyLinear(2)-vs-LazyLinear(3)",
        lambda: same_structure(nn.LazyLinear(2), nn.LazyLinear(3)),
        lambda same: same is False,
    ),
    result(
        "checkpoint:load_checkpoint:map_location='cpu:0'",
        lambda: load_checkpoint(saved_linear()[0], nn.Linear(2, 1), map_location="cpu:0"),
        lambda extra: extra == {},
    ),
    result(
        "models:SmallCNN.forward:bfloat16-under-autocast",
        under_autocast,
        lambda dtype: dtype == torch.bfloat16,
    ),
    result(
        "init:init_weights:Linear(0,0)",
        lambda: init_weights(empty_linear()),
        lambda value: value is None,
    ),
    result(
        "validation:check_device:'cpu'",
        lambda: check_device(_f, "device", "cpu"),
        lambda device: device == torch.device("cpu"),
    ),
]


REFUSED = [
    *CONVERT_REFUSED,
    *LAYERS_REFUSED,
    *FUNCTIONS_REFUSED,
    *SEQUENTIAL_REFUSED,
    *INIT_REFUSED,
    *DATA_REFUSED,
    *MODELS_REFUSED,
    *FINETUNE_REFUSED,
    *TRAINING_REFUSED,
    *GRAPH_REFUSED,
    *DISTRIBUTED_REFUSED,
    *HOOKS_REFUSED,
    *CHECKPOINT_REFUSED,
    *REPRODUCIBILITY_REFUSED,
    *VALIDATION_REFUSED,
    *GENERATED_REFUSED,
    *ISSUE_21_REFUSED,
    *RECHECK_21_REFUSED,
]
RESULTS = [
    *CONVERT_RESULTS,
    *LAYERS_RESULTS,
    *FUNCTIONS_RESULTS,
    *SEQUENTIAL_RESULTS,
    *INIT_RESULTS,
    *DATA_RESULTS,
    *MODELS_RESULTS,
    *FINETUNE_RESULTS,
    *TRAINING_RESULTS,
    *GRAPH_RESULTS,
    *DISTRIBUTED_RESULTS,
    *HOOKS_RESULTS,
    *CHECKPOINT_RESULTS,
    *REPRODUCIBILITY_RESULTS,
    *VALIDATION_RESULTS,
    *GENERATED_RESULTS,
    *ISSUE_21_RESULTS,
    *RECHECK_21_RESULTS,
]


@pytest.mark.parametrize(("call", "expected"), REFUSED)
def test_bad_input_is_refused_with_a_message_naming_the_argument(
    call: Callable[[], object], expected: Refused
) -> None:
    with pytest.raises(Exception) as raised:  # noqa: PT011  # the exact type is checked below
        call()
    message = str(raised.value)
    assert type(raised.value) is expected.error, f"{type(raised.value).__name__}: {message}"
    assert message.startswith(f"{expected.caller}() expects {expected.argument} to "), message
    assert expected.fragment in message


@pytest.mark.parametrize(("call", "check"), RESULTS)
def test_good_input_gives_the_correct_result(
    call: Callable[[], object], check: Callable[[Any], object]
) -> None:
    assert check(call())


# -- after every refused call, the objects passed in are unchanged ----------------------
#
# One row per refusal of a public function that changes something (a model, an
# optimizer, a scheduler, a tensor, a file): the `unchanged` fixture (tests/_state.py)
# snapshots every object the call is given and compares after the refusal: tensors,
# gradients, requires_grad, buffers (batch norm's running statistics), hooks, optimizer
# options and state, scheduler state, the file's bytes and its folder's listing.


@dataclass(frozen=True)
class Mutation:
    """``build()`` gives ``(objects, call)``; ``call()`` raises and leaves ``objects`` alone."""

    build: Callable[[], tuple[tuple[object, ...], Callable[[], object]]]
    error: type[Exception]
    caller: str  # "" when the error is not ptnotes' own (a module that refuses hooks)
    argument: str = ""


def mutation(
    row: str,
    build: Callable[[], tuple[tuple[object, ...], Callable[[], object]]],
    error: type[Exception],
    caller: str,
    argument: str = "",
) -> Any:
    return pytest.param(Mutation(build, error, caller, argument), id=row)


def trained_run() -> tuple[nn.Module, torch.optim.Optimizer, Any]:
    """A model with batch norm, gradients, momentum state and a stepped scheduler."""
    model = bn_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)
    for _ in range(2):
        optimizer.zero_grad()
        model(torch.randn(4, 2)).sum().backward()
        optimizer.step()
        scheduler.step()
    model(torch.randn(4, 2)).sum().backward()  # .grad is not None now
    return model, optimizer, scheduler


def run_file(
    make: Callable[[], tuple[nn.Module, torch.optim.Optimizer, Any]] = trained_run,
) -> Path:
    path = Path(tempfile.mkdtemp()) / "ckpt.pt"
    save_checkpoint(path, *make())
    return path


def save_case(**extra: Any) -> Callable[[], tuple[tuple[object, ...], Callable[[], object]]]:
    def build() -> tuple[tuple[object, ...], Callable[[], object]]:
        path = run_file()
        model, optimizer, scheduler = trained_run()
        objects = (path, model, optimizer, scheduler)
        return objects, lambda: save_checkpoint(path, model, optimizer, scheduler, **extra)

    return build


def save_foreign_optimizer() -> tuple[tuple[object, ...], Callable[[], object]]:
    path = run_file()
    model, optimizer, _ = trained_run()
    other = torch.optim.SGD(bn_model().parameters(), lr=0.1)
    return (path, model, optimizer, other), lambda: save_checkpoint(path, model, other)


def save_foreign_scheduler() -> tuple[tuple[object, ...], Callable[[], object]]:
    path = run_file()
    model, optimizer, _ = trained_run()
    scheduler = torch.optim.lr_scheduler.StepLR(torch.optim.SGD(model.parameters()), 1)
    return (path, model, optimizer, scheduler), lambda: save_checkpoint(
        path, model, optimizer, scheduler
    )


def load_case(
    into: Callable[[], tuple[nn.Module, torch.optim.Optimizer | None, Any]],
    path: Callable[[], Path] = run_file,
) -> Callable[[], tuple[tuple[object, ...], Callable[[], object]]]:
    def build() -> tuple[tuple[object, ...], Callable[[], object]]:
        file = path()
        model, optimizer, scheduler = into()
        objects = tuple(o for o in (file, model, optimizer, scheduler) if o is not None)
        return objects, lambda: load_checkpoint(file, model, optimizer, scheduler)

    return build


def run_with(
    model: Callable[[], nn.Module] = bn_model,
    optimizer: Callable[[nn.Module], torch.optim.Optimizer] | None = None,
    scheduler: Callable[[torch.optim.Optimizer], Any] | None = None,
) -> Callable[[], tuple[nn.Module, torch.optim.Optimizer | None, Any]]:
    def build() -> tuple[nn.Module, torch.optim.Optimizer | None, Any]:
        built, reference_optimizer, _ = trained_run()
        if model is not bn_model:
            built = model()
        opt = (
            reference_optimizer
            if optimizer is None and model is bn_model
            else (optimizer(built) if optimizer else None)
        )
        sched = scheduler(opt) if scheduler and opt is not None else None
        return built, opt, sched

    return build


def sgd_momentum(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def empty_file() -> Path:
    path = Path(tempfile.mkdtemp()) / "ckpt.pt"
    path.write_bytes(b"")
    return path


def cut_file() -> Path:
    path = run_file()
    path.write_bytes(path.read_bytes()[:300])
    return path


def foreign_file() -> Path:
    path = Path(tempfile.mkdtemp()) / "ckpt.pt"
    torch.save(bn_model().state_dict(), path)
    return path


def no_scheduler_file() -> Path:
    path = Path(tempfile.mkdtemp()) / "ckpt.pt"
    model, optimizer, _ = trained_run()
    save_checkpoint(path, model, optimizer)
    return path


def step_case(
    targets: Callable[[], Any],
    loss_fn: Any = None,
    model: Callable[[], nn.Module] | None = None,
    optimizer: Callable[[nn.Module], torch.optim.Optimizer] | None = None,
    accumulate: bool = False,
) -> Callable[[], tuple[tuple[object, ...], Callable[[], object]]]:
    def build() -> tuple[tuple[object, ...], Callable[[], object]]:
        from ptnotes.training import accumulate_step, train_step

        run_model, run_optimizer, _ = trained_run()
        if model is not None:
            run_model = model()
        if optimizer is not None:
            run_optimizer = optimizer(run_model)
        inputs, bad = torch.randn(4, 2), targets()
        fn = loss_fn or nn.CrossEntropyLoss()
        objects = (run_model, run_optimizer, inputs, bad)
        if accumulate:
            good = torch.tensor([0, 1, 2, 0])
            pairs = [(inputs, good), (inputs, bad)]  # the second is refused after a backward
            return objects, lambda: accumulate_step(run_model, pairs, fn, run_optimizer)
        return objects, lambda: train_step(run_model, (inputs, bad), fn, run_optimizer)

    return build


def frozen_bn() -> nn.Module:
    return bn_model().requires_grad_(False)


def module_case(
    make: Callable[[], nn.Module], call: Callable[[nn.Module], object], *more: Callable[[], object]
) -> Callable[[], tuple[tuple[object, ...], Callable[[], object]]]:
    def build() -> tuple[tuple[object, ...], Callable[[], object]]:
        module = make()
        return (module,), lambda: call(module)

    return build


def half_frozen_counts() -> nn.Module:
    model = Counts()
    model.scale.requires_grad_(False)  # unfreeze would turn it back on first, then fail
    return model


class NoForwardHooks(nn.Linear):
    """A module that refuses forward hooks (as some scripted or wrapped modules do)."""

    def register_forward_hook(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("this module takes no forward hooks")


def recorder_case() -> tuple[tuple[object, ...], Callable[[], object]]:
    model = nn.Sequential(nn.Linear(1, 1), NoForwardHooks(1, 1))
    recorder = GradNormRecorder(model, modules=True)
    return (model, recorder), recorder.__enter__


def clamp_case(
    x: Callable[[], torch.Tensor], low: object, high: object
) -> Callable[[], tuple[tuple[object, ...], Callable[[], object]]]:
    def build() -> tuple[tuple[object, ...], Callable[[], object]]:
        tensor = x()
        return (tensor,), lambda: clamp_(tensor, low, high)

    return build


def clamp_view_case() -> Callable[[], tuple[tuple[object, ...], Callable[[], object]]]:
    """clamp_ on a view of a leaf that requires grad: the leaf is what must stay unchanged."""

    def build() -> tuple[tuple[object, ...], Callable[[], object]]:
        leaf = torch.tensor([-2.0, 0.5, 2.0], requires_grad=True)
        return (leaf,), lambda: clamp_(leaf[::2], -1.0, 1.0)

    return build


def epoch_case(epoch: object) -> Callable[[], tuple[tuple[object, ...], Callable[[], object]]]:
    def build() -> tuple[tuple[object, ...], Callable[[], object]]:
        sampler = BatchIndexSampler(4, 2, shuffle=True, seed=3)
        sampler.set_epoch(2)
        return (sampler,), lambda: sampler.set_epoch(epoch)

    return build


def sequential_case() -> tuple[tuple[object, ...], Callable[[], object]]:
    first, second = nn.Linear(1, 1), nn.Linear(1, 1)
    return (first, second), lambda: sequential_from([("a", first), ("a", second)], "add_module")


def param_groups_case() -> tuple[tuple[object, ...], Callable[[], object]]:
    model = cnn()
    return (model,), lambda: param_groups(
        model, {"fc.*": {"betas": (0.9, 1.5)}}, optimizer=torch.optim.Adam
    )


def predicate_changes_its_mind(name: str, parameter: nn.Parameter) -> Any:
    return True if name.startswith("features") else "no"


class Refusing:
    """A scheduler whose ``load_state_dict`` refuses, after ptnotes' checks have passed."""

    def state_dict(self) -> dict[str, Any]:
        return {"k": 1}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        raise ValueError("this scheduler refuses the state")


def refusing_run() -> Path:
    path = Path(tempfile.mkdtemp()) / "ckpt.pt"
    model = bn_model()
    model(torch.randn(4, 2)).sum().backward()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    save_checkpoint(path, model, optimizer, Refusing())
    return path


def _with_extra_parameter() -> tuple[nn.Module, torch.optim.Optimizer, nn.Parameter]:
    model = bn_model()
    model(torch.randn(4, 2)).sum().backward()
    extra = nn.Parameter(torch.zeros(2))
    extra.grad = torch.ones(2)
    return model, torch.optim.SGD([*model.parameters(), extra], lr=0.1), extra


def step_with_extra_parameter() -> tuple[tuple[object, ...], Callable[[], object]]:
    from ptnotes.training import train_step

    model, optimizer, extra = _with_extra_parameter()
    batch = (torch.randn(4, 2), torch.randn(4))  # (4,) against the output's (4, 3)
    return (model, optimizer, extra), lambda: train_step(model, batch, nn.MSELoss(), optimizer)


def accumulate_with_extra_parameter() -> tuple[tuple[object, ...], Callable[[], object]]:
    from ptnotes.training import accumulate_step

    model, optimizer, extra = _with_extra_parameter()
    good = (torch.randn(2, 2), torch.randn(2, 3))
    bad = (torch.randn(2, 2), torch.randn(2))
    return (model, optimizer, extra), lambda: accumulate_step(
        model, [good, bad], nn.MSELoss(), optimizer
    )


def dropout_step(
    accumulated: bool,
) -> Callable[[], tuple[tuple[object, ...], Callable[[], object]]]:
    def build() -> tuple[tuple[object, ...], Callable[[], object]]:
        from ptnotes.training import accumulate_step, train_step

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 3), nn.Dropout(0.5))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        bad = (torch.randn(4, 2), torch.randn(4))
        objects = (model, optimizer, GLOBAL_RNG)
        if accumulated:
            good = (torch.randn(4, 2), torch.randn(4, 3))
            return objects, lambda: accumulate_step(model, [good, bad], nn.MSELoss(), optimizer)
        return objects, lambda: train_step(model, bad, nn.MSELoss(), optimizer)

    return build


def sparse_adam_step() -> tuple[tuple[object, ...], Callable[[], object]]:
    from ptnotes.training import train_step

    model = bn_model()
    model(torch.randn(4, 2)).sum().backward()
    optimizer = torch.optim.SparseAdam(model.parameters())
    batch = (torch.randn(4, 2), torch.randn(4, 3))
    return (model, optimizer), lambda: train_step(model, batch, nn.MSELoss(), optimizer)


def lazy_recorder() -> tuple[tuple[object, ...], Callable[[], object]]:
    model = lazy_bn_model()
    recorder = GradNormRecorder(model, modules=True)
    return (model,), recorder.__enter__


def expanded_clamp() -> tuple[tuple[object, ...], Callable[[], object]]:
    base = torch.tensor([5.0])
    view = base.expand(3)
    return (base,), lambda: clamp_(view, 1.0, 2.0)


def lazy_step() -> tuple[tuple[object, ...], Callable[[], object]]:
    model = nn.Sequential(nn.LazyLinear(1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return (model, optimizer), lambda: train_step_of(model, (X, Y), optimizer=optimizer)


def input_grad_step() -> tuple[tuple[object, ...], Callable[[], object]]:
    """Refused after backward(): the input that requires grad keeps no new .grad."""
    model = nn.Linear(1, 1)
    inputs = X.clone().requires_grad_()
    optimizer = torch.optim.SparseAdam(model.parameters())
    return (model, inputs), lambda: train_step_of(model, (inputs, Y), optimizer=optimizer)


def refused_after_backward(
    inputs: torch.Tensor, targets: torch.Tensor = Y, loss_fn: nn.Module | None = None
) -> Callable[[], object]:
    """A step refused after backward(): SparseAdam refuses the Linear's dense gradients."""
    model = nn.Linear(1, 1)
    optimizer = torch.optim.SparseAdam(model.parameters())
    loss = nn.MSELoss() if loss_fn is None else loss_fn
    return lambda: train_step_of(model, (inputs, targets), optimizer=optimizer, loss_fn=loss)


def input_with_grad_step() -> tuple[tuple[object, ...], Callable[[], object]]:
    inputs = X.clone().requires_grad_()
    inputs.grad = torch.zeros_like(inputs)  # backward() would add to it in place
    return (inputs,), refused_after_backward(inputs)


def retained_input_step() -> tuple[tuple[object, ...], Callable[[], object]]:
    base = X.clone().requires_grad_()
    inputs = base * 1
    inputs.retain_grad()
    return (base, inputs), refused_after_backward(inputs)


def targets_that_require_grad_step() -> tuple[tuple[object, ...], Callable[[], object]]:
    targets = Y.clone().requires_grad_()
    return (targets,), refused_after_backward(X, targets)


class LearnedScale(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(()))

    def forward(self, output: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return self.scale * nn.functional.mse_loss(output, targets)


def loss_with_parameters_step() -> tuple[tuple[object, ...], Callable[[], object]]:
    loss = LearnedScale()
    return (loss,), refused_after_backward(X, Y, loss)


class DenseAndSparse(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.dense = nn.Linear(1, 1)
        self.table = nn.Embedding(3, 1, sparse=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense(x) + self.table(torch.zeros(len(x), dtype=torch.long))


def sparse_weight_decay_step() -> tuple[tuple[object, ...], Callable[[], object]]:
    model = DenseAndSparse()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=0.1)
    return (model, optimizer), lambda: train_step_of(model, (X, Y), optimizer=optimizer)


def lazy_buffers_step() -> tuple[tuple[object, ...], Callable[[], object]]:
    model = nn.Sequential(nn.Linear(1, 2), nn.LazyBatchNorm1d(affine=False), nn.Linear(2, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return (model, optimizer), lambda: train_step_of(model, (X, Y), optimizer=optimizer)


def saved_linear() -> tuple[str, nn.Module, torch.optim.Optimizer]:
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    path = Path(tempfile.mkdtemp()) / "ckpt.pt"
    save_checkpoint(path, model, optimizer)
    return str(path), model, optimizer


STATE = [
    mutation(
        "training:train_step:input-with-a-grad",
        input_with_grad_step,
        ValueError,
        "train_step",
        "optimizer",
    ),
    mutation(
        "training:train_step:input-that-retains-grad",
        retained_input_step,
        ValueError,
        "train_step",
        "optimizer",
    ),
    mutation(
        "training:train_step:targets-that-require-grad",
        targets_that_require_grad_step,
        ValueError,
        "train_step",
        "optimizer",
    ),
    mutation(
        "training:train_step:loss_fn-with-parameters",
        loss_with_parameters_step,
        ValueError,
        "train_step",
        "optimizer",
    ),
    mutation(
        "training:train_step:SGD-weight_decay-sparse-gradients",
        sparse_weight_decay_step,
        ValueError,
        "train_step",
        "optimizer",
    ),
    mutation(
        "training:train_step:uninitialised-lazy-buffers",
        lazy_buffers_step,
        ValueError,
        "train_step",
        "model",
    ),
    mutation(
        "training:train_step:uninitialised-lazy-model",
        lazy_step,
        ValueError,
        "train_step",
        "model",
    ),
    mutation(
        "training:train_step:input-that-requires-grad",
        input_grad_step,
        ValueError,
        "train_step",
        "optimizer",
    ),
    # checkpoint: save over a good file
    mutation(
        "checkpoint:save_checkpoint:np.mean",
        save_case(loss=np.mean([1.0])),
        TypeError,
        "save_checkpoint",
        "loss",
    ),
    mutation(
        "checkpoint:save_checkpoint:np.random.get_state",
        save_case(rng=np.random.get_state()),
        TypeError,
        "save_checkpoint",
        "rng",
    ),
    mutation(
        "checkpoint:save_checkpoint:datetime",
        save_case(when=datetime.datetime(2026, 1, 1)),
        TypeError,
        "save_checkpoint",
        "when",
    ),
    mutation(
        "checkpoint:save_checkpoint:ndarray",
        save_case(a=np.ones(2)),
        TypeError,
        "save_checkpoint",
        "a",
    ),
    mutation(
        "checkpoint:save_checkpoint:lambda",
        save_case(fn=lambda: 0),
        TypeError,
        "save_checkpoint",
        "fn",
    ),
    mutation(
        "checkpoint:save_checkpoint:optimizer-of-another-model",
        save_foreign_optimizer,
        ValueError,
        "save_checkpoint",
        "optimizer",
    ),
    mutation(
        "checkpoint:save_checkpoint:scheduler-of-another-optimizer",
        save_foreign_scheduler,
        ValueError,
        "save_checkpoint",
        "scheduler",
    ),
    # checkpoint: load into trained objects
    mutation(
        "checkpoint:load_checkpoint:shape",
        load_case(
            run_with(lambda: nn.Sequential(nn.Linear(2, 4), nn.BatchNorm1d(4)), sgd_momentum)
        ),
        ValueError,
        "load_checkpoint",
        "model",
    ),
    mutation(
        "checkpoint:load_checkpoint:dtype",
        load_case(run_with(lambda: bn_model().double(), sgd_momentum)),
        ValueError,
        "load_checkpoint",
        "model",
    ),
    mutation(
        "checkpoint:load_checkpoint:missing-keys",
        load_case(run_with(lambda: nn.Sequential(nn.Linear(2, 3)), sgd_momentum)),
        ValueError,
        "load_checkpoint",
        "model",
    ),
    mutation(
        "checkpoint:load_checkpoint:unexpected-keys",
        load_case(
            run_with(
                lambda: nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Linear(3, 1)),
                sgd_momentum,
            )
        ),
        ValueError,
        "load_checkpoint",
        "model",
    ),
    mutation(
        "checkpoint:load_checkpoint:SGD-into-Adam",
        load_case(run_with(bn_model, lambda m: torch.optim.Adam(m.parameters()))),
        ValueError,
        "load_checkpoint",
        "optimizer",
    ),
    mutation(
        "checkpoint:load_checkpoint:AdamW-into-Adam",
        load_case(
            run_with(bn_model, lambda m: torch.optim.Adam(m.parameters())),
            lambda: run_file(lambda: (lambda m: (m, adamw(m), None))(bn_model())),
        ),
        ValueError,
        "load_checkpoint",
        "optimizer",
    ),
    mutation(
        "checkpoint:load_checkpoint:StepLR-into-ExponentialLR",
        load_case(
            run_with(
                bn_model, sgd_momentum, lambda o: torch.optim.lr_scheduler.ExponentialLR(o, 0.9)
            )
        ),
        ValueError,
        "load_checkpoint",
        "scheduler",
    ),
    mutation(
        "checkpoint:load_checkpoint:optimizer-of-another-model",
        load_case(run_with(bn_model, lambda m: sgd_momentum(bn_model()))),
        ValueError,
        "load_checkpoint",
        "optimizer",
    ),
    mutation(
        "checkpoint:load_checkpoint:parameters-in-another-order",
        load_case(
            run_with(
                bn_model,
                lambda m: torch.optim.SGD(list(m.parameters())[::-1], lr=0.1, momentum=0.9),
            )
        ),
        ValueError,
        "load_checkpoint",
        "optimizer",
    ),
    mutation(
        "checkpoint:load_checkpoint:group-layout",
        load_case(
            run_with(
                bn_model,
                lambda m: torch.optim.SGD(
                    [{"params": list(m.parameters())[:1]}, {"params": list(m.parameters())[1:]}],
                    lr=0.1,
                    momentum=0.9,
                ),
            )
        ),
        ValueError,
        "load_checkpoint",
        "optimizer",
    ),
    mutation(
        "checkpoint:load_checkpoint:scheduler-not-saved",
        load_case(
            run_with(bn_model, sgd_momentum, lambda o: torch.optim.lr_scheduler.StepLR(o, 1)),
            no_scheduler_file,
        ),
        ValueError,
        "load_checkpoint",
        "scheduler",
    ),
    mutation(
        "checkpoint:load_checkpoint:empty-file",
        load_case(run_with(), empty_file),
        ValueError,
        "load_checkpoint",
        "path",
    ),
    mutation(
        "checkpoint:load_checkpoint:truncated-file",
        load_case(run_with(), cut_file),
        ValueError,
        "load_checkpoint",
        "path",
    ),
    mutation(
        "checkpoint:load_checkpoint:foreign-file",
        load_case(run_with(), foreign_file),
        ValueError,
        "load_checkpoint",
        "path",
    ),
    # training: before and after the forward pass
    mutation(
        "training:train_step:int32-targets",
        step_case(lambda: torch.tensor([0, 1, 2, 0], dtype=torch.int32)),
        TypeError,
        "train_step",
        "targets",
    ),
    mutation(
        "training:train_step:targets-on-meta",
        step_case(lambda: torch.tensor([0, 1, 2, 0], device="meta")),
        ValueError,
        "train_step",
        "targets",
    ),
    mutation(
        "training:train_step:class-out-of-range",
        step_case(lambda: torch.tensor([0, 1, 9, 0])),
        ValueError,
        "train_step",
        "batch",
    ),
    mutation(
        "training:train_step:targets-broadcast",
        step_case(lambda: torch.randn(4, 1), nn.MSELoss()),
        ValueError,
        "train_step",
        "targets",
    ),
    mutation(
        "training:train_step:float-targets-wrong-shape",
        step_case(lambda: torch.randn(4)),
        ValueError,
        "train_step",
        "targets",
    ),
    mutation(
        "training:train_step:detached-loss",
        step_case(lambda: torch.randn(4, 3), detached),
        ValueError,
        "train_step",
        "loss_fn",
    ),
    mutation(
        "training:train_step:loss-not-scalar",
        step_case(lambda: torch.randn(4, 3), nn.MSELoss(reduction="none")),
        ValueError,
        "train_step",
        "loss_fn",
    ),
    mutation(
        "training:train_step:frozen-model",
        step_case(lambda: torch.tensor([0, 1, 2, 0]), model=frozen_bn, optimizer=sgd_momentum),
        ValueError,
        "train_step",
        "model",
    ),
    mutation(
        "training:train_step:optimizer-of-another-model",
        step_case(lambda: torch.tensor([0, 1, 2, 0]), optimizer=lambda m: sgd_momentum(bn_model())),
        ValueError,
        "train_step",
        "optimizer",
    ),
    mutation(
        "training:accumulate_step:second-micro-batch-out-of-range",
        step_case(lambda: torch.tensor([0, 1, 9, 0]), accumulate=True),
        ValueError,
        "accumulate_step",
        "micro_batches[1]",
    ),
    mutation(
        "training:accumulate_step:second-micro-batch-wrong-shape",
        step_case(lambda: torch.randn(4), accumulate=True),
        ValueError,
        "accumulate_step",
        "targets",
    ),
    mutation(
        "training:accumulate_step:second-micro-batch-int32",
        step_case(lambda: torch.tensor([0, 1, 2, 0], dtype=torch.int32), accumulate=True),
        TypeError,
        "accumulate_step",
        "targets",
    ),
    # finetune
    mutation(
        "finetune:freeze:matches-nothing",
        module_case(cnn, lambda m: freeze(m, "head.*")),
        ValueError,
        "freeze",
        "pattern",
    ),
    mutation(
        "finetune:freeze:predicate-returns-'no'-half-way",
        module_case(cnn, lambda m: freeze(m, predicate_changes_its_mind)),
        TypeError,
        "freeze",
        "pattern(name, parameter)",
    ),
    mutation(
        "finetune:unfreeze:integer-parameter",
        module_case(half_frozen_counts, unfreeze),
        ValueError,
        "unfreeze",
        "pattern",
    ),
    mutation(
        "finetune:replace_head:property",
        module_case(WithPropertyHead, lambda m: replace_head(m, "head", nn.Linear(2, 2))),
        ValueError,
        "replace_head",
        "attr",
    ),
    mutation(
        "finetune:replace_head:own-head",
        module_case(cnn, lambda m: replace_head(m, "fc", m)),
        ValueError,
        "replace_head",
        "new_head",
    ),
    mutation(
        "finetune:replace_head:no-such-attr",
        module_case(cnn, lambda m: replace_head(m, "head", nn.Linear(16, 2))),
        ValueError,
        "replace_head",
        "attr",
    ),
    mutation(
        "finetune:replace_head:not-a-module",
        module_case(cnn, lambda m: replace_head(m, "num_classes", nn.Linear(16, 2))),
        TypeError,
        "replace_head",
        "attr",
    ),
    mutation(
        "finetune:param_groups:betas",
        param_groups_case,
        ValueError,
        "param_groups",
        "groups['fc.*']['betas']",
    ),
    # hooks
    mutation("hooks:GradNormRecorder.__enter__:fails-half-way", recorder_case, RuntimeError, ""),
    # init
    mutation(
        "init:init_weights:orthogonal",
        module_case(lambda: orthogonal(nn.Linear(4, 4)), init_weights),
        ValueError,
        "init_weights",
        "module",
    ),
    mutation(
        "init:init_weights:spectral_norm",
        module_case(lambda: spectral_norm(nn.Linear(3, 4)), init_weights),
        ValueError,
        "init_weights",
        "module",
    ),
    mutation(
        "init:init_weights:hook-weight_norm",
        module_case(hook_weight_norm, init_weights),
        ValueError,
        "init_weights",
        "module",
    ),
    # functions
    mutation(
        "functions:clamp_:max<min",
        clamp_case(lambda: V.clone(), 1.0, 0.0),
        ValueError,
        "clamp_",
        "max",
    ),
    mutation(
        "functions:clamp_:min=nan",
        clamp_case(lambda: V.clone(), math.nan, 1.0),
        ValueError,
        "clamp_",
        "min",
    ),
    mutation(
        "functions:clamp_:max=2**1100",
        clamp_case(lambda: V.clone(), 0.0, 2**1100),
        ValueError,
        "clamp_",
        "max",
    ),
    mutation(
        "functions:clamp_:leaf-requiring-grad",
        clamp_case(lambda: torch.ones(2, requires_grad=True), 0.0, 1.0),
        ValueError,
        "clamp_",
        "x",
    ),
    mutation(
        # autograd itself refuses a view of such a leaf only after the clamp has written it
        "functions:clamp_:view-of-a-leaf-requiring-grad",
        clamp_view_case(),
        ValueError,
        "clamp_",
        "x",
    ),
    # data and sequential
    mutation(
        "data:BatchIndexSampler.set_epoch:-1",
        epoch_case(-1),
        ValueError,
        "BatchIndexSampler.set_epoch",
        "epoch",
    ),
    mutation(
        "data:BatchIndexSampler.set_epoch:2**64",
        epoch_case(2**64),
        ValueError,
        "BatchIndexSampler.set_epoch",
        "epoch",
    ),
    mutation(
        "data:BatchIndexSampler.set_epoch:numpy.bool_",
        epoch_case(np.bool_(True)),
        TypeError,
        "BatchIndexSampler.set_epoch",
        "epoch",
    ),
    mutation(
        "sequential:sequential_from:repeated-name",
        sequential_case,
        ValueError,
        "sequential_from",
        "the name of layers[1]",
    ),
    # recheck of issue 21
    mutation(
        "checkpoint:load_checkpoint:scheduler-fails-after-lazy-model",
        load_case(
            lambda: (lambda m: (m, torch.optim.SGD(m.parameters(), lr=0.1), Refusing()))(
                lazy_bn_model()
            ),
            path=refusing_run,
        ),
        ValueError,
        "",
    ),
    mutation(
        "training:train_step:optimizer-with-another-parameter",
        step_with_extra_parameter,
        ValueError,
        "train_step",
        "targets",
    ),
    mutation(
        "training:accumulate_step:optimizer-with-another-parameter",
        accumulate_with_extra_parameter,
        ValueError,
        "accumulate_step",
        "targets",
    ),
    mutation(
        "training:train_step:dropout-drew-before-the-refusal",
        dropout_step(accumulated=False),
        ValueError,
        "train_step",
        "targets",
    ),
    mutation(
        "training:accumulate_step:dropout-drew-before-the-refusal",
        dropout_step(accumulated=True),
        ValueError,
        "accumulate_step",
        "targets",
    ),
    mutation(
        "training:train_step:SparseAdam-after-backward",
        sparse_adam_step,
        ValueError,
        "train_step",
        "optimizer",
    ),
    mutation(
        "hooks:GradNormRecorder.__enter__:lazy-model",
        lazy_recorder,
        ValueError,
        "GradNormRecorder",
        "model",
    ),
    mutation(
        "functions:clamp_:expanded-view",
        expanded_clamp,
        ValueError,
        "clamp_",
        "x",
    ),
]


@pytest.mark.parametrize("case", STATE)
def test_a_refused_call_leaves_every_object_it_was_given_unchanged(
    case: Mutation, unchanged: Callable[..., Any]
) -> None:
    objects, call = case.build()
    with pytest.raises(Exception) as raised, unchanged(*objects):  # noqa: PT011  # checked below
        call()
    message = str(raised.value)
    assert type(raised.value) is case.error, f"{type(raised.value).__name__}: {message}"
    if case.caller:
        assert message.startswith(f"{case.caller}() expects {case.argument} to "), message
