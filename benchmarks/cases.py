"""The benchmarks of ptnotes: each function measures one comparison and returns its record.

Every function takes ``quick`` (tiny sizes and two repeats, for the tests) and ``log`` (a
progress callback) and returns a record made by :mod:`ptnotes_dev.bench` (whose
:data:`~ptnotes_dev.bench.GOALS` holds the goals), measured with :mod:`ptnotes_dev.measure`.
The registry :data:`CASES` lists them in the order ``benchmarks/run.py`` runs them.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from ptnotes_dev.bench import Contender, result_record, skipped_record
from ptnotes_dev.measure import (
    MEMORY_METHOD,
    allocations,
    measure_alternating,
    timing,
    timing_fields,
)
from torch import nn

Log = Callable[[str], None]
Record = dict[str, Any]


def torch_environment() -> dict[str, Any]:
    """What torch contributes to the environment record."""
    cuda = torch.cuda.is_available()
    return {
        "torch": torch.__version__,
        "torch_num_threads": torch.get_num_threads(),
        "torch_num_interop_threads": torch.get_num_interop_threads(),
        "torch_cuda_build": torch.version.cuda,
        "cuda_available": cuda,
        "cuda_device": torch.cuda.get_device_name(0) if cuda else None,
        "mkldnn": torch.backends.mkldnn.is_available(),
        "omp_num_threads_env": os.environ.get("OMP_NUM_THREADS"),
    }


# -- a. Linear -------------------------------------------------------------------------------


def bench_linear(quick: bool, log: Log) -> Record:
    from ptnotes.layers import Linear

    batch, fan_in, fan_out = (8, 16, 16) if quick else (256, 512, 512)
    torch.manual_seed(0)
    ours = Linear(fan_in, fan_out)
    torch.manual_seed(0)
    builtin = nn.Linear(fan_in, fan_out)
    x = torch.randn(batch, fan_in)
    grad = torch.randn(batch, fan_out)

    def step(layer: nn.Module) -> Callable[[], None]:
        def run() -> None:
            layer.zero_grad(set_to_none=True)
            layer(x).backward(grad)

        return run

    timer = timing(quick, repeats=30, warmup=5, inner=10)
    samples = timer.run(
        [
            Contender("ptnotes.layers.Linear", step(ours)),
            Contender("torch.nn.Linear", step(builtin)),
        ]
    )
    return result_record(
        "linear",
        "ptnotes Linear vs torch.nn.Linear, forward and backward",
        metric="time",
        samples=samples,
        ratio=("ptnotes.layers.Linear", "torch.nn.Linear"),
        params={"batch": batch, "in_features": fan_in, "out_features": fan_out, "dtype": "float32"},
        method="Seconds per call of zero_grad + forward + backward, alternating the two layers.",
        timing=timing_fields(timer),
    )


# -- b. batched loading ----------------------------------------------------------------------


def bench_loader(quick: bool, log: Log) -> Record:
    from torch.utils.data import DataLoader, TensorDataset

    from ptnotes.data import TensorBatchDataset, batched_loader

    samples_n, features, batch = (256, 4, 32) if quick else (50_000, 32, 128)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(samples_n, features, generator=generator)
    y = torch.randint(0, 10, (samples_n,), generator=generator)
    default = DataLoader(
        TensorDataset(x, y),
        batch_size=batch,
        shuffle=True,
        generator=torch.Generator().manual_seed(0),
    )
    ours = batched_loader(TensorBatchDataset(x, y), batch_size=batch, shuffle=True, seed=0)
    epochs = {"ours": 0}

    def epoch(loader: Any) -> Callable[[], None]:
        def run() -> None:
            seen = 0
            for xb, _yb in loader:
                seen += xb.shape[0]
            if seen != samples_n:
                raise RuntimeError(f"an epoch yielded {seen} samples, expected {samples_n}")

        return run

    def next_epoch() -> None:
        epochs["ours"] += 1
        ours.sampler.set_epoch(epochs["ours"])  # type: ignore[attr-defined]

    timer = timing(quick, repeats=9, warmup=1, inner=1)
    times = timer.run(
        [
            Contender("batched_loader", epoch(ours), prepare=next_epoch),
            Contender("DataLoader(batch_size=B)", epoch(default)),
        ]
    )
    throughput = {name: [samples_n / t for t in values] for name, values in times.items()}
    return result_record(
        "loader",
        "Batched loading vs the per-sample DataLoader path, one shuffled epoch",
        metric="throughput",
        samples=throughput,
        ratio=("batched_loader", "DataLoader(batch_size=B)"),
        params={
            "samples": samples_n,
            "features": features,
            "batch_size": batch,
            "shuffle": True,
            "num_workers": 0,
        },
        method=(
            "Samples per second over one full shuffled epoch of in-memory tensors (float32 "
            "features, int64 labels), alternating ptnotes.data.batched_loader over a "
            "TensorBatchDataset with DataLoader(TensorDataset, batch_size=B, shuffle=True)."
        ),
        timing=timing_fields(timer),
    )


# -- c. custom autograd sigmoid --------------------------------------------------------------


def bench_sigmoid(quick: bool, log: Log) -> Record:
    from ptnotes.functions import sigmoid

    numel = 1_000 if quick else 1_000_000
    torch.manual_seed(0)
    x = torch.randn(numel, requires_grad=True)
    grad = torch.randn(numel)

    def step(function: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[], None]:
        def run() -> None:
            x.grad = None
            function(x).backward(grad)

        return run

    timer = timing(quick, repeats=30, warmup=5, inner=5)
    samples = timer.run(
        [
            Contender("ptnotes.functions.sigmoid", step(sigmoid)),
            Contender("torch.sigmoid", step(torch.sigmoid)),
        ]
    )
    return result_record(
        "sigmoid",
        "Custom autograd sigmoid vs torch.sigmoid, forward and backward",
        metric="time",
        samples=samples,
        ratio=("ptnotes.functions.sigmoid", "torch.sigmoid"),
        params={"numel": numel, "dtype": "float32"},
        method="Seconds per call of forward + backward, alternating the two functions.",
        timing=timing_fields(timer),
    )


# -- d. in-place ReLU memory -----------------------------------------------------------------


def relu_stack(depth: int, width: int, inplace: bool) -> nn.Sequential:
    """``depth`` blocks of Linear(width, width) followed by ReLU (in place or not)."""
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU(inplace=inplace)]
    return nn.Sequential(*layers)


def bench_relu_memory(quick: bool, log: Log) -> list[Record]:
    """Two records: the peak of forward + backward, and the peak of the forward alone."""
    depth, width, batch = (2, 16, 4) if quick else (8, 512, 1024)
    x = torch.randn(batch, width)
    models = {
        "ReLU(inplace=True)": relu_stack(depth, width, inplace=True),
        "ReLU()": relu_stack(depth, width, inplace=False),
    }

    def forward_backward(model: nn.Module) -> Callable[[], int]:
        def run() -> int:
            model.zero_grad(set_to_none=True)
            return allocations(lambda: model(x).sum().backward()).peak

        return run

    def forward(model: nn.Module) -> Callable[[], int]:
        return lambda: allocations(lambda: model(x)).peak

    repeats = 2 if quick else 3
    params = {"depth": depth, "width": width, "batch": batch, "dtype": "float32"}
    activation = {"label": "One activation", "value": batch * width * 4, "unit": "bytes"}
    records = []
    for id_, title, measure, region in (
        (
            "relu-inplace-memory",
            "Peak memory of in-place vs out-of-place ReLU, forward and backward",
            forward_backward,
            " The region is one forward + backward of the stack, gradients set to None before"
            " (so the parameter gradients allocated by backward are counted, alike on both"
            " sides).",
        ),
        (
            "relu-inplace-memory-forward",
            "Peak memory of in-place vs out-of-place ReLU, forward only",
            forward,
            " The region is one forward of the stack (parameters require grad, so autograd"
            " saves what the backward would need).",
        ),
    ):
        samples = measure_alternating({n: measure(m) for n, m in models.items()}, repeats, 1)
        inplace = statistics.median(samples["ReLU(inplace=True)"])
        outofplace = statistics.median(samples["ReLU()"])
        saved = 100.0 * (1.0 - inplace / outofplace) if outofplace else 0.0
        records.append(
            result_record(
                id_,
                title,
                metric="memory",
                samples=samples,
                ratio=("ReLU(inplace=True)", "ReLU()"),
                params=params,
                method=MEMORY_METHOD + region,
                extra=[
                    {"label": "Memory saved by the in-place ReLU", "value": saved, "unit": "%"},
                    activation,
                ],
                timing={"repeats": repeats, "warmup": 1, "inner": 1},
            )
        )
    return records


# -- e. grad modes ---------------------------------------------------------------------------


def mlp(depth: int, width: int) -> nn.Sequential:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU()]
    return nn.Sequential(*layers)


GRAD_MODES: dict[str, Callable[[], contextlib.AbstractContextManager[Any]]] = {
    "torch.enable_grad()": torch.enable_grad,
    "torch.no_grad()": torch.no_grad,
    "torch.inference_mode()": torch.inference_mode,
}


def bench_grad_modes(quick: bool, log: Log) -> list[Record]:
    depth, width, batch = (2, 16, 4) if quick else (6, 512, 256)
    model = mlp(depth, width)
    x = torch.randn(batch, width)
    params = {"depth": depth, "width": width, "batch": batch, "dtype": "float32"}

    def forward(mode: Callable[[], contextlib.AbstractContextManager[Any]]) -> Callable[[], Any]:
        def run() -> Any:
            with mode():
                return model(x)

        return run

    timer = timing(quick, repeats=25, warmup=3, inner=5)
    times = timer.run([Contender(name, forward(mode)) for name, mode in GRAD_MODES.items()])
    timed = result_record(
        "grad-modes-time",
        "Forward time with grad enabled, under no_grad and under inference_mode",
        metric="time",
        samples=times,
        ratio=("torch.no_grad()", "torch.enable_grad()"),
        params=params,
        method=(
            "Seconds per forward of an MLP (Linear + GELU blocks) whose parameters require "
            "grad, alternating the three modes; the output is dropped after each call."
        ),
        timing=timing_fields(timer),
    )

    def kept(mode: Callable[[], contextlib.AbstractContextManager[Any]]) -> Callable[[], int]:
        return lambda: allocations(forward(mode)).end

    repeats = 2 if quick else 3
    memory = measure_alternating(
        {name: kept(mode) for name, mode in GRAD_MODES.items()}, repeats, warmup=1
    )
    output = batch * width * 4
    held = result_record(
        "grad-modes-memory",
        "Memory still held after a forward with grad enabled, under no_grad and under "
        "inference_mode",
        metric="memory",
        samples=memory,
        ratio=("torch.no_grad()", "torch.enable_grad()"),
        params=params,
        method=MEMORY_METHOD
        + " The region is one forward; the output is still referenced when it ends, so the "
        "count is the output plus whatever autograd saved for a backward.",
        extra=[{"label": "The output alone", "value": output, "unit": "bytes"}],
        timing={"repeats": repeats, "warmup": 1, "inner": 1},
    )
    return [timed, held]


# -- f. torch.compile (run in a child process, see run.py) -----------------------------------


def compile_model(width: int) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(width, width),
        nn.LayerNorm(width),
        nn.GELU(),
        nn.Linear(width, width),
        nn.LayerNorm(width),
        nn.GELU(),
        nn.Linear(width, 1),
    )


def bench_compile(quick: bool, log: Log, backend: str = "inductor") -> Record:
    """Compile once (timed: the first call), then alternate eager and compiled steps."""
    width, batch = (16, 8) if quick else (256, 64)
    model = compile_model(width)
    compiled = torch.compile(model, backend=backend)
    x = torch.randn(batch, width)
    target = torch.randn(batch, 1)

    def step(module: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[], None]:
        def run() -> None:
            model.zero_grad(set_to_none=True)
            F.mse_loss(module(x), target).backward()

        return run

    log(f"compile: first call with backend={backend} (compiles forward and backward)")
    start = time.perf_counter()
    step(compiled)()
    compile_s = time.perf_counter() - start
    log(f"compile: first call took {compile_s:.1f} s")
    timer = timing(quick, repeats=20, warmup=5, inner=5)
    samples = timer.run([Contender("compiled", step(compiled)), Contender("eager", step(model))])
    log(f"compile: {timer.repeats} alternating rounds of {timer.inner} step(s) done")
    return result_record(
        "compile",
        "torch.compile vs eager, one training step after warm-up",
        metric="time",
        samples=samples,
        ratio=("compiled", "eager"),
        params={"backend": backend, "width": width, "batch": batch, "dtype": "float32"},
        method=(
            "Seconds per training step (zero_grad, forward, MSE loss, backward) of a small "
            "Linear + LayerNorm + GELU network, alternating the compiled module and the eager "
            "one (same parameters) after warm-up, in a fresh process with an empty "
            "TorchInductor cache. The compile time is the wall time of the first compiled "
            "call, compilation of forward and backward included."
        ),
        extra=[{"label": "Compile time (first call)", "value": compile_s, "unit": "s"}],
        timing=timing_fields(timer),
    )


# -- g. cudnn.benchmark ----------------------------------------------------------------------

CUDNN_TITLE = "cudnn.benchmark on vs off, convolution forward and backward"


def bench_cudnn(quick: bool, log: Log) -> Record:
    if not torch.cuda.is_available():
        record = skipped_record(
            "cudnn-benchmark",
            CUDNN_TITLE,
            "No CUDA device: cudnn.benchmark only affects cuDNN convolutions on a GPU.",
        )
        record["details"] = (
            f"torch {torch.__version__}, CUDA build {torch.version.cuda}, "
            "torch.cuda.is_available() is False"
        )
        return record
    device = torch.device("cuda")
    batch, channels, size = (2, 8, 16) if quick else (32, 64, 56)
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(channels, channels, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(channels, channels, 3, padding=1),
    ).to(device)
    x = torch.randn(batch, channels, size, size, device=device)
    previous = torch.backends.cudnn.benchmark

    def setting(flag: bool) -> Callable[[], None]:
        def run() -> None:
            torch.backends.cudnn.benchmark = flag

        return run

    def step() -> None:
        net.zero_grad(set_to_none=True)
        net(x).sum().backward()
        torch.cuda.synchronize()

    timer = timing(quick, repeats=30, warmup=5, inner=10)
    try:
        samples = timer.run(
            [
                Contender("cudnn.benchmark=True", step, prepare=setting(True)),
                Contender("cudnn.benchmark=False", step, prepare=setting(False)),
            ]
        )
    finally:
        torch.backends.cudnn.benchmark = previous
    return result_record(
        "cudnn-benchmark",
        CUDNN_TITLE,
        metric="time",
        samples=samples,
        ratio=("cudnn.benchmark=True", "cudnn.benchmark=False"),
        params={
            "batch": batch,
            "channels": channels,
            "size": size,
            "device": torch.cuda.get_device_name(0),
        },
        method=(
            "Seconds per forward + backward of two 3x3 convolutions on the GPU "
            "(synchronised), alternating the flag; the warm-up lets benchmark mode pick "
            "its algorithms first."
        ),
        timing=timing_fields(timer),
    )


# -- h. DDP ----------------------------------------------------------------------------------


def ddp_mlp(features: int, hidden: int) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, 10),
    )  # fmt: skip


def ddp_worker(rank: int, world_size: int, config: dict[str, Any]) -> dict[str, Any]:
    """One rank of the DDP benchmark (runs in a process started by ``run_parallel``).

    Each round: all ranks take DDP steps on their half of the batch (timed on rank 0,
    whose time includes waiting for the gradient all-reduce), then rank 0 alone takes
    single-process steps on the whole batch with the parent's thread count while the
    other ranks wait at a barrier. So both contenders alternate in one process.
    """
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(config["threads_per_rank"])
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(config["batch"], config["features"], generator=generator)
    y = torch.randint(0, 10, (config["batch"],), generator=generator)
    xs, ys = x[rank::world_size], y[rank::world_size]
    ddp = DistributedDataParallel(ddp_mlp(config["features"], config["hidden"]))
    ddp_opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    single = ddp_mlp(config["features"], config["hidden"])
    single_opt = torch.optim.SGD(single.parameters(), lr=0.01)

    def ddp_step() -> None:
        ddp_opt.zero_grad(set_to_none=True)
        F.cross_entropy(ddp(xs), ys).backward()
        ddp_opt.step()

    def single_step() -> None:
        single_opt.zero_grad(set_to_none=True)
        F.cross_entropy(single(x), y).backward()
        single_opt.step()

    inner = config["inner"]
    samples: dict[str, list[float]] = {"ddp": [], "single": []}
    waiting = {"cpu": 0.0, "wall": 0.0}
    for round_ in range(-config["warmup"], config["repeats"]):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(inner):
            ddp_step()
        elapsed = time.perf_counter() - start
        if round_ >= 0:
            samples["ddp"].append(elapsed / inner)
        dist.barrier()
        if rank == 0:
            torch.set_num_threads(config["single_threads"])
            start = time.perf_counter()
            for _ in range(inner):
                single_step()
            elapsed = time.perf_counter() - start
            torch.set_num_threads(config["threads_per_rank"])
            if round_ >= 0:
                samples["single"].append(elapsed / inner)
            dist.barrier()
        else:  # how busy is a rank that waits at the barrier? (it should not steal a core)
            cpu, wall = time.process_time(), time.perf_counter()
            dist.barrier()
            waiting["cpu"] += time.process_time() - cpu
            waiting["wall"] += time.perf_counter() - wall
    return {"samples": samples, "waiting": waiting}


def launch_ddp(world_size: int, config: dict[str, Any]) -> list[dict[str, Any]]:
    """Start the DDP workers; the only line that depends on ptnotes.distributed's API."""
    from ptnotes.distributed import run_parallel

    return run_parallel(ddp_worker, world_size, config, backend="gloo", timeout=600.0)


def bench_ddp(quick: bool, log: Log) -> Record:
    import torch.distributed as dist

    title = "DDP on 2 processes vs 1 process, one training step on the same total batch"
    if not dist.is_available() or not dist.is_backend_available("gloo"):
        return skipped_record("ddp", title, "This build of torch has no gloo backend.")
    world_size = 2
    single_threads = torch.get_num_threads()
    threads_per_rank = max(1, single_threads // world_size)
    features, hidden, batch = (8, 16, 16) if quick else (256, 1024, 512)
    repeats, warmup, inner = (2, 1, 1) if quick else (15, 3, 5)
    config = {
        "features": features,
        "hidden": hidden,
        "batch": batch,
        "repeats": repeats,
        "warmup": warmup,
        "inner": inner,
        "threads_per_rank": threads_per_rank,
        "single_threads": single_threads,
    }
    log(f"ddp: starting {world_size} gloo processes ({threads_per_rank} thread(s) each)")
    start = time.perf_counter()
    results = launch_ddp(world_size, config)
    log(f"ddp: workers done in {time.perf_counter() - start:.1f} s")
    rank0 = results[0]["samples"]
    waiting = results[1]["waiting"]
    busy = waiting["cpu"] / waiting["wall"] if waiting["wall"] > 0 else 0.0
    single_name = f"single(threads={single_threads})"
    ddp_name = f"DDP(world_size={world_size}, threads={threads_per_rank})"
    samples = {ddp_name: rank0["ddp"], single_name: rank0["single"]}
    return result_record(
        "ddp",
        title,
        metric="time",
        samples=samples,
        ratio=(ddp_name, single_name),
        params={
            "world_size": world_size,
            "backend": "gloo",
            "total_batch": batch,
            "features": features,
            "hidden": hidden,
            "threads_per_rank": threads_per_rank,
            "single_threads": single_threads,
        },
        method=(
            "Seconds per SGD step (zero_grad, forward, cross-entropy, backward, step) of an "
            "MLP. Two processes started by ptnotes.distributed.run_parallel each take half of "
            "the batch under DistributedDataParallel (timed on rank 0, all-reduce included); "
            "between DDP rounds rank 0 alone takes steps on the whole batch as a single "
            "process, with the parent's thread count, while rank 1 waits at a barrier (its "
            "CPU use while waiting is reported)."
        ),
        extra=[
            {
                "label": "CPU use of the waiting rank during single-process steps",
                "value": 100.0 * busy,
                "unit": "%",
            }
        ],
        timing={"repeats": repeats, "warmup": warmup, "inner": inner},
    )


# -- registry --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A benchmark of the suite: ``ids`` are the records it produces."""

    name: str
    run: Callable[[bool, Log], Record | list[Record]]
    ids: tuple[str, ...]
    isolated: bool = False


CASES: tuple[Case, ...] = (
    Case("linear", bench_linear, ("linear",)),
    Case("loader", bench_loader, ("loader",)),
    Case("sigmoid", bench_sigmoid, ("sigmoid",)),
    Case(
        "relu-inplace-memory",
        bench_relu_memory,
        ("relu-inplace-memory", "relu-inplace-memory-forward"),
    ),
    Case("grad-modes", bench_grad_modes, ("grad-modes-time", "grad-modes-memory")),
    Case("compile", bench_compile, ("compile",), isolated=True),
    Case("cudnn-benchmark", bench_cudnn, ("cudnn-benchmark",)),
    Case("ddp", bench_ddp, ("ddp",)),
)
