"""Seed the random generators a training run draws from: the global ones, a loader's, a worker's."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset, get_worker_info

from ptnotes.validation import MAX_SEED, argument_error, check_int, check_seed

__all__ = ["MAX_GLOBAL_SEED", "seed_everything", "seed_worker", "seeded_generator"]

#: The largest seed :func:`seed_everything` accepts, ``2**32 - 1``, since NumPy's global
#: generator (:func:`numpy.random.seed`) takes an unsigned 32-bit integer.
MAX_GLOBAL_SEED = 2**32 - 1

#: The generators :func:`seed_worker` reseeds when a dataset holds them.
_GENERATORS = (random.Random, np.random.Generator, np.random.RandomState, torch.Generator)


def seed_everything(seed: int) -> None:
    """Seed Python's :mod:`random`, NumPy's global generator and torch, with one seed.

    :func:`torch.manual_seed` seeds torch's CPU generator and the default generator of
    every CUDA device, but neither Python's :mod:`random` nor :mod:`numpy.random`; this
    calls ``random.seed(seed)``, ``numpy.random.seed(seed)`` and
    ``torch.manual_seed(seed)``. Generators that are objects of their own (a
    :class:`torch.Generator`, ``numpy.random.default_rng()``, a :class:`random.Random`)
    are not touched: seed them where you create them.

    The seed is checked before anything is seeded, so a refused call changes nothing.

    Args:
        seed: an ``int`` in ``[0, 2**32 - 1]`` (:data:`MAX_GLOBAL_SEED`), the range
            :func:`numpy.random.seed` takes; a NumPy integer is taken as its ``int``.

    Raises:
        TypeError: if ``seed`` is neither an ``int`` nor a NumPy integer (a ``bool`` is refused).
        ValueError: if ``seed`` is negative or above :data:`MAX_GLOBAL_SEED`.

    Examples:
        >>> import random
        >>> import numpy as np
        >>> import torch
        >>> from ptnotes.reproducibility import seed_everything
        >>> def draw():
        ...     return random.random(), float(np.random.rand()), torch.rand(1).item()
        >>> seed_everything(7)
        >>> first = draw()
        >>> seed_everything(np.int64(7))
        >>> draw() == first
        True
        >>> state = torch.get_rng_state()
        >>> seed_everything(2**32)
        Traceback (most recent call last):
          ...
        ValueError: seed_everything() expects seed to be an int in [0, 4294967295], got int ...
        >>> torch.equal(torch.get_rng_state(), state)
        True
    """
    seed_ = check_int(seed_everything, "seed", seed, minimum=0, maximum=MAX_GLOBAL_SEED)
    random.seed(seed_)
    np.random.seed(seed_)
    torch.manual_seed(seed_)


def seeded_generator(seed: int) -> torch.Generator:
    """A new CPU :class:`torch.Generator` seeded with ``seed``.

    What a :class:`~torch.utils.data.DataLoader` takes as ``generator=``: the order of
    its ``shuffle=True`` and its workers' base seed are then drawn from this generator,
    so they repeat from run to run whatever else draws from torch's global generator in
    between. A sampler passed as ``sampler=`` does not use it: a
    :class:`~torch.utils.data.RandomSampler` draws from its own ``generator=``, or from
    torch's global generator when it has none.

    Args:
        seed: an ``int`` in ``[0, 2**63 - 1]`` (:data:`ptnotes.validation.MAX_SEED`); a
            NumPy integer is taken as its ``int``. :meth:`torch.Generator.manual_seed`
            also takes negative seeds and maps them onto large ones; they are refused
            here.

    Returns:
        A CPU generator whose :meth:`~torch.Generator.initial_seed` is ``seed``. Only the
        seed's low 32 bits reach its Mersenne Twister: seeds ``2**32`` apart draw the same
        numbers.

    Raises:
        TypeError: if ``seed`` is neither an ``int`` nor a NumPy integer (a ``bool`` is refused).
        ValueError: if ``seed`` is negative or above ``2**63 - 1``.

    Examples:
        >>> import torch
        >>> from ptnotes.reproducibility import seeded_generator
        >>> g = seeded_generator(3)
        >>> g.device, g.initial_seed()
        (device(type='cpu'), 3)
        >>> def draw(generator):
        ...     return torch.rand(2, generator=generator, device="cpu")
        >>> torch.equal(draw(seeded_generator(3)), draw(seeded_generator(3 + 2**32)))
        True
        >>> a = torch.randperm(6, generator=seeded_generator(3), device="cpu")
        >>> torch.equal(a, torch.randperm(6, generator=seeded_generator(3), device="cpu"))
        True

        A loader's ``shuffle=True`` order stays the same after one more draw from the
        global generator; that of a ``RandomSampler`` without a generator does not:

        >>> from torch.utils.data import DataLoader, RandomSampler
        >>> def order(extra_draw, **options):
        ...     _ = torch.manual_seed(0)
        ...     if extra_draw:
        ...         _ = torch.rand(1, device="cpu")
        ...     with torch.device("cpu"):
        ...         loader = DataLoader(range(6), generator=seeded_generator(1), **options)
        ...         return [int(i) for i in loader]
        >>> order(False, shuffle=True) == order(True, shuffle=True)
        True
        >>> order(False, sampler=RandomSampler(range(6))) == order(
        ...     True, sampler=RandomSampler(range(6))
        ... )
        False
        >>> seeded_generator(-1)
        Traceback (most recent call last):
          ...
        ValueError: seeded_generator() expects seed to be an int in [0, 9223372036854775807], ...
    """
    return torch.Generator(device="cpu").manual_seed(check_seed(seeded_generator, "seed", seed))


def _held_generators(dataset: object) -> list[tuple[str, Any]]:
    """``(path, generator)`` for every generator ``dataset`` holds, in attribute order.

    Follows datasets held in attributes, directly or in a list or tuple (a ``Subset``'s
    ``dataset``, a ``ConcatDataset``'s ``datasets``); each object is visited once.
    """
    found: list[tuple[str, Any]] = []
    seen: set[int] = set()

    def children(value: object, path: str) -> Iterator[tuple[str, object]]:
        if isinstance(value, list | tuple):
            for i, item in enumerate(value):
                yield f"{path}[{i}]", item
        else:
            yield path, value

    def walk(obj: object, prefix: str) -> None:
        seen.add(id(obj))
        for name, value in list(getattr(obj, "__dict__", {}).items()):
            for path, item in children(value, f"{prefix}{name}"):
                if id(item) in seen:
                    continue
                if isinstance(item, _GENERATORS) and not isinstance(item, random.SystemRandom):
                    seen.add(id(item))
                    found.append((path, item))
                elif isinstance(item, Dataset):
                    walk(item, f"{path}.")

    walk(dataset, "")
    return found


def _reseed(generator: Any, child: np.random.SeedSequence) -> None:
    """Reseed ``generator`` in place from ``child``: other references to it see the seed."""
    if isinstance(generator, np.random.Generator):
        bit_generator = type(generator.bit_generator)(child)
        generator.bit_generator.state = bit_generator.state
    elif isinstance(generator, np.random.RandomState):
        generator.seed(child.generate_state(4))
    elif isinstance(generator, torch.Generator):
        generator.manual_seed(int(child.generate_state(1, np.uint64)[0]) & MAX_SEED)
    else:  # random.Random
        generator.seed(int(child.generate_state(1, np.uint64)[0]))


def seed_worker(worker_id: int) -> list[str]:
    """A ``worker_init_fn``: reseed, from the worker's seed, the generators its dataset holds.

    Each :class:`~torch.utils.data.DataLoader` worker process starts with a copy of the
    dataset, and so with a copy of every generator the dataset created in the main
    process (``self.rng = numpy.random.default_rng(0)``): without a reseed, every worker
    draws the same numbers. Torch already seeds, in every worker, its own generator and
    Python's :mod:`random` with ``get_worker_info().seed``, and NumPy's global generator
    with a seed derived from the loader's base seed and the worker's id; this reseeds the
    generators the dataset holds, as follows.

    The generators reseeded are the :class:`random.Random` (not
    :class:`random.SystemRandom`, which cannot be seeded), ``numpy.random.Generator``,
    ``numpy.random.RandomState`` and :class:`torch.Generator` objects held in an instance
    attribute (one in the object's ``__dict__``) of the worker's dataset, directly or in
    a list or tuple (not in a list nested in another), and in the same way in the
    :class:`~torch.utils.data.Dataset` objects it holds (a ``Subset``'s ``dataset``, a
    ``ConcatDataset``'s ``datasets``).
    Each is reseeded in place, in attribute order, from a
    :class:`numpy.random.SeedSequence` of the worker's seed spawned once per generator:
    the workers draw different numbers, the same ones in every run where the loader's
    base seed is the same (a loader with a seeded ``generator=``). The loader draws a new
    base seed for each pass over it, so each pass draws new numbers; with
    ``persistent_workers=True`` the workers, started once, go on with theirs.

    A generator held in any other way, in a dict (a ``StackDataset`` of keyword
    datasets), in a ``__slots__`` slot, in a nested list, or inside an object that is
    not a :class:`~torch.utils.data.Dataset` (a transform, or an indexable dataset class
    that does not subclass it), is not found:
    reseed it in a ``worker_init_fn`` of your own, from ``get_worker_info().seed``.

    Args:
        worker_id: the id the DataLoader passes to its ``worker_init_fn``.

    Returns:
        The paths of the reseeded generators (``["rng", "dataset.rng"]``); the DataLoader
        ignores it.

    Raises:
        TypeError: if ``worker_id`` is not an ``int`` or a NumPy integer (a ``bool`` is refused).
        ValueError: if it is not called in a DataLoader worker process (pass it as
            ``worker_init_fn``), or ``worker_id`` is not that worker's id.

    Examples:
        It runs in the worker processes of a loader:

        >>> from torch.utils.data import DataLoader
        >>> from ptnotes.reproducibility import seed_worker
        >>> loader = DataLoader(range(4), num_workers=2, worker_init_fn=seed_worker)

        In the main process there is no worker to seed:

        >>> seed_worker(0)
        Traceback (most recent call last):
          ...
        ValueError: seed_worker() expects worker_id to be the id of the DataLoader worker ...

        Whether two workers' first draws from a generator the dataset holds are alike:
        one in the dataset's ``__dict__`` is reseeded, one in a ``__slots__`` slot or in a
        nested list is not:

        >>> import numpy as np
        >>> from torch.utils.data import Dataset
        >>> from ptnotes.reproducibility import seeded_generator
        >>> class Draws(Dataset):
        ...     def __init__(self):
        ...         self.rng = np.random.default_rng(0)
        ...     def __len__(self):
        ...         return 2
        ...     def __getitem__(self, i):
        ...         return float(self.rng.random())
        >>> class SlotDraws(Draws):
        ...     __slots__ = ("rng",)
        >>> class NestedDraws(Draws):
        ...     def __init__(self):
        ...         self.rngs = [[np.random.default_rng(0)]]
        ...     def __getitem__(self, i):
        ...         return float(self.rngs[0][0].random())
        >>> def workers_draw_alike(dataset):
        ...     generator = seeded_generator(0)
        ...     loader = DataLoader(
        ...         dataset, num_workers=2, worker_init_fn=seed_worker, generator=generator
        ...     )
        ...     first, second = (float(batch) for batch in loader)
        ...     return first == second
        >>> workers_draw_alike(Draws()), workers_draw_alike(SlotDraws())
        (False, True)
        >>> workers_draw_alike(NestedDraws())
        True

        A wrapped dataset is searched only if it subclasses ``Dataset``:

        >>> from torch.utils.data import Subset
        >>> class PlainDraws:  # indexable, so a loader takes it, but not a Dataset
        ...     def __init__(self):
        ...         self.rng = np.random.default_rng(0)
        ...     def __len__(self):
        ...         return 2
        ...     def __getitem__(self, i):
        ...         return float(self.rng.random())
        >>> workers_draw_alike(Subset(Draws(), [0, 1]))
        False
        >>> workers_draw_alike(Subset(PlainDraws(), [0, 1]))
        True
    """
    me = seed_worker
    worker = check_int(me, "worker_id", worker_id, minimum=0)
    info = get_worker_info()
    if info is None:
        expected = (
            "the id of the DataLoader worker process it runs in "
            "(pass seed_worker as worker_init_fn)"
        )
        raise argument_error(
            me, "worker_id", worker_id, expected, got="a call in no worker process"
        )
    if worker != info.id:
        raise argument_error(me, "worker_id", worker_id, f"this worker's id, {info.id}")
    held = _held_generators(info.dataset)
    children = np.random.SeedSequence(info.seed).spawn(len(held))
    for (_, generator), child in zip(held, children, strict=True):
        _reseed(generator, child)
    return [path for path, _ in held]
