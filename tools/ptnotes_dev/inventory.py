"""Refresh the intersphinx inventories that let the site build offline.

Run by ``nox -s inventories`` (``python -m ptnotes_dev.inventory``). For each project, the
official ``objects.inv`` is downloaded when the network allows. When it does not (the build
machines of this project reach only package registries), the PyTorch inventory is generated from the
installed torch instead: every public object, mapped to the page layout of the official
docs as PyTorch's docs sources define it (autosummary pages ``generated/<name>.html#<name>``,
objects documented inline on a module's page, names documented under their defining
module, inherited members where their defining class documents them), and the pages and
anchors used are written next to it (``torch-layout.json``) for the site's link test.
Links always point at the official site; only the list of names is produced locally.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import urllib.error
import urllib.request
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path

from ptnotes_dev.settings import load

#: Where the committed inventories live (docs/conf.py's intersphinx_mapping reads them).
HERE = load().root / "docs" / "_inv"
OFFICIAL = {
    "torch": "https://docs.pytorch.org/docs/stable/objects.inv",
    "python": "https://docs.python.org/3/objects.inv",
}

# Where the official PyTorch docs document each object. Transcribed from PyTorch's own docs
# sources (pytorch/pytorch docs/source/*.md, read 2026-12; the files and what each one
# decides are named below), because a build machine here cannot download objects.inv.

#: Modules whose public members each get an autosummary page, ``generated/<name>.html``
#: (torch.md, nn.md, nn.functional.md, optim.md "Algorithms", autograd.md, cuda.md,
#: backends.md, nn.md "Utilities"), with the module's own anchor on the page named here.
AUTOSUMMARY_MODULES = {
    "torch": "torch.html",
    "torch.nn": "nn.html",
    "torch.nn.functional": "nn.functional.html",
    "torch.optim": "optim.html",
    "torch.autograd": "autograd.html",
    "torch.autograd.functional": "autograd.html",
    "torch.nn.utils": "nn.html",
    "torch.nn.utils.parametrizations": "nn.html",
    "torch.nn.utils.parametrize": "nn.html",
    "torch.cuda": "cuda.html",
    "torch.backends.cudnn": "backends.html",
}
#: Modules documented inline on one page each (``.. autoclass::``/``.. autofunction::``):
#: data.md, nn.init.md, distributed.md, profiler.md, amp.md.
SINGLE_PAGE_MODULES = {
    "torch.utils.data": "data.html",
    "torch.nn.init": "nn.init.html",
    "torch.distributed": "distributed.html",
    "torch.profiler": "profiler.html",
    "torch.amp": "amp.html",
}
#: Objects documented inline (``.. class::``/``.. autoclass::`` on a page, anchor = name).
INLINE = {
    # tensors.md: ``.. class:: Tensor()``; ``.. autoattribute:: Tensor.T`` (and H, mT, mH).
    "torch.Tensor": "tensors.html",
    "torch.Tensor.T": "tensors.html",
    "torch.Tensor.H": "tensors.html",
    "torch.Tensor.mT": "tensors.html",
    "torch.Tensor.mH": "tensors.html",
    # tensor_attributes.md: ``.. class:: dtype`` / device / layout / memory_format.
    "torch.dtype": "tensor_attributes.html",
    "torch.device": "tensor_attributes.html",
    "torch.layout": "tensor_attributes.html",
    "torch.memory_format": "tensor_attributes.html",
    # autograd.md: ``.. autoclass:: Function``, detect_anomaly, set_detect_anomaly, the
    # torch.autograd.graph hooks, FunctionCtx.
    "torch.autograd.Function": "autograd.html",
    "torch.autograd.detect_anomaly": "autograd.html",
    "torch.autograd.set_detect_anomaly": "autograd.html",
    "torch.autograd.function.FunctionCtx": "autograd.html",
    "torch.autograd.graph.saved_tensors_hooks": "autograd.html",
    "torch.autograd.graph.save_on_cpu": "autograd.html",
    "torch.autograd.graph.disable_saved_tensors_hooks": "autograd.html",
    "torch.autograd.graph.register_multi_grad_hook": "autograd.html",
    "torch.autograd.graph.allow_mutation_on_saved_tensors": "autograd.html",
    "torch.autograd.graph.GradientEdge": "autograd.html",
    "torch.autograd.graph.get_gradient_edge": "autograd.html",
    # optim.md "Base class": ``.. autoclass:: Optimizer``.
    "torch.optim.Optimizer": "optim.html",
    # amp.md: ``.. autoclass:: autocast`` (currentmodule torch), the deprecated GradScalers.
    "torch.autocast": "amp.html",
    "torch.cuda.amp.GradScaler": "amp.html",
    "torch.cpu.amp.GradScaler": "amp.html",
    # data.md: ``.. autoclass:: torch.utils.data.distributed.DistributedSampler``.
    "torch.utils.data.distributed.DistributedSampler": "data.html",
    # distributed.md: ``.. autoclass:: torch.distributed.device_mesh.DeviceMesh``.
    "torch.distributed.device_mesh.DeviceMesh": "distributed.html",
}
#: Classes documented inline whose methods each get an autosummary page
#: (``Optimizer.step`` -> generated/torch.optim.Optimizer.step.html): optim.md, autograd.md.
MEMBER_PAGES = {
    "torch.optim.Optimizer": (
        "add_param_group", "load_state_dict", "register_load_state_dict_pre_hook",
        "register_load_state_dict_post_hook", "state_dict", "register_state_dict_pre_hook",
        "register_state_dict_post_hook", "step", "register_step_pre_hook",
        "register_step_post_hook", "zero_grad",
    ),
    "torch.autograd.Function": ("forward", "backward", "jvp", "vmap"),
    "torch.autograd.function.FunctionCtx": (
        "mark_dirty", "mark_non_differentiable", "save_for_backward", "set_materialize_grads",
    ),
}  # fmt: skip
#: Public names that the docs document under another (defining) name: the link goes to the
#: documented object. torch.md "Locally disabling gradient computation" lists
#: ``autograd.grad_mode.set_grad_enabled`` and ``autograd.grad_mode.inference_mode``;
#: autograd.md lists ``gradcheck.gradcheck``; nn.md ``~parameter.Parameter`` (and Buffer),
#: ``nn.modules.flatten.Flatten``; data.md the DistributedSampler of its defining module.
DOCUMENTED_AS = {
    "torch.set_grad_enabled": "torch.autograd.grad_mode.set_grad_enabled",
    "torch.autograd.set_grad_enabled": "torch.autograd.grad_mode.set_grad_enabled",
    "torch.inference_mode": "torch.autograd.grad_mode.inference_mode",
    "torch.autograd.inference_mode": "torch.autograd.grad_mode.inference_mode",
    "torch.autograd.gradcheck": "torch.autograd.gradcheck.gradcheck",
    "torch.autograd.gradgradcheck": "torch.autograd.gradcheck.gradgradcheck",
    "torch.nn.Parameter": "torch.nn.parameter.Parameter",
    "torch.nn.Buffer": "torch.nn.parameter.Buffer",
    "torch.nn.UninitializedParameter": "torch.nn.parameter.UninitializedParameter",
    "torch.nn.UninitializedBuffer": "torch.nn.parameter.UninitializedBuffer",
    "torch.nn.Flatten": "torch.nn.modules.flatten.Flatten",
    "torch.nn.Unflatten": "torch.nn.modules.flatten.Unflatten",
    "torch.utils.data.DistributedSampler": "torch.utils.data.distributed.DistributedSampler",
    "torch.distributed.DeviceMesh": "torch.distributed.device_mesh.DeviceMesh",
}
#: Objects with no entry of their own in the docs: the section that explains them.
SECTIONS = {
    # autograd.md "Autograd graph": "The grad_fn attribute of a torch.Tensor holds ...".
    "torch.Tensor.grad_fn": "autograd.html#autograd-graph",
    # autograd.md "Variable (deprecated)": "var.data is the same thing as tensor.data".
    "torch.Tensor.data": "autograd.html#variable-deprecated",
    # tensor_attributes.md documents the attributes' types, not Tensor.dtype/.layout.
    "torch.Tensor.dtype": "tensor_attributes.html#torch.dtype",
    "torch.Tensor.layout": "tensor_attributes.html#torch.layout",
    # amp.md "Gradient Scaling": only the deprecated torch.cuda/cpu.amp.GradScaler have entries.
    "torch.amp.GradScaler": "amp.html#gradient-scaling",
    "torch.GradScaler": "amp.html#gradient-scaling",
}
#: Where the docs say which module pages exist (``.. automodule::`` / ``.. py:module::``).
MODULE_PAGES = {**AUTOSUMMARY_MODULES, **SINGLE_PAGE_MODULES}
#: The committed list of official pages and anchors (what the links of the site may use).
LAYOUT = "torch-layout.json"


def download(name: str, url: str) -> bool:
    target = HERE / f"{name}.inv"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            data = response.read()
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        print(f"{name}: could not download {url} ({error})")
        return False
    if not data.startswith(b"# Sphinx inventory version 2"):
        print(f"{name}: {url} is not a Sphinx inventory; kept the committed one")
        return False
    target.write_bytes(data)
    print(f"{name}: downloaded {len(data)} bytes from {url}")
    return True


def _public(module: object) -> Iterator[tuple[str, object]]:
    names = set(getattr(module, "__all__", ())) | {n for n in dir(module) if not n.startswith("_")}
    for attr in sorted(set(names)):
        try:
            yield attr, getattr(module, attr)
        except AttributeError:
            continue


def _role(obj: object) -> str:
    return "py:class" if inspect.isclass(obj) else "py:function"


def _member_role(obj: object) -> str:
    return "py:method" if callable(obj) else "py:attribute"


def _defining_class(cls: type, attr: str) -> type | None:
    """The class in ``cls``'s MRO whose body defines ``attr`` (None: not in any class body).

    An optimizer patches ``step`` onto its class the first time one is created (a profiling
    wrapper, ``functools.wraps`` of the inherited method): a function whose qualified name
    names another class of the MRO is that class's, wherever it was patched in.
    """
    for base in cls.__mro__:
        if attr in vars(base):
            value = vars(base)[attr]
            if not hasattr(value, "__wrapped__"):
                return base
            owner = getattr(inspect.unwrap(value), "__qualname__", "").rpartition(".")[0]
            for candidate in cls.__mro__:
                if (
                    owner == candidate.__qualname__
                    and attr in vars(candidate)
                    and candidate is not base
                ):
                    return _defining_class(candidate, attr)
            return base
    return None


def torch_entries() -> list[tuple[str, str, str]]:
    """(name, role, uri) for the public objects of the installed torch, in the docs' layout.

    Walking torch touches deprecated names (``torch.distributed.reduce_op``, typed storages),
    which warn: the walk is silent.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _torch_entries()


def _torch_entries() -> list[tuple[str, str, str]]:
    import importlib

    import torch

    entries: dict[str, tuple[str, str]] = {}
    public_class: dict[type, str] = {}  # class object -> the name its page is under
    classes: list[tuple[str, type]] = []  # classes whose members are documented on their page

    def uri_of(name: str) -> str:
        """The documented page + anchor of ``name`` (an object that has an entry)."""
        if name in INLINE:
            return f"{INLINE[name]}#{name}"
        return f"generated/{name}.html#{name}"

    for mod_name, page in MODULE_PAGES.items():
        entries[mod_name] = ("py:module", f"{page}#module-{mod_name}")
    for mod_name in AUTOSUMMARY_MODULES:
        module = importlib.import_module(mod_name)
        for attr, obj in _public(module):
            full = f"{mod_name}.{attr}"
            if inspect.ismodule(obj) or full in entries:
                continue
            documented = DOCUMENTED_AS.get(full, full)
            entries[full] = (_role(obj), uri_of(documented))
            if documented != full:
                entries[documented] = entries[full]
            if inspect.isclass(obj):
                public_class.setdefault(obj, documented)
                if documented not in INLINE and documented != "torch.Tensor":
                    classes.append((documented, obj))
    for mod_name, page in SINGLE_PAGE_MODULES.items():
        module = importlib.import_module(mod_name)
        for attr, obj in _public(module):
            full = f"{mod_name}.{attr}"
            if inspect.ismodule(obj) or full in entries:
                continue
            documented = DOCUMENTED_AS.get(full, full)
            uri = uri_of(documented) if documented in INLINE else f"{page}#{documented}"
            entries[full] = (_role(obj), uri)
            if inspect.isclass(obj):
                public_class.setdefault(obj, documented)
    for name, page in INLINE.items():
        role = "py:attribute" if name.startswith("torch.Tensor.") else "py:class"
        entries[name] = (entries.get(name, (role, ""))[0], f"{page}#{name}")
    for cls_name, members in MEMBER_PAGES.items():
        for member in members:
            full = f"{cls_name}.{member}"
            entries[full] = ("py:method", f"generated/{full}.html#{full}")

    # torch.Tensor (tensors.md): each method and attribute on its own autosummary page.
    for attr, obj in _public(torch.Tensor):
        full = f"torch.Tensor.{attr}"
        if full not in INLINE:
            entries[full] = (_member_role(obj), f"generated/{full}.html#{full}")

    # Classes on autosummary pages (nn.md's classtemplate: ``:members:``, no inherited
    # members): a member defined by the class is on its page; an inherited one is where the
    # class that defines it documents it (Linear.apply -> torch.nn.Module.apply), if it does.
    for name, cls in classes:
        for attr, obj in _public(cls):
            full = f"{name}.{attr}"
            owner = _defining_class(cls, attr)
            if owner is cls:
                entries[full] = (_member_role(obj), f"generated/{name}.html#{full}")
    for name, cls in classes:
        for attr, obj in _public(cls):
            full = f"{name}.{attr}"
            owner = _defining_class(cls, attr)
            if owner is None or owner is cls or owner not in public_class:
                continue
            target = entries.get(f"{public_class[owner]}.{attr}")
            if target is not None:
                entries[full] = (_member_role(obj), target[1])

    for name, uri in SECTIONS.items():
        role = entries.get(name, ("py:attribute", ""))[0]
        entries[name] = (role, uri)
    return sorted((name, role, uri) for name, (role, uri) in entries.items())


def layout(rows: list[tuple[str, str, str]]) -> dict[str, list[str]]:
    """The official pages and, for each, the anchors that the inventory's links use."""
    pages: dict[str, set[str]] = {}
    for _name, _role, uri in rows:
        page, _, anchor = uri.partition("#")
        pages.setdefault(page, set()).add(anchor)
    return {page: sorted(anchors - {""}) for page, anchors in sorted(pages.items())}


def write_layout(path: Path, rows: list[tuple[str, str, str]], version: str) -> None:
    data = {
        "about": (
            "Pages and anchors of the official PyTorch docs that the torch inventory links "
            "to; generated with it by `python -m ptnotes_dev.inventory --offline` from the "
            "layout PyTorch's docs/source/*.md give each object (see inventory.py)."
        ),
        "base": "https://docs.pytorch.org/docs/stable/",
        "torch": version,
        "pages": layout(rows),
    }
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def write_inventory(
    path: Path, project: str, version: str, rows: list[tuple[str, str, str]]
) -> None:
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        f"# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    body = "".join(f"{name} {role} 1 {uri} -\n" for name, role, uri in rows).encode()
    path.write_bytes(header + zlib.compress(body, 9))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offline", action="store_true", help="do not try the network")
    args = parser.parse_args(argv)
    got_torch = False
    if not args.offline:
        for name, url in OFFICIAL.items():
            ok = download(name, url)
            got_torch = got_torch or (name == "torch" and ok)
    if not got_torch:
        import torch

        rows = torch_entries()
        version = ".".join(torch.__version__.split(".")[:2])
        write_inventory(HERE / "torch.inv", "PyTorch", version, rows)
        write_layout(HERE / LAYOUT, rows, version)
        print(f"torch: generated {len(rows)} entries from the installed torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
