"""The generated PyTorch inventory follows the official docs' layout (PyTorch's docs sources).

Each expected URL below is where PyTorch's own ``docs/source/*.md`` put the object (the file
that decides it is named in ``ptnotes_dev.inventory``). The committed inventory and its layout
file must agree with each other and with the generator.
"""

from __future__ import annotations

import json
import zlib
from functools import cache

import pytest
from ptnotes_dev.inventory import HERE, LAYOUT, layout, torch_entries


@cache
def generated() -> dict[str, str]:
    return {name: uri for name, _role, uri in torch_entries()}


def committed() -> dict[str, str]:
    data = (HERE / "torch.inv").read_bytes()
    start = 0
    for _ in range(4):
        start = data.index(b"\n", start) + 1
    rows = zlib.decompress(data[start:]).decode("utf-8").splitlines()
    return {row.split()[0]: row.split()[3] for row in rows}


@pytest.mark.parametrize(
    ("name", "uri"),
    [
        # tensors.md: the class inline, its methods on autosummary pages, T/H/mT/mH inline.
        ("torch.Tensor", "tensors.html#torch.Tensor"),
        ("torch.Tensor.detach", "generated/torch.Tensor.detach.html#torch.Tensor.detach"),
        ("torch.Tensor.T", "tensors.html#torch.Tensor.T"),
        # autograd.md: grad_fn and data have no entry; the sections that explain them.
        ("torch.Tensor.grad_fn", "autograd.html#autograd-graph"),
        ("torch.Tensor.data", "autograd.html#variable-deprecated"),
        ("torch.autograd.Function", "autograd.html#torch.autograd.Function"),
        (
            "torch.autograd.Function.forward",
            "generated/torch.autograd.Function.forward.html#torch.autograd.Function.forward",
        ),
        (
            "torch.autograd.gradcheck",
            "generated/torch.autograd.gradcheck.gradcheck.html#torch.autograd.gradcheck.gradcheck",
        ),
        ("torch.autograd.set_detect_anomaly", "autograd.html#torch.autograd.set_detect_anomaly"),
        # torch.md: grad-mode context managers under their defining module.
        (
            "torch.inference_mode",
            "generated/torch.autograd.grad_mode.inference_mode.html"
            "#torch.autograd.grad_mode.inference_mode",
        ),
        (
            "torch.set_grad_enabled",
            "generated/torch.autograd.grad_mode.set_grad_enabled.html"
            "#torch.autograd.grad_mode.set_grad_enabled",
        ),
        ("torch.no_grad", "generated/torch.no_grad.html#torch.no_grad"),
        # tensor_attributes.md
        ("torch.dtype", "tensor_attributes.html#torch.dtype"),
        ("torch.device", "tensor_attributes.html#torch.device"),
        # nn.md: ~parameter.Parameter; classtemplate.rst has no :inherited-members:.
        (
            "torch.nn.Parameter",
            "generated/torch.nn.parameter.Parameter.html#torch.nn.parameter.Parameter",
        ),
        ("torch.nn.Linear.forward", "generated/torch.nn.Linear.html#torch.nn.Linear.forward"),
        ("torch.nn.Linear.apply", "generated/torch.nn.Module.html#torch.nn.Module.apply"),
        (
            "torch.nn.Sequential.state_dict",
            "generated/torch.nn.Module.html#torch.nn.Module.state_dict",
        ),
        # optim.md: Optimizer inline, its methods on autosummary pages.
        ("torch.optim.Optimizer", "optim.html#torch.optim.Optimizer"),
        (
            "torch.optim.Optimizer.step",
            "generated/torch.optim.Optimizer.step.html#torch.optim.Optimizer.step",
        ),
        ("torch.optim", "optim.html#module-torch.optim"),
        # amp.md, data.md
        ("torch.autocast", "amp.html#torch.autocast"),
        (
            "torch.utils.data.DistributedSampler",
            "data.html#torch.utils.data.distributed.DistributedSampler",
        ),
    ],
)
def test_generator_follows_the_official_layout(name: str, uri: str) -> None:
    assert generated()[name] == uri


def test_inherited_member_from_a_private_base_gets_no_guessed_anchor() -> None:
    # BatchNorm2d.reset_running_stats is defined by the private _NormBase: no page has it.
    assert "torch.nn.BatchNorm2d.reset_running_stats" not in generated()


def test_committed_inventory_is_the_generated_one() -> None:
    import torch

    header = (HERE / "torch.inv").read_bytes().split(b"\n", 3)[2].decode()
    version = ".".join(torch.__version__.split(".")[:2])
    if header != f"# Version: {version}":
        pytest.skip(f"the committed inventory is for another torch ({header}), not {version}")
    assert committed() == generated(), "refresh it: python -m ptnotes_dev.inventory --offline"


def test_committed_layout_lists_every_page_and_anchor_of_the_inventory() -> None:
    data = json.loads((HERE / LAYOUT).read_text(encoding="utf-8"))
    rows = [(name, "", uri) for name, uri in committed().items()]
    assert data["pages"] == layout(rows)
