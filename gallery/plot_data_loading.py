"""
How much faster is loading a whole batch at once than one sample at a time?
============================================================================

A :class:`~torch.utils.data.DataLoader` with ``batch_size=B`` normally calls
``dataset[i]`` ``B`` times and stacks the samples with ``collate_fn``: ``B`` Python calls
and ``B`` small tensors per batch. For data already in memory, one indexing operation per
batch does the same work. This script times both over the same tensors:
:class:`torch.utils.data.TensorDataset` through the default loader, and
:class:`ptnotes.data.TensorBatchDataset` through :func:`ptnotes.data.batched_loader`.
"""

# %%
# The data and the two loaders
# ----------------------------
# 4096 samples of a 3 x 16 x 16 image and a label. Both loaders shuffle and run in the main
# process (``num_workers=0``), so the time measured is the loading itself. Timing runs on
# one thread.
import statistics
from collections.abc import Callable

import matplotlib.pyplot as plt
import numpy as np
import torch
from ptnotes_dev.bench import Contender, Timer
from torch.utils.data import DataLoader, TensorDataset

from ptnotes.data import TensorBatchDataset, batched_loader

threads = torch.get_num_threads()
torch.set_num_threads(1)
torch.manual_seed(0)
images = torch.randn(4096, 3, 16, 16)
labels = torch.randint(10, (4096,))
per_item = TensorDataset(images, labels)
batched = TensorBatchDataset(images, labels)


def per_item_loader(batch_size: int) -> DataLoader:
    """The default path: ``batch_size`` calls of ``dataset[i]``, then ``default_collate``."""
    generator = torch.Generator().manual_seed(0)
    return DataLoader(per_item, batch_size=batch_size, shuffle=True, generator=generator)


def batched_loader_for(batch_size: int) -> DataLoader:
    """One ``dataset[indices]`` per batch, nothing left to collate."""
    return batched_loader(batched, batch_size, shuffle=True, seed=0)


# %%
# Both deliver the same batches
# -----------------------------
# Without shuffling, the first batch of each loader holds the same rows.
x1, y1 = next(iter(DataLoader(per_item, batch_size=8)))
x2, y2 = next(iter(batched_loader(batched, 8)))
print("same first batch:", torch.equal(x1, x2) and torch.equal(y1, y2))


# %%
# Timing whole epochs
# -------------------
# One epoch is a full pass over the loader. The two loaders of a batch size are timed by
# ``ptnotes_dev.bench.Timer``, the harness behind the :doc:`/bench` page: one untimed epoch
# each, then five rounds in which they alternate (A B A B ...), so that a change of load on
# the machine falls on both; each keeps the median of its five epochs.
def epoch(loader: DataLoader) -> Callable[[], None]:
    """One full pass over ``loader``."""

    def run() -> None:
        for _ in loader:
            pass

    return run


batch_sizes = [16, 64, 256]
names = ("per-item __getitem__ + collate", "batched_loader (one index per batch)")
speed: dict[str, list[float]] = {name: [] for name in names}
for batch_size in batch_sizes:
    seconds = Timer(repeats=5, warmup=1).run(
        [
            Contender(names[0], epoch(per_item_loader(batch_size))),
            Contender(names[1], epoch(batched_loader_for(batch_size))),
        ]
    )
    for name in names:
        speed[name].append(len(images) / statistics.median(seconds[name]))
    slow, fast = speed[names[0]][-1], speed[names[1]][-1]
    print(
        f"batch {batch_size:>3}: per-item {slow:>9,.0f} samples/s, "
        f"batched {fast:>9,.0f} samples/s, ratio {fast / slow:.1f}x"
    )

# %%
# The picture
# -----------
# Samples per second, higher is better. The per-item loader pays Python work for every
# sample, whatever the batch size; the batched loader pays its fixed costs (sampler,
# fetch, one indexing call per tensor) once per batch.
fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
positions = np.arange(len(batch_sizes))
for offset, (name, values) in zip((-0.2, 0.2), speed.items(), strict=True):
    bars = ax.bar(positions + offset, values, width=0.4, label=name)
    ax.bar_label(bars, fmt="{:,.0f}", fontsize=8)
ax.set_xticks(positions, [str(b) for b in batch_sizes])
ax.set_xlabel("batch size")
ax.set_ylabel("samples per second (median of 5 epochs)")
ax.set_title("Loading 4096 in-memory samples, num_workers=0, one thread")
ax.legend(loc="upper left", fontsize=8)
ax.margins(y=0.15)
plt.show()
torch.set_num_threads(threads)

# %%
# Take-away
# ---------
# When the data already sits in tensors, the per-sample path (a Python call per sample, then
# a ``torch.stack``) was the slower one at every batch size of the run above. Fetch the batch
# with one indexing operation, ``__getitems__`` or an index-tensor ``__getitem__``, and turn
# automatic batching off as :func:`~ptnotes.data.batched_loader` does.
