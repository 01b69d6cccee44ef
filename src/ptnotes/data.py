"""Batched loading of in-memory tensors (one indexing operation per tensor), sharded safely."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence, Sized
from typing import Any, TypeVar, cast, overload

import numpy as np
import torch
from torch.utils.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    Sampler,
    Subset,
    get_worker_info,
)

from ptnotes.validation import (
    argument_error,
    check_bool,
    check_int,
    check_number,
    check_seed,
    check_type,
)

__all__ = ["BatchIndexSampler", "ShardedIterableDataset", "TensorBatchDataset", "batched_loader"]

T = TypeVar("T")

Batch = tuple[torch.Tensor, ...]


def _replicas(caller: Callable[..., Any], num_replicas: object, rank: object) -> tuple[int, int]:
    """Validate a (``num_replicas``, ``rank``) pair the way DistributedSampler does."""
    replicas = check_int(caller, "num_replicas", num_replicas, minimum=1)
    rank_ = check_int(caller, "rank", rank, minimum=0, maximum=replicas - 1)
    return replicas, rank_


def _index_tensor(caller: Callable[..., Any], name: str, indices: object) -> torch.Tensor:
    """Return a 1-D int64 or int32 tensor as it is; turn a sequence of ints into an int64 one."""
    if isinstance(indices, torch.Tensor):
        if indices.ndim != 1 or indices.dtype not in (torch.int64, torch.int32):
            got = f"a tensor with ndim={indices.ndim} and dtype={indices.dtype}"
            raise argument_error(caller, name, indices, "a 1-D int64 or int32 tensor", got=got)
        return indices
    if isinstance(indices, Sequence) and not isinstance(indices, str | bytes):
        values = [check_int(caller, f"{name}[{i}]", index) for i, index in enumerate(indices)]
        return torch.tensor(values, dtype=torch.int64, device="cpu")
    expected = "a sequence of ints or a 1-D int64 or int32 tensor"
    raise argument_error(caller, name, indices, expected, error=TypeError)


class TensorBatchDataset(Dataset[Batch]):
    """A map-style dataset over in-memory tensors that share their first dimension.

    Like :class:`torch.utils.data.TensorDataset`, sample ``i`` is
    ``tuple(t[i] for t in tensors)``, and given a 1-D ``int64`` or ``int32`` index tensor
    :meth:`__getitem__` returns a batch as TensorDataset's does. The difference is
    :meth:`__getitems__`, which TensorDataset lacks: it returns a whole batch with **one**
    indexing operation per tensor, instead of ``B`` single-row lookups followed by a
    ``torch.stack`` in ``collate_fn``. For in-memory data that per-sample path, not the
    model, is often what limits throughput.

    Note:
        PyTorch documents :meth:`__getitems__` as returning a *list of samples* that
        ``collate_fn`` then merges. This one returns the already-merged batch, so a
        :class:`~torch.utils.data.DataLoader` with automatic batching
        (``batch_size=B``) must be given a pass-through ``collate_fn`` (for example
        ``collate_fn=lambda batch: batch``); :func:`batched_loader` avoids the question
        by turning automatic batching off. Without one, the default ``collate_fn``
        stacks the batch's tensors into one, without an error in the main process when
        their shapes agree (last example).

    Args:
        *tensors: one or more tensors with the same size in dimension 0.

    Raises:
        TypeError: if an argument is not a :class:`torch.Tensor`.
        ValueError: if no tensor is given, a tensor is 0-dimensional, or the sizes
            of dimension 0 differ.

    Examples:
        >>> import torch
        >>> from ptnotes.data import TensorBatchDataset
        >>> x = torch.arange(12.0).reshape(6, 2)
        >>> y = torch.tensor([0, 1, 0, 1, 0, 1])
        >>> dataset = TensorBatchDataset(x, y)
        >>> dataset
        TensorBatchDataset(len=6, shapes=[(6, 2), (6,)])
        >>> dataset[1]
        (tensor([2., 3.]), tensor(1))
        >>> xb, yb = dataset.__getitems__([4, 0, 5])
        >>> xb
        tensor([[ 8.,  9.],
                [ 0.,  1.],
                [10., 11.]])
        >>> yb
        tensor([0, 0, 1])

        A TensorDataset answers an index tensor with a batch too, but has no
        ``__getitems__``:

        >>> from torch.utils.data import TensorDataset
        >>> TensorDataset(x, y)[torch.tensor([4, 0])][1], hasattr(TensorDataset, "__getitems__")
        (tensor([0, 0]), False)
        >>> dataset[torch.tensor([4, 0])][1]
        tensor([0, 0])

        A 0-d index tensor, which TensorDataset answers with one sample, is refused:

        >>> TensorDataset(x, y)[torch.tensor(4)][1]
        tensor(0)
        >>> dataset[torch.tensor(4)]
        Traceback (most recent call last):
          ...
        ValueError: TensorBatchDataset.__getitem__() expects index to be a 1-D int64 or ...

        With automatic batching and the default ``collate_fn``, the batches of the two
        tensors come stacked into one tensor:

        >>> from torch.utils.data import DataLoader
        >>> pairs = TensorBatchDataset(torch.arange(4.0), torch.arange(4.0) * 10)
        >>> next(iter(DataLoader(pairs, batch_size=2)))
        tensor([[ 0.,  1.],
                [ 0., 10.]])
        >>> next(iter(DataLoader(pairs, batch_size=2, collate_fn=lambda batch: batch)))
        (tensor([0., 1.]), tensor([ 0., 10.]))
    """

    def __init__(self, *tensors: torch.Tensor) -> None:
        if not tensors:
            raise argument_error(
                TensorBatchDataset, "tensors", tensors, "at least one tensor", got="none"
            )
        for position, tensor in enumerate(tensors):
            label = f"tensors[{position}]"
            check_type(TensorBatchDataset, label, tensor, torch.Tensor)
            if tensor.ndim == 0:
                expected = "a tensor with at least one dimension"
                raise argument_error(TensorBatchDataset, label, tensor, expected)
        sizes = [tensor.shape[0] for tensor in tensors]
        if len(set(sizes)) != 1:
            raise argument_error(
                TensorBatchDataset,
                "tensors",
                tensors,
                "of equal size in dimension 0",
                got=f"sizes {sizes}",
            )
        self.tensors: Batch = tuple(tensors)

    def __getitem__(self, index: int | slice | torch.Tensor | Sequence[int]) -> Batch:
        """Return sample ``index`` (an int), or a batch (a slice, or indices).

        Args:
            index: an ``int`` for one sample; a ``slice``, a 1-D ``int64`` or ``int32``
                tensor or a sequence of ints for a batch (one indexing operation per
                tensor).

        Returns:
            A tuple with one tensor per dataset tensor; a row of each for an ``int``, a
            batch of rows otherwise.

        Raises:
            TypeError: if ``index`` is of another type.
            ValueError: if an index tensor is not a 1-D ``int64`` or ``int32`` tensor
                (an ``int16`` one or a boolean mask is refused too), or an index does not
                fit in an int64.
            IndexError: if an index that fits in an int64 is out of range.

        Examples:
            >>> import torch
            >>> from ptnotes.data import TensorBatchDataset
            >>> dataset = TensorBatchDataset(torch.arange(3))
            >>> dataset[[-1]], dataset[1:]
            ((tensor([2]),), (tensor([1, 2]),))
            >>> dataset[torch.tensor([0, 1], dtype=torch.int32)]
            (tensor([0, 1]),)
            >>> dataset[torch.tensor([0, 1], dtype=torch.int16)]
            Traceback (most recent call last):
              ...
            ValueError: TensorBatchDataset.__getitem__() expects index to be a 1-D int64 or ...
            >>> dataset[[3]]
            Traceback (most recent call last):
              ...
            IndexError: index 3 is out of bounds for dimension 0 with size 3
            >>> dataset[2**63]
            Traceback (most recent call last):
              ...
            ValueError: TensorBatchDataset.__getitem__() expects index to be an int in [...] ...
            >>> dataset[[2**63]]
            Traceback (most recent call last):
              ...
            ValueError: TensorBatchDataset.__getitem__() expects index[0] to be an int in [...] ...
        """
        if isinstance(index, slice):
            return tuple(tensor[index] for tensor in self.tensors)
        if isinstance(index, int | np.integer) and not isinstance(index, bool):
            row = check_int(TensorBatchDataset.__getitem__, "index", index)  # int64, every release
            return tuple(tensor[row] for tensor in self.tensors)
        rows = _index_tensor(TensorBatchDataset.__getitem__, "index", index)
        return tuple(tensor[rows] for tensor in self.tensors)

    def __getitems__(self, indices: Sequence[int] | torch.Tensor) -> Batch:
        """Return the batch of samples ``indices``: one indexing operation per tensor.

        Args:
            indices: a sequence of ints or a 1-D ``int64`` or ``int32`` tensor.

        Returns:
            A tuple with one tensor per dataset tensor, each of size ``len(indices)``
            in dimension 0.

        Raises:
            TypeError: if ``indices`` is not a sequence of ints or a tensor.
            ValueError: if an index tensor is not a 1-D ``int64`` or ``int32`` tensor
                (an ``int16`` one or a boolean mask is refused too), or an index does not
                fit in an int64.
            IndexError: if an index that fits in an int64 is out of range.

        Examples:
            >>> import torch
            >>> from ptnotes.data import TensorBatchDataset
            >>> dataset = TensorBatchDataset(torch.arange(3))
            >>> dataset.__getitems__([3])
            Traceback (most recent call last):
              ...
            IndexError: index 3 is out of bounds for dimension 0 with size 3
            >>> dataset.__getitems__(torch.tensor([0], dtype=torch.int16))
            Traceback (most recent call last):
              ...
            ValueError: TensorBatchDataset.__getitems__() expects indices to be a 1-D int64 or ...
            >>> dataset.__getitems__([2**63])
            Traceback (most recent call last):
              ...
            ValueError: TensorBatchDataset.__getitems__() expects indices[0] to be an int in ...
        """
        rows = _index_tensor(TensorBatchDataset.__getitems__, "indices", indices)
        return tuple(tensor[rows] for tensor in self.tensors)

    def __len__(self) -> int:
        """The number of samples: the common size of dimension 0."""
        return self.tensors[0].shape[0]

    def __repr__(self) -> str:
        shapes = ", ".join(str(tuple(tensor.shape)) for tensor in self.tensors)
        return f"{type(self).__name__}(len={len(self)}, shapes=[{shapes}])"


def _rank_share(num_samples: int, num_replicas: int, rank: int) -> tuple[int, int, int]:
    """``(start, stop, step)`` of the positions rank ``rank`` owns: equal, disjoint shares.

    The ``num_samples % num_replicas`` last positions belong to no rank.
    """
    usable = num_samples - num_samples % num_replicas
    return rank, usable, num_replicas


def _sampler_options(
    caller: Callable[..., Any],
    batch_size: object,
    shuffle: object,
    drop_last: object,
    generator: object,
    num_replicas: object,
    rank: object,
    seed: object,
) -> tuple[int, bool, bool, torch.Generator | None, int, int, int]:
    """Check the options of a :class:`BatchIndexSampler` in the name of ``caller``."""
    size = check_int(caller, "batch_size", batch_size, minimum=1)
    replicas, rank_ = _replicas(caller, num_replicas, rank)
    shuffle_ = check_bool(caller, "shuffle", shuffle)
    drop_last_ = check_bool(caller, "drop_last", drop_last)
    if generator is not None:
        generator = check_type(
            caller, "generator", generator, torch.Generator, expected="a torch.Generator or None"
        )
        if replicas > 1:
            expected = (
                f"None with num_replicas={replicas} (every rank must draw the "
                "same permutation: use seed and set_epoch instead)"
            )
            raise argument_error(caller, "generator", generator, expected)
    seed_ = check_seed(caller, "seed", seed)
    return size, shuffle_, drop_last_, generator, replicas, rank_, seed_


class BatchIndexSampler(Sampler[torch.Tensor]):
    """Yield one int64 index tensor per batch, sharded across ranks like DistributedSampler.

    Each epoch the sample indices ``0 .. n - 1`` are taken in order (or shuffled), the
    last ``n % num_replicas`` of them are left out (with shuffling, the ones the epoch's
    permutation puts last, which may be the same in two epochs), and rank ``r`` takes
    every ``num_replicas``-th index starting at ``r``; its share is then cut into batches.
    Every rank therefore gets a disjoint share of the same size ``n // num_replicas``
    (DistributedSampler's default pads instead, repeating a few samples so that no
    sample is left out).

    Shuffling is reproducible: with ``generator=None`` the permutation of an epoch is
    drawn from a generator seeded with ``seed + epoch``, so every rank draws the same
    one. As with DistributedSampler, call :meth:`set_epoch` at the start of every
    epoch, or each epoch repeats the same order. With a ``generator`` (one replica
    only), each pass draws a new permutation from it instead, and the epoch plays no
    part.

    Args:
        data_source: the number of samples, or a sized dataset (its ``len`` is read
            once, here).
        batch_size: the number of indices per batch.
        shuffle: shuffle the positions every epoch.
        drop_last: drop the last batch of a rank's share if it is smaller than
            ``batch_size``.
        generator: the random generator for shuffling, with ``num_replicas=1``.
        num_replicas: the number of processes sharing the data (the world size).
        rank: this process's rank, in ``[0, num_replicas)``.
        seed: the base seed of the shuffle when ``generator`` is ``None``; the same
            on every rank.

    Raises:
        TypeError: if ``data_source`` is neither an int nor sized (a ``str`` is refused:
            its length counts characters), or an argument has the wrong type.
        ValueError: for an argument out of range, such as a negative ``data_source`` or
            ``seed``, one of those or a ``batch_size`` above ``2**63 - 1``, a
            ``batch_size`` or ``num_replicas`` below 1, a ``rank`` outside
            ``[0, num_replicas)``, or a ``generator`` combined with several replicas.

    Examples:
        >>> import torch
        >>> from ptnotes.data import BatchIndexSampler
        >>> list(BatchIndexSampler(7, batch_size=3))
        [tensor([0, 1, 2]), tensor([3, 4, 5]), tensor([6])]
        >>> [list(BatchIndexSampler(7, 2, num_replicas=2, rank=r)) for r in (0, 1)]
        [[tensor([0, 2]), tensor([4])], [tensor([1, 3]), tensor([5])]]
        >>> sampler = BatchIndexSampler(6, batch_size=6, shuffle=True, seed=0)
        >>> first = next(iter(sampler))
        >>> torch.equal(first, next(iter(sampler)))  # no set_epoch: the same order
        True
        >>> sampler.set_epoch(1)
        >>> torch.equal(first, next(iter(sampler)))
        False
        >>> sorted(first.tolist())
        [0, 1, 2, 3, 4, 5]
        >>> torch.equal(first, torch.randperm(6, generator=torch.Generator().manual_seed(0)))
        True

        Which samples are left out depends on the epoch's permutation: with 3 samples on
        2 ranks, one of 3 is left out, so 4 epochs cannot all leave out different ones:

        >>> def left_out(epoch):
        ...     taken = set()
        ...     for r in (0, 1):
        ...         shard = BatchIndexSampler(3, 3, shuffle=True, num_replicas=2, rank=r)
        ...         shard.set_epoch(epoch)
        ...         taken.update(torch.cat(list(shard)).tolist())
        ...     return frozenset(range(3)) - taken
        >>> len({left_out(epoch) for epoch in range(4)}) < 4
        True

        DistributedSampler's default repeats sample 0 on rank 1 instead:

        >>> from torch.utils.data import DistributedSampler
        >>> [list(DistributedSampler(range(7), 2, r, shuffle=False)) for r in (0, 1)]
        [[0, 2, 4, 6], [1, 3, 5, 0]]

        With a ``generator``, each pass draws anew from it, whatever the epoch:

        >>> g = torch.Generator().manual_seed(0)
        >>> sampler = BatchIndexSampler(6, batch_size=6, shuffle=True, generator=g)
        >>> state = g.get_state()
        >>> first = next(iter(sampler))
        >>> torch.equal(first, next(iter(sampler)))
        False
        >>> _ = g.set_state(state)
        >>> sampler.set_epoch(5)
        >>> torch.equal(first, next(iter(sampler)))
        True

        A seed, a batch size or an epoch must fit in an int64:

        >>> BatchIndexSampler(6, batch_size=2**63)
        Traceback (most recent call last):
          ...
        ValueError: BatchIndexSampler() expects batch_size to be an int in [1, ...] (int64), ...
        >>> BatchIndexSampler(6, batch_size=2, seed=2**63)
        Traceback (most recent call last):
          ...
        ValueError: BatchIndexSampler() expects seed to be an int in [0, 9223372036854775807], ...
        >>> sampler.set_epoch(2**63)
        Traceback (most recent call last):
          ...
        ValueError: BatchIndexSampler.set_epoch() expects epoch to be an int in [0, ...], ...
    """

    def __init__(
        self,
        data_source: int | Sized,
        batch_size: int,
        shuffle: bool = False,
        drop_last: bool = False,
        generator: torch.Generator | None = None,
        num_replicas: int = 1,
        rank: int = 0,
        seed: int = 0,
    ) -> None:
        me = BatchIndexSampler
        if isinstance(data_source, str | bytes):  # sized, but its len counts characters
            expected = "a number of samples (int) or a sized dataset"
            raise argument_error(me, "data_source", data_source, expected, error=TypeError)
        if isinstance(data_source, Sized):
            num_samples = len(data_source)
        elif isinstance(data_source, int | np.integer) and not isinstance(data_source, bool):
            num_samples = check_int(me, "data_source", data_source, minimum=0)
        else:
            expected = "a number of samples (int) or a sized dataset"
            raise argument_error(me, "data_source", data_source, expected, error=TypeError)
        self.num_samples = num_samples
        (
            self.batch_size,
            self.shuffle,
            self.drop_last,
            self.generator,
            self.num_replicas,
            self.rank,
            self.seed,
        ) = _sampler_options(
            me, batch_size, shuffle, drop_last, generator, num_replicas, rank, seed
        )
        self.epoch = 0

    @property
    def share(self) -> int:
        """How many samples this rank gets per epoch, ``num_samples // num_replicas``."""
        return self.num_samples // self.num_replicas

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch, which with ``seed`` selects the shuffle when ``generator`` is None.

        Args:
            epoch: the epoch about to start, the same on every rank.

        Raises:
            TypeError: if ``epoch`` is not an int.
            ValueError: if ``epoch`` is negative or above ``2**63 - 1``.
        """
        self.epoch = check_seed(BatchIndexSampler.set_epoch, "epoch", epoch)

    def __iter__(self) -> Iterator[torch.Tensor]:
        if self.shuffle:
            generator = self.generator
            if generator is None:
                generator = torch.Generator(device="cpu")
                generator.manual_seed(self.seed + self.epoch)
            order = torch.randperm(self.num_samples, generator=generator, device="cpu")
        else:
            order = torch.arange(self.num_samples, device="cpu")
        start, stop, step = _rank_share(self.num_samples, self.num_replicas, self.rank)
        mine = order[start:stop:step]
        if mine.numel() == 0:  # torch.split would still give one empty chunk
            return
        for batch in torch.split(mine, self.batch_size):
            if self.drop_last and batch.numel() < self.batch_size:
                return
            yield batch

    def __len__(self) -> int:
        """The number of batches this rank yields per epoch.

        Examples:
            >>> from ptnotes.data import BatchIndexSampler
            >>> len(BatchIndexSampler(7, 3)), len(BatchIndexSampler(7, 3, drop_last=True))
            (3, 2)

            The count is exact also beyond the 53 bits of a float:

            >>> len(BatchIndexSampler(2**53 + 1, batch_size=1)) == 2**53 + 1
            True
        """
        if self.drop_last:
            return self.share // self.batch_size
        return -(-self.share // self.batch_size)


def _pass_through(batch: T) -> T:
    """A ``collate_fn`` that returns the batch the dataset built, unchanged."""
    return batch


def _per_sample_part(dataset: object) -> object | None:
    """The dataset, or one inside it, known not to answer every index tensor with a batch.

    That is the dataset, or the one a chain of tensor-indexed subsets of it leads to, when
    it is a ConcatDataset or a Subset whose indices are not a tensor; ``None`` for any other.

    A :class:`~torch.utils.data.Subset` passes a whole index tensor on to its own dataset
    (``dataset[indices[index]]``) when its indices are a tensor. A list or a range of
    indices fails on more than one index, and with those or a NumPy array a one-element
    index tensor hands on one plain index: a batch of one arrives as one sample, without
    its batch dimension. A :class:`~torch.utils.data.ConcatDataset` takes a one-element
    index tensor only (a longer one raises torch's ``RuntimeError``).
    """
    seen: set[int] = set()
    while id(dataset) not in seen:
        seen.add(id(dataset))
        if isinstance(dataset, ConcatDataset):
            return dataset
        if not isinstance(dataset, Subset):
            return None
        if not isinstance(dataset.indices, torch.Tensor):
            return dataset
        dataset = dataset.dataset
    return None


def batched_loader(
    dataset: Dataset[T],
    batch_size: int,
    *,
    shuffle: bool = False,
    drop_last: bool = False,
    num_workers: int = 0,
    generator: torch.Generator | None = None,
    num_replicas: int = 1,
    rank: int = 0,
    seed: int = 0,
    pin_memory: bool = False,
    timeout: float = 0.0,
) -> DataLoader[T]:
    """Return a DataLoader that fetches each batch with one ``dataset[indices]`` call.

    How it works: the :class:`BatchIndexSampler` is passed as ``sampler=`` together with
    ``batch_size=None``, which turns off the DataLoader's *automatic batching*. With
    automatic batching (``batch_size=B``) the DataLoader groups ``B`` keys from its
    sampler, fetches them (``dataset.__getitems__(keys)`` if defined, else ``B`` calls
    ``dataset[i]``) and merges the samples with ``collate_fn``
    (:func:`~torch.utils.data.default_collate` stacks them: another copy). With
    ``batch_size=None`` every key the sampler yields is fetched on its own with
    ``dataset[key]``; here a key is a whole index tensor, so
    :meth:`TensorBatchDataset.__getitem__` answers it with one indexing operation per
    tensor, and nothing is left to collate. ``collate_fn`` still runs on each fetched
    value; the default for this mode,
    :func:`~torch.utils.data.default_convert`, would turn the tuple into a list, so
    a pass-through is used instead and, with ``pin_memory=False``, a batch arrives as the
    tuple the dataset built.

    With ``num_workers > 0`` the sampler still runs in the main process: each worker
    receives index tensors and returns whole batches.

    Args:
        dataset: a map-style dataset whose ``__getitem__`` accepts a 1-D int64 index
            tensor, such as :class:`TensorBatchDataset` or
            :class:`~torch.utils.data.TensorDataset`.
        batch_size: the number of samples per batch.
        shuffle: shuffle every epoch (see :class:`BatchIndexSampler` for the seeding).
        drop_last: drop each epoch's last, smaller batch.
        num_workers: the number of worker processes; ``0`` loads in the main process.
        generator: the shuffle's random generator (with ``num_replicas=1`` only).
        num_replicas: the number of processes sharing the data (the world size).
        rank: this process's rank.
        seed: the base seed of the shuffle when ``generator`` is ``None``.
        pin_memory: copy batches into pinned memory (for faster host-to-GPU copies);
            without an accelerator, the DataLoader pins nothing.
        timeout: seconds to wait for a batch from a worker; ``0`` waits forever.

    Returns:
        A DataLoader whose ``sampler`` attribute is the :class:`BatchIndexSampler`
        (call its ``set_epoch`` every epoch when shuffling).

    Raises:
        TypeError: if ``dataset`` is not a sized map-style
            :class:`~torch.utils.data.Dataset`, it is known to refuse an index tensor (a
            :class:`~torch.utils.data.Subset` with a list of indices, a
            :class:`~torch.utils.data.ConcatDataset`: refused here rather than at the
            first batch), or an argument has the wrong type.
        ValueError: for an argument out of range, such as a ``batch_size`` below 1 or
            above ``2**63 - 1``, a negative ``num_workers`` or ``timeout``, a NaN or
            infinite ``timeout``, a ``seed`` outside ``[0, 2**63 - 1]``, or inconsistent
            sharding arguments (a ``generator`` with several replicas, say).

    Examples:
        >>> import torch
        >>> from ptnotes.data import TensorBatchDataset, batched_loader
        >>> dataset = TensorBatchDataset(torch.arange(10.0), torch.arange(10) % 2)
        >>> loader = batched_loader(dataset, batch_size=4)
        >>> for x, y in loader:
        ...     print(x.tolist(), y.tolist())
        [0.0, 1.0, 2.0, 3.0] [0, 1, 0, 1]
        [4.0, 5.0, 6.0, 7.0] [0, 1, 0, 1]
        [8.0, 9.0] [0, 1]
        >>> len(loader), loader.batch_size is None, type(loader.sampler).__name__
        (3, True, 'BatchIndexSampler')
        >>> type(next(iter(loader))).__name__
        'tuple'

        Workers return whole batches; ``pin_memory`` pins only where there is an
        accelerator:

        >>> [x.tolist() for x, _ in batched_loader(dataset, batch_size=4, num_workers=2)]
        [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0]]
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # some releases warn: "... no accelerator ..."
        ...     x, _ = next(iter(batched_loader(dataset, batch_size=4, pin_memory=True)))
        >>> x.is_pinned() == torch.cuda.is_available()
        True

        A NaN or infinite ``timeout``, a negative ``seed`` and a ``generator`` with several
        replicas are refused (one replica takes a ``generator``, workers or not):

        >>> batched_loader(dataset, batch_size=4, timeout=float("nan"))
        Traceback (most recent call last):
          ...
        ValueError: batched_loader() expects timeout to be a number, not NaN, got float nan
        >>> batched_loader(dataset, batch_size=4, timeout=float("inf"))
        Traceback (most recent call last):
          ...
        ValueError: batched_loader() expects timeout to be a finite number, got float inf
        >>> g = torch.Generator().manual_seed(0)
        >>> batched_loader(dataset, batch_size=4, generator=g, num_replicas=2, rank=0)
        Traceback (most recent call last):
          ...
        ValueError: batched_loader() expects generator to be None with num_replicas=2 ...
        >>> loader = batched_loader(dataset, batch_size=4, shuffle=True, generator=g, num_workers=2)
        >>> sorted(torch.cat([x for x, _ in loader]).tolist()) == dataset.tensors[0].tolist()
        True
        >>> batched_loader(dataset, batch_size=4, seed=-1)
        Traceback (most recent call last):
          ...
        ValueError: batched_loader() expects seed to be an int in [0, 9223372036854775807], ...
    """
    me = batched_loader
    if not isinstance(dataset, Dataset) or isinstance(dataset, IterableDataset):
        expected = "a map-style torch.utils.data.Dataset"
        raise argument_error(me, "dataset", dataset, expected, error=TypeError)
    if not isinstance(dataset, Sized):
        raise argument_error(me, "dataset", dataset, "a dataset with __len__", error=TypeError)
    workers = check_int(me, "num_workers", num_workers, minimum=0)
    wait = check_number(me, "timeout", timeout, minimum=0)
    pin = check_bool(me, "pin_memory", pin_memory)
    size, shuffle_, drop_last_, generator_, replicas, rank_, seed_ = _sampler_options(
        me, batch_size, shuffle, drop_last, generator, num_replicas, rank, seed
    )
    part = _per_sample_part(dataset)
    if part is not None:  # fail here, not at the first batch of the first epoch
        expected = (
            "a dataset whose __getitem__ takes a 1-D int64 index tensor (a whole batch), "
            "such as TensorBatchDataset or TensorDataset"
        )
        inside = "" if part is dataset else f" inside {type(dataset).__name__}"
        got = (
            f"{type(part).__name__}{inside}, which indexes its parts one sample at a time "
            "(for a subset, index the tensors instead: TensorBatchDataset(*(t[indices] for "
            "t in tensors)))"
        )
        raise argument_error(me, "dataset", dataset, expected, error=TypeError, got=got)
    sampler = BatchIndexSampler(
        len(dataset),
        size,
        shuffle=shuffle_,
        drop_last=drop_last_,
        generator=generator_,
        num_replicas=replicas,
        rank=rank_,
        seed=seed_,
    )
    return DataLoader(
        dataset,
        batch_size=None,
        sampler=sampler,
        num_workers=workers,
        collate_fn=_pass_through,
        pin_memory=pin,
        timeout=wait if workers else 0.0,
    )


class ShardedIterableDataset(IterableDataset[T]):
    """An iterable dataset that hands each sample of its rank's share to exactly one worker.

    A DataLoader with ``num_workers=k`` copies an iterable dataset into each of its
    ``k`` worker processes and calls ``iter()`` on every copy, so a dataset whose
    ``__iter__`` simply walks its source yields every sample ``k`` times. Here
    ``__iter__`` asks :func:`torch.utils.data.get_worker_info` which worker it runs in
    and keeps only that worker's positions: worker ``w`` of ``k`` takes every
    ``k``-th position of the rank's share, starting at ``w``.

    Across ranks the share is cut like :class:`BatchIndexSampler`'s: rank ``r`` takes
    every ``num_replicas``-th position starting at ``r``, and the
    ``n % num_replicas`` last positions are left out, so that every rank yields the
    same number of samples.

    With automatic batching each worker builds its batches from its own samples, so
    with ``n`` samples, ``k`` workers and ``batch_size=B`` a rank may get up to ``k``
    smaller batches per epoch instead of one.

    Args:
        source: a tensor (its rows are the samples) or a sequence of samples.
        num_replicas: the number of processes sharing the data (the world size).
        rank: this process's rank, in ``[0, num_replicas)``.

    Raises:
        TypeError: if ``source`` is not a tensor or a sequence, or is a ``str`` or ``bytes``,
            or an argument has the wrong type.
        ValueError: if ``source`` is a 0-dimensional tensor, ``num_replicas`` is below
            1 or ``rank`` is outside ``[0, num_replicas)``.

    Examples:
        >>> from ptnotes.data import ShardedIterableDataset
        >>> dataset = ShardedIterableDataset(list(range(7)), num_replicas=2, rank=1)
        >>> list(dataset), len(dataset)
        ([1, 3, 5], 3)
        >>> list(ShardedIterableDataset(list(range(7)), num_replicas=2, rank=0))  # 6: no rank
        [0, 2, 4]

        In a DataLoader's worker ``w`` of ``k``, it keeps every ``k``-th of those
        samples, starting at ``w``; in the main process (no worker) it keeps them all.
        Two workers yield each sample once, and each builds its own batches: two of 3
        where one process would give 4 and 2. A naive iterable dataset comes twice:

        >>> import torch
        >>> from torch.utils.data import DataLoader, IterableDataset
        >>> sharded = ShardedIterableDataset(list(range(6)))
        >>> [b.tolist() for b in DataLoader(sharded, batch_size=4, num_workers=2)]
        [[0, 2, 4], [1, 3, 5]]
        >>> class Naive(IterableDataset):
        ...     def __iter__(self):
        ...         return iter(range(3))
        >>> sorted(DataLoader(Naive(), batch_size=None, num_workers=2))
        [0, 0, 1, 1, 2, 2]

        A string is a sequence, but of characters: it is refused.

        >>> ShardedIterableDataset("abc")
        Traceback (most recent call last):
          ...
        TypeError: ShardedIterableDataset() expects source to be a tensor or a sequence, got str ...
    """

    @overload
    def __init__(
        self: ShardedIterableDataset[torch.Tensor],
        source: torch.Tensor,
        *,
        num_replicas: int = 1,
        rank: int = 0,
    ) -> None: ...
    @overload
    def __init__(
        self: ShardedIterableDataset[T],
        source: Sequence[T],
        *,
        num_replicas: int = 1,
        rank: int = 0,
    ) -> None: ...
    def __init__(
        self,
        source: torch.Tensor | Sequence[Any],
        *,
        num_replicas: int = 1,
        rank: int = 0,
    ) -> None:
        me = ShardedIterableDataset
        if isinstance(source, torch.Tensor):
            if source.ndim == 0:
                expected = "a tensor with at least one dimension, or a sequence"
                raise argument_error(me, "source", source, expected)
        elif not isinstance(source, Sequence) or isinstance(source, str | bytes):
            expected = "a tensor or a sequence"
            raise argument_error(me, "source", source, expected, error=TypeError)
        self.source = source
        self.num_replicas, self.rank = _replicas(me, num_replicas, rank)

    def _positions(self) -> range:
        """The positions of ``source`` this rank owns, all workers together."""
        return range(*_rank_share(len(self.source), self.num_replicas, self.rank))

    def __iter__(self) -> Iterator[T]:
        positions = self._positions()
        info = get_worker_info()
        if info is not None:
            positions = positions[info.id :: info.num_workers]
        for position in positions:
            yield cast("T", self.source[position])

    def __len__(self) -> int:
        """The number of samples this rank yields per epoch, all workers together."""
        return len(self._positions())
