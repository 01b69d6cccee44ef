"""ptnotes.data: batched in-memory datasets, the batch sampler, and worker-safe sharding."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils.data import DataLoader, IterableDataset, TensorDataset, default_collate

from ptnotes.data import (
    BatchIndexSampler,
    ShardedIterableDataset,
    TensorBatchDataset,
    batched_loader,
)

#: Seconds a DataLoader waits for a worker before failing, so a broken test cannot hang.
WORKER_TIMEOUT = 30.0


class CountIndexing(TorchFunctionMode):
    """Count ``Tensor.__getitem__`` calls made while the mode is active."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        if func is torch.Tensor.__getitem__:
            self.calls += 1
        return func(*args, **(kwargs or {}))


class RecordingDataset(TensorBatchDataset):
    """A TensorBatchDataset that records the keys ``__getitem__`` receives."""

    def __init__(self, *tensors: torch.Tensor) -> None:
        super().__init__(*tensors)
        self.keys: list[Any] = []

    def __getitem__(self, index: Any) -> tuple[torch.Tensor, ...]:
        self.keys.append(index)
        return super().__getitem__(index)


class NaiveIterable(IterableDataset[int]):
    """The classic pitfall: ``__iter__`` ignores which worker it runs in."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.n))


@pytest.fixture
def xy() -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.arange(20.0).reshape(10, 2)
    y = torch.arange(10)
    return x, y


def values(batches: list[Any]) -> list[int]:
    """The sample values of a list of batches (tensors or tuples whose last item is y)."""
    out: list[int] = []
    for batch in batches:
        tensor = batch[-1] if isinstance(batch, tuple | list) else batch
        out.extend(torch.as_tensor(tensor).reshape(-1).tolist())
    return out


# -- TensorBatchDataset -----------------------------------------------------------------


def test_dataset_len_is_size_of_dimension_zero(xy: tuple[torch.Tensor, torch.Tensor]) -> None:
    assert len(TensorBatchDataset(*xy)) == 10


def test_dataset_getitem_int_returns_one_row_per_tensor(
    xy: tuple[torch.Tensor, torch.Tensor],
) -> None:
    x, y = TensorBatchDataset(*xy)[3]
    assert torch.equal(x, torch.tensor([6.0, 7.0]))
    assert torch.equal(y, torch.tensor(3))


@pytest.mark.parametrize(
    "indices",
    [
        [4, 0, 9],
        (4, 0, 9),
        range(3),
        torch.tensor([4, 0, 9]),
        torch.tensor([1, 2], dtype=torch.int32),
    ],
    ids=["list", "tuple", "range", "int64-tensor", "int32-tensor"],
)
def test_getitems_equals_stacking_the_samples(
    xy: tuple[torch.Tensor, torch.Tensor], indices: Any
) -> None:
    batch = TensorBatchDataset(*xy).__getitems__(indices)
    expected = default_collate([TensorDataset(*xy)[int(i)] for i in indices])
    assert all(torch.equal(b, e) for b, e in zip(batch, expected, strict=True))


@pytest.mark.parametrize("num_tensors", [1, 2, 3])
def test_getitems_does_one_indexing_operation_per_tensor(num_tensors: int) -> None:
    dataset = TensorBatchDataset(*(torch.arange(8) for _ in range(num_tensors)))
    with CountIndexing() as counter:
        dataset.__getitems__([7, 1, 3, 5])
    assert counter.calls == num_tensors


def test_getitem_with_index_tensor_returns_the_batch(
    xy: tuple[torch.Tensor, torch.Tensor],
) -> None:
    _, y = TensorBatchDataset(*xy)[torch.tensor([2, 5])]
    assert y.tolist() == [2, 5]


def test_getitems_with_no_index_returns_empty_batch(xy: tuple[torch.Tensor, torch.Tensor]) -> None:
    x, y = TensorBatchDataset(*xy).__getitems__([])
    assert x.shape == (0, 2)
    assert y.shape == (0,)


def test_dataset_repr_shows_length_and_shapes(xy: tuple[torch.Tensor, torch.Tensor]) -> None:
    assert repr(TensorBatchDataset(*xy)) == "TensorBatchDataset(len=10, shapes=[(10, 2), (10,)])"


def test_dataset_rejects_tensors_of_different_lengths() -> None:
    with pytest.raises(ValueError, match=r"equal size in dimension 0, got sizes \[4, 5\]"):
        TensorBatchDataset(torch.zeros(4), torch.zeros(5))


@pytest.mark.parametrize("bad", [[1.0, 2.0], None, 3], ids=["list", "none", "int"])
def test_dataset_rejects_non_tensor(bad: object) -> None:
    with pytest.raises(TypeError, match=r"expects tensors\[1\] to be a torch.Tensor"):
        TensorBatchDataset(torch.zeros(2), bad)  # type: ignore[arg-type]


def test_dataset_rejects_no_tensor() -> None:
    with pytest.raises(ValueError, match="at least one tensor"):
        TensorBatchDataset()


def test_dataset_rejects_zero_dimensional_tensor() -> None:
    with pytest.raises(ValueError, match=r"tensors\[0\] to be a tensor with at least one"):
        TensorBatchDataset(torch.tensor(1.0))


@pytest.mark.parametrize(
    ("indices", "error", "message"),
    [
        (torch.zeros(2, 2, dtype=torch.long), ValueError, "int32 tensor, got a tensor with ndim=2"),
        (torch.tensor([0.0, 1.0]), ValueError, "dtype=torch.float32"),
        ([0, 1.5], TypeError, r"expects indices\[1\] to be an int, got float 1.5"),
        ("01", TypeError, "got str"),
        ({0, 1}, TypeError, "a sequence of ints or a 1-D int64 or int32 tensor, got set"),
    ],
    ids=["2-d-tensor", "float-tensor", "float-in-list", "str", "set"],
)
def test_getitems_rejects_bad_indices(
    xy: tuple[torch.Tensor, torch.Tensor], indices: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        TensorBatchDataset(*xy).__getitems__(indices)


@pytest.mark.parametrize("index", [2**63, -(2**63) - 1], ids=["above", "below"])
def test_getitem_int_outside_int64_raises_our_value_error(index: int) -> None:
    # torch itself raises RuntimeError here on older releases (2.4.1), ValueError on newer ones
    with pytest.raises(ValueError, match=r"expects index to be an int in \[-9223372036854775808"):
        TensorBatchDataset(torch.arange(3))[index]


def test_getitem_numpy_int_outside_int64_raises_our_value_error() -> None:
    np = pytest.importorskip("numpy")
    with pytest.raises(ValueError, match="expects index to be an int in"):
        TensorBatchDataset(torch.arange(3))[np.uint64(2**64 - 1)]


# -- BatchIndexSampler ------------------------------------------------------------------


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize(("n", "batch_size"), [(10, 3), (10, 5), (7, 10), (0, 2)])
def test_sampler_yields_every_index_once_per_epoch(n: int, batch_size: int, shuffle: bool) -> None:
    batches = list(BatchIndexSampler(n, batch_size, shuffle=shuffle))
    assert sorted(values(batches)) == list(range(n))
    assert all(b.dtype == torch.int64 and b.ndim == 1 for b in batches)


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize(
    ("n", "batch_size", "num_replicas"), [(10, 3, 1), (10, 4, 1), (11, 2, 3), (9, 3, 3)]
)
def test_sampler_len_is_number_of_batches(
    n: int, batch_size: int, num_replicas: int, drop_last: bool
) -> None:
    for rank in range(num_replicas):
        sampler = BatchIndexSampler(
            n, batch_size, drop_last=drop_last, num_replicas=num_replicas, rank=rank
        )
        assert len(sampler) == len(list(sampler))


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize(
    ("n", "batch_size"), [(2**53 + 1, 1), (2**53 + 1, 2), (2**63 - 1, 3), (2**63 - 1, 2**62)]
)
def test_sampler_len_is_exact_beyond_float_precision(
    n: int, batch_size: int, drop_last: bool
) -> None:
    sampler = BatchIndexSampler(n, batch_size, drop_last=drop_last)
    expected = n // batch_size if drop_last else (n + batch_size - 1) // batch_size
    assert len(sampler) == expected


def test_sampler_drop_last_drops_only_the_short_batch() -> None:
    sizes = [len(b) for b in BatchIndexSampler(10, 4, drop_last=True)]
    assert sizes == [4, 4]


def test_sampler_accepts_a_sized_dataset(xy: tuple[torch.Tensor, torch.Tensor]) -> None:
    assert BatchIndexSampler(TensorBatchDataset(*xy), 4).num_samples == 10


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize(("n", "num_replicas"), [(12, 3), (13, 3), (10, 4), (5, 2)])
def test_sampler_gives_ranks_disjoint_equal_shares(
    n: int, num_replicas: int, shuffle: bool
) -> None:
    shares = [
        values(list(BatchIndexSampler(n, 2, shuffle=shuffle, num_replicas=num_replicas, rank=r)))
        for r in range(num_replicas)
    ]
    assert {len(share) for share in shares} == {n // num_replicas}
    union = [i for share in shares for i in share]
    assert len(set(union)) == len(union) == n - n % num_replicas


def test_sampler_same_epoch_gives_same_order_and_set_epoch_changes_it() -> None:
    first = BatchIndexSampler(50, 50, shuffle=True, seed=3)
    second = BatchIndexSampler(50, 50, shuffle=True, seed=3)
    assert torch.equal(next(iter(first)), next(iter(second)))
    second.set_epoch(1)
    assert not torch.equal(next(iter(first)), next(iter(second)))


def test_sampler_generator_drives_the_shuffle() -> None:
    orders = [
        next(
            iter(
                BatchIndexSampler(50, 50, shuffle=True, generator=torch.Generator().manual_seed(7))
            )
        )
        for _ in range(2)
    ]
    assert torch.equal(orders[0], orders[1])


def test_sampler_with_generator_draws_a_new_order_each_pass() -> None:
    sampler = BatchIndexSampler(50, 50, shuffle=True, generator=torch.Generator().manual_seed(7))
    assert not torch.equal(next(iter(sampler)), next(iter(sampler)))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"batch_size": 0}, ValueError, "batch_size to be an int >= 1, got int 0"),
        ({"batch_size": 2.0}, TypeError, "batch_size to be an int, got float"),
        ({"num_replicas": 2, "rank": 2}, ValueError, r"rank to be an int in \[0, 1\], got int 2"),
        ({"num_replicas": 0}, ValueError, "num_replicas to be an int >= 1, got int 0"),
        (
            {"num_replicas": 2, "generator": torch.Generator()},
            ValueError,
            "generator to be None with num_replicas=2",
        ),
        ({"generator": 0}, TypeError, "generator to be a torch.Generator or None, got int"),
    ],
    ids=[
        "batch-size-zero",
        "batch-size-float",
        "rank-too-big",
        "no-replica",
        "generator-ddp",
        "bad-generator",
    ],
)
def test_sampler_rejects_bad_arguments(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"batch_size": 2, **kwargs}
    with pytest.raises(error, match=message):
        BatchIndexSampler(10, **arguments)


@pytest.mark.parametrize("source", [2.5, None, iter(range(3))], ids=["float", "none", "iterator"])
def test_sampler_rejects_source_that_is_neither_int_nor_sized(source: Any) -> None:
    with pytest.raises(TypeError, match=r"number of samples \(int\) or a sized dataset"):
        BatchIndexSampler(source, 2)


def test_set_epoch_rejects_negative_epoch() -> None:
    with pytest.raises(ValueError, match=r"epoch to be an int in \[0, \d+\], got int -1"):
        BatchIndexSampler(10, 2).set_epoch(-1)


# -- batched_loader ---------------------------------------------------------------------


def test_loader_fetches_each_batch_with_one_getitem_call() -> None:
    dataset = RecordingDataset(torch.arange(10))
    batches = list(batched_loader(dataset, batch_size=4))
    assert [len(k) for k in dataset.keys] == [4, 4, 2]
    assert all(isinstance(k, torch.Tensor) for k in dataset.keys)
    assert [b[0].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_loader_yields_the_tuple_the_dataset_builds(xy: tuple[torch.Tensor, torch.Tensor]) -> None:
    batch = next(iter(batched_loader(TensorBatchDataset(*xy), batch_size=3)))
    assert type(batch) is tuple
    assert [t.shape for t in batch] == [(3, 2), (3,)]


def test_loader_works_with_torch_tensor_dataset(xy: tuple[torch.Tensor, torch.Tensor]) -> None:
    batches = list(batched_loader(TensorDataset(*xy), batch_size=4, drop_last=True))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7]]


@pytest.mark.parametrize("shuffle", [False, True])
def test_loader_with_two_workers_yields_the_same_batches(
    xy: tuple[torch.Tensor, torch.Tensor], shuffle: bool
) -> None:
    dataset = TensorBatchDataset(*xy)
    in_process = list(batched_loader(dataset, 3, shuffle=shuffle))
    workers = list(
        batched_loader(dataset, 3, shuffle=shuffle, num_workers=2, timeout=WORKER_TIMEOUT)
    )
    assert len(workers) == len(in_process) == 4
    for got, want in zip(workers, in_process, strict=True):
        assert all(torch.equal(g, w) for g, w in zip(got, want, strict=True))


def test_getitems_serves_automatic_batching_with_pass_through_collate(
    xy: tuple[torch.Tensor, torch.Tensor],
) -> None:
    loader = DataLoader(TensorBatchDataset(*xy), batch_size=4, collate_fn=lambda batch: batch)
    assert [b[1].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_loader_rejects_iterable_dataset() -> None:
    with pytest.raises(
        TypeError, match=r"map-style torch\.utils\.data\.Dataset, got NaiveIterable"
    ):
        batched_loader(NaiveIterable(4), batch_size=2)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_workers": -1}, ValueError, "num_workers to be an int >= 0, got int -1"),
        ({"timeout": -1.0}, ValueError, "timeout to be a number >= 0, got float -1.0"),
        ({"timeout": "1"}, TypeError, "timeout to be an int or float, got str"),
    ],
    ids=["negative-workers", "negative-timeout", "str-timeout"],
)
def test_loader_rejects_bad_arguments(
    xy: tuple[torch.Tensor, torch.Tensor],
    kwargs: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=message):
        batched_loader(TensorBatchDataset(*xy), 2, **kwargs)


# -- ShardedIterableDataset -------------------------------------------------------------


def test_naive_iterable_dataset_duplicates_samples_with_two_workers() -> None:
    loader = DataLoader(NaiveIterable(6), batch_size=None, num_workers=2, timeout=WORKER_TIMEOUT)
    counts = Counter(int(v) for v in loader)
    assert counts == dict.fromkeys(range(6), 2)


@pytest.mark.parametrize("batch_size", [None, 4])
@pytest.mark.parametrize("n", [7, 12])
def test_sharded_dataset_yields_each_sample_once_with_two_workers(
    n: int, batch_size: int | None
) -> None:
    loader = DataLoader(
        ShardedIterableDataset(torch.arange(n)),
        batch_size=batch_size,
        num_workers=2,
        timeout=WORKER_TIMEOUT,
    )
    assert Counter(values(list(loader))) == dict.fromkeys(range(n), 1)


@pytest.mark.parametrize("num_replicas", [2, 3])
def test_sharded_dataset_splits_ranks_and_workers_disjointly(num_replicas: int) -> None:
    n = 20
    seen: list[int] = []
    for rank in range(num_replicas):
        dataset = ShardedIterableDataset(list(range(n)), num_replicas=num_replicas, rank=rank)
        loader = DataLoader(dataset, batch_size=None, num_workers=2, timeout=WORKER_TIMEOUT)
        share = [int(v) for v in loader]
        assert len(share) == len(dataset) == n // num_replicas
        seen.extend(share)
    assert len(set(seen)) == len(seen) == n - n % num_replicas


def test_sharded_dataset_in_main_process_yields_the_whole_share() -> None:
    assert list(ShardedIterableDataset(["a", "b", "c"])) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("source", "kwargs", "error", "message"),
    [
        ("abc", {}, TypeError, "source to be a tensor or a sequence, got str"),
        (iter([1, 2]), {}, TypeError, "got list_iterator"),
        (torch.tensor(3.0), {}, ValueError, "at least one dimension"),
        ([1, 2], {"num_replicas": 2, "rank": -1}, ValueError, r"rank to be an int in \[0, 1\]"),
    ],
    ids=["str", "iterator", "0-dim-tensor", "negative-rank"],
)
def test_sharded_dataset_rejects_bad_arguments(
    source: Any, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ShardedIterableDataset(source, **kwargs)
