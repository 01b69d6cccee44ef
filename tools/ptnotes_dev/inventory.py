"""Refresh the intersphinx inventories that let the site build offline.

Run by ``nox -s inventories`` (``python -m ptnotes_dev.inventory``). For each project, the
official ``objects.inv`` is downloaded when the network allows. When it does not (the build
machines of this project reach only package registries), the PyTorch inventory is generated from the
installed torch instead: every public object, mapped to the page layout of the official
docs (``generated/<name>.html#<name>`` for autosummary pages). Links always point at
the official site; only the list of names is produced locally.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import urllib.error
import urllib.request
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

# Modules whose public members each have a page of their own under generated/.
AUTOSUMMARY_MODULES = [
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.optim",
    "torch.autograd",
    "torch.autograd.functional",
    "torch.nn.utils",
    "torch.cuda",
    "torch.backends.cudnn",
]
# Modules documented on one page each: name -> page.
SINGLE_PAGE_MODULES = {
    "torch.utils.data": "data.html",
    "torch.nn.init": "nn.init.html",
    "torch.distributed": "distributed.html",
    "torch.profiler": "profiler.html",
}


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


def torch_entries() -> list[tuple[str, str, str]]:
    """(name, role, uri) for the public objects of the installed torch."""
    import importlib

    import torch

    entries: dict[str, tuple[str, str]] = {}

    def add(name: str, role: str, uri: str) -> None:
        entries.setdefault(name, (role, uri))

    for mod_name in AUTOSUMMARY_MODULES:
        module = importlib.import_module(mod_name)
        for attr, obj in _public(module):
            full = f"{mod_name}.{attr}"
            if inspect.ismodule(obj):
                continue
            role = "py:class" if inspect.isclass(obj) else "py:function"
            add(full, role, f"generated/{full}.html#{full}")
            if inspect.isclass(obj) and mod_name == "torch.nn":
                for meth, _ in _public(obj):
                    add(f"{full}.{meth}", "py:method", f"generated/{full}.html#{full}.{meth}")
    add("torch.Tensor", "py:class", "tensors.html#torch.Tensor")
    for attr, obj in _public(torch.Tensor):
        full = f"torch.Tensor.{attr}"
        role = "py:method" if callable(obj) else "py:attribute"
        add(full, role, f"generated/{full}.html#{full}")
    for attr in ("grad", "requires_grad", "is_leaf", "grad_fn", "data", "device", "dtype"):
        add(
            f"torch.Tensor.{attr}",
            "py:attribute",
            f"generated/torch.Tensor.{attr}.html#torch.Tensor.{attr}",
        )
    for mod_name, page in SINGLE_PAGE_MODULES.items():
        module = importlib.import_module(mod_name)
        add(mod_name, "py:module", f"{page}#module-{mod_name}")
        for attr, obj in _public(module):
            if inspect.ismodule(obj):
                continue
            full = f"{mod_name}.{attr}"
            role = "py:class" if inspect.isclass(obj) else "py:function"
            add(full, role, f"{page}#{full}")
    add("torch.autograd.Function", "py:class", "autograd.html#torch.autograd.Function")
    add("torch.dtype", "py:class", "tensor_attributes.html#torch.dtype")
    add("torch.device", "py:class", "tensor_attributes.html#torch.device")
    return sorted((name, role, uri) for name, (role, uri) in entries.items())


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
        print(f"torch: generated {len(rows)} entries from the installed torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
