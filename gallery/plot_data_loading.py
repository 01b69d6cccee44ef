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
# one thread: the numbers are steadier, and the indexing is too small to gain from more.
import statistics
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
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
# One epoch is a full pass over the loader with :func:`time.perf_counter` around it; each
# configuration runs one untimed epoch, then five timed ones, and keeps the median.
def samples_per_second(loader: DataLoader, repeats: int = 5) -> float:
    for _ in loader:  # warm-up epoch
        pass
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in loader:
            pass
        times.append(time.perf_counter() - start)
    return len(images) / statistics.median(times)


batch_sizes = [16, 64, 256]
speed = {"per-item __getitem__ + collate": [], "batched_loader (one index per batch)": []}
for batch_size in batch_sizes:
    slow = samples_per_second(per_item_loader(batch_size))
    fast = samples_per_second(batched_loader_for(batch_size))
    speed["per-item __getitem__ + collate"].append(slow)
    speed["batched_loader (one index per batch)"].append(fast)
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
# a ``torch.stack``) costs far more than the copy itself. Fetch the batch with one indexing
# operation, ``__getitems__`` or an index-tensor ``__getitem__``, and turn automatic batching
# off as :func:`~ptnotes.data.batched_loader` does; worker processes are then rarely needed.
