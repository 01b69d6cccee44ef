"""
Does ``torch.compile`` make a small MLP faster on the CPU?
==========================================================

:func:`torch.compile` traces a model's Python code into a graph (TorchDynamo) and hands it
to a backend; the default backend, Inductor, generates and compiles C++ for the CPU. The
first call pays for all of that, unless Inductor's on-disk cache already holds the code from an
earlier run (a second run of this script skips the C++ compilation). Later calls with an input
of the same shape, under the same grad mode, run the compiled code (a new batch size, or a call
outside :class:`torch.no_grad`, compiles again). This script measures both costs for a small
MLP, so that the trade-off can be read in seconds and microseconds.
"""

# %%
# The model, and a fair comparison
# --------------------------------
# A three-layer MLP on batches of 64, in inference (under :class:`torch.no_grad`), so only
# the forward pass is compiled. Both versions share the same weights, and all timing runs on
# one thread.
import statistics
import time
from collections.abc import Callable

import matplotlib.pyplot as plt
import torch
from ptnotes_dev.bench import Contender, Timer
from torch import nn

threads = torch.get_num_threads()
torch.set_num_threads(1)
torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)
).eval()
x = torch.randn(64, 64)

# %%
# The first call: compilation
# ---------------------------
# ``torch.compile`` itself returns a wrapper, in the time printed first; the tracing and
# compiling happen on the first call of the wrapper. The times printed are what *this* run
# paid.
start = time.perf_counter()
compiled = torch.compile(model)  # backend="inductor", the default
wrap_seconds = time.perf_counter() - start
print(f"torch.compile(model) returned {type(compiled).__name__} in {wrap_seconds:.1f} s")
with torch.no_grad():
    start = time.perf_counter()
    compiled(x)
    compile_seconds = time.perf_counter() - start
    same = torch.allclose(compiled(x), model(x), atol=1e-5)
print(f"first call of the compiled model (trace + compile or cache load): {compile_seconds:.1f} s")
print("same outputs as eager:", same)


# %%
# Later calls: time per forward pass
# ----------------------------------
# The two versions are timed by ``ptnotes_dev.bench.Timer``, the harness behind the
# :doc:`/bench` page: five untimed rounds, then 60 rounds in which eager and compiled
# alternate (A B A B ...), so that a change of load on the machine falls on both. A sample
# is the mean time of 5 calls in a row.
def forward(function: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[], None]:
    """One forward pass of ``function`` on ``x``, without recording a graph."""

    def run() -> None:
        with torch.no_grad():
            function(x)

    return run


per_call = Timer(repeats=60, warmup=5, inner=5).run(
    [Contender("eager", forward(model)), Contender("torch.compile (inductor)", forward(compiled))]
)
medians = {name: statistics.median(times) for name, times in per_call.items()}
for name, times in per_call.items():
    print(
        f"{name:<25} median {medians[name] * 1e6:7.1f} us per forward pass "
        f"(fastest {min(times) * 1e6:.1f} us)"
    )
saving = medians["eager"] - medians["torch.compile (inductor)"]
if saving > 0:
    print(
        f"compiled saves {saving * 1e6:.1f} us per call: it pays off after "
        f"{compile_seconds / saving:,.0f} calls"
    )
else:
    print("compiled is not faster per call here: the compilation never pays off")

# %%
# The picture
# -----------
# One box per version: the samples after warm-up, in microseconds per call (outliers, beyond
# 1.5 times the box's height from it, are not drawn). The title carries the one-off cost.
fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
ax.boxplot(
    [[t * 1e6 for t in times] for times in per_call.values()],
    tick_labels=list(per_call),
    showfliers=False,
)
ax.set_ylim(bottom=0)
ax.set_ylabel("time per forward pass (us), batch of 64")
ax.set_xlabel("how the model runs (one thread, CPU)")
ax.set_title(f"Small MLP: per-call time after warm-up; first call {compile_seconds:.1f} s")
plt.show()
torch.set_num_threads(threads)

# %%
# Take-away
# ---------
# For a model this small, a forward pass is the three ``Linear`` layers and two ReLUs defined
# above; eager mode already sends the matrix multiplications to optimised kernels. The medians
# printed above say which side wins on the machine that built this page; either way the
# difference is microseconds per call against the first call's cost printed above (seconds with
# a cold cache). Measure both numbers before relying on ``torch.compile``.
