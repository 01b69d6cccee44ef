"""ptnotes: reference implementations of PyTorch fundamentals, each verified by doctests.

One concept per submodule; ``import ptnotes`` makes all of them available:

================================  =================================================================
:mod:`ptnotes.convert`            tensors to NumPy, whatever their device and autograd state
:mod:`ptnotes.layers`             a ``Linear`` written like ``torch.nn.Linear``; Conv-BN-ReLU
:mod:`ptnotes.functions`          custom ``torch.autograd.Function`` classes
:mod:`ptnotes.sequential`         the three ways to build an ``nn.Sequential``
:mod:`ptnotes.init`               weight initialisation by ``isinstance``, and its pitfalls
:mod:`ptnotes.data`               batched in-memory datasets, samplers and loaders
:mod:`ptnotes.models`             a small CNN to fine-tune without downloads
:mod:`ptnotes.finetune`           freezing, head replacement, optimizer parameter groups
:mod:`ptnotes.training`           one training step, and gradient accumulation
:mod:`ptnotes.graph`              the autograd graph as a text tree or Graphviz DOT
:mod:`ptnotes.distributed`        run a function on N processes with a process group
:mod:`ptnotes.hooks`              the gradient norm reaching each parameter, with temporary hooks
:mod:`ptnotes.checkpoint`         save and resume model + optimizer state (``weights_only=True``)
:mod:`ptnotes.reproducibility`    seed everything in one call, a worker_init_fn, seeded generators
:mod:`ptnotes.validation`         the argument checks every public function uses
================================  =================================================================
"""

from ptnotes import (
    checkpoint,
    convert,
    data,
    distributed,
    finetune,
    functions,
    graph,
    hooks,
    init,
    layers,
    models,
    reproducibility,
    sequential,
    training,
    validation,
)
from ptnotes.convert import to_numpy

__all__ = [
    "checkpoint",
    "convert",
    "data",
    "distributed",
    "finetune",
    "functions",
    "graph",
    "hooks",
    "init",
    "layers",
    "models",
    "reproducibility",
    "sequential",
    "to_numpy",
    "training",
    "validation",
]
__version__ = "0.1.0"
