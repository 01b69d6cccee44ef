"""ptnotes.reproducibility: the global seeds, a seeded loader generator, workers' own generators.

The worker tests start real DataLoader worker processes (fork, the Linux default): what is
tested is what each process draws, so nothing is stubbed.
"""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    RandomSampler,
    StackDataset,
    Subset,
    get_worker_info,
)

from ptnotes.reproducibility import (
    MAX_GLOBAL_SEED,
    seed_everything,
    seed_worker,
    seeded_generator,
)

#: Seconds a DataLoader waits for a worker before failing, so a broken test cannot hang.
WORKER_TIMEOUT = 120.0


def global_states() -> tuple[Any, ...]:
    """Python's, NumPy's and torch's global generator states, comparable with ``==``."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    return (
        random.getstate(),
        (kind, keys.tolist(), pos, has_gauss, gauss),
        torch.get_rng_state().tolist(),
    )


def draws() -> tuple[float, float, float]:
    """One number from each global generator."""
    return random.random(), float(np.random.rand()), torch.rand(1).item()


class OwnGenerators(Dataset[dict[str, Any]]):
    """A dataset that creates its own generators in the main process, seeded with 0."""

    def __init__(self, n: int = 4) -> None:
        self.n = n
        self.rng = np.random.default_rng(0)
        self.python = random.Random(0)
        self.legacy = np.random.RandomState(0)
        self.torch_gen = torch.Generator().manual_seed(0)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> dict[str, Any]:
        info = get_worker_info()
        return {
            "worker": None if info is None else info.id,
            "rng": float(self.rng.random()),
            "python": self.python.random(),
            "legacy": float(self.legacy.rand()),
            "torch_gen": torch.rand(1, generator=self.torch_gen).item(),
            "reseeded": None if info is None else getattr(info.dataset, "reseeded", None),
        }


def record_reseeded(worker_id: int) -> None:
    """A worker_init_fn that keeps seed_worker's answer on the worker's (outer) dataset."""
    info = get_worker_info()
    assert info is not None
    info.dataset.reseeded = seed_worker(worker_id)  # type: ignore[union-attr]


def load(dataset: Dataset[Any], **options: Any) -> list[dict[str, Any]]:
    loader = DataLoader(dataset, batch_size=None, num_workers=2, timeout=WORKER_TIMEOUT, **options)
    return list(loader)


def values(rows: list[dict[str, Any]], worker: int) -> list[tuple[float, ...]]:
    kinds = ("rng", "python", "legacy", "torch_gen")
    return [tuple(r[k] for k in kinds) for r in rows if r["worker"] == worker]


# -- seed_everything ----------------------------------------------------------------------


def test_seed_everything_replays_python_numpy_and_torch() -> None:
    seed_everything(11)
    first = draws()
    seed_everything(11)
    assert draws() == first


def test_seed_everything_is_the_three_seed_calls() -> None:
    seed_everything(5)
    ours = global_states()
    random.seed(5)
    np.random.seed(5)
    torch.manual_seed(5)
    assert ours == global_states()


def test_seed_everything_takes_numpys_largest_seed() -> None:
    seed_everything(MAX_GLOBAL_SEED)
    assert torch.initial_seed() == MAX_GLOBAL_SEED == 2**32 - 1


@pytest.mark.parametrize("seed", [np.int64(5), np.uint32(5)])
def test_seed_everything_takes_a_numpy_integer_as_its_int(seed: Any) -> None:
    seed_everything(seed)
    ours = global_states()
    seed_everything(5)
    assert ours == global_states()


@pytest.mark.parametrize("seed", [-1, MAX_GLOBAL_SEED + 1, 1.0, True, "0", None])
def test_a_refused_seed_everything_seeds_nothing(seed: Any) -> None:
    torch.manual_seed(3)
    before = global_states()
    with pytest.raises((TypeError, ValueError), match=r"^seed_everything\(\) expects seed"):
        seed_everything(seed)
    assert global_states() == before


def test_seed_everything_leaves_generator_objects_alone() -> None:
    own = torch.Generator().manual_seed(1)
    state = own.get_state()
    seed_everything(2)
    assert torch.equal(own.get_state(), state)


@pytest.mark.parametrize("make", [lambda: np.random.default_rng(1), lambda: random.Random(1)])
def test_seed_everything_leaves_numpy_and_python_generator_objects_alone(make: Any) -> None:
    own = make()
    expected = make().random()
    seed_everything(2)
    assert own.random() == expected


# -- seeded_generator ---------------------------------------------------------------------


def test_seeded_generator_is_a_cpu_generator_with_that_initial_seed() -> None:
    generator = seeded_generator(123)
    assert (generator.device, generator.initial_seed()) == (torch.device("cpu"), 123)


def test_seeded_generators_with_one_seed_draw_the_same_numbers() -> None:
    a = torch.rand(5, generator=seeded_generator(9))
    assert torch.equal(a, torch.rand(5, generator=seeded_generator(9)))


def test_seeded_generators_2_to_the_32_apart_draw_the_same_numbers() -> None:
    far = seeded_generator(9 + 2**32)
    assert far.initial_seed() != 9
    assert torch.equal(torch.rand(5, generator=seeded_generator(9)), torch.rand(5, generator=far))


def test_seeded_generator_makes_the_shuffle_order_repeat_whatever_the_global_draws() -> None:
    def order() -> list[int]:
        torch.rand(3)  # a global draw that a loader without generator= would feel
        loader = DataLoader(range(10), batch_size=None, shuffle=True, generator=seeded_generator(0))
        return [int(i) for i in loader]

    assert order() == order()
    assert sorted(order()) == list(range(10))


def test_seeded_generator_does_not_reach_a_sampler_passed_in() -> None:
    def order(extra_draw: bool) -> list[int]:
        torch.manual_seed(0)
        if extra_draw:
            torch.rand(1)
        sampler = RandomSampler(range(10))
        loader = DataLoader(
            range(10), batch_size=None, sampler=sampler, generator=seeded_generator(0)
        )
        return [int(i) for i in loader]

    assert order(False) != order(True)


# -- seed_worker: in real workers --------------------------------------------------------


def test_without_seed_worker_every_worker_draws_the_same_numbers() -> None:
    rows = load(OwnGenerators())
    assert values(rows, 0) == values(rows, 1)


def test_seed_worker_gives_each_worker_other_numbers() -> None:
    rows = load(OwnGenerators(), worker_init_fn=seed_worker)
    zero, one = values(rows, 0), values(rows, 1)
    assert all(a != b for a, b in zip(zero[0], one[0], strict=True))


def test_seed_worker_with_a_seeded_loader_repeats_from_run_to_run() -> None:
    def run() -> list[dict[str, Any]]:
        return load(OwnGenerators(), worker_init_fn=seed_worker, generator=seeded_generator(4))

    assert run() == run()


def test_seed_worker_gives_each_pass_over_the_loader_new_numbers() -> None:
    loader = DataLoader(
        OwnGenerators(),
        batch_size=None,
        num_workers=2,
        worker_init_fn=seed_worker,
        generator=seeded_generator(4),
        timeout=WORKER_TIMEOUT,
    )
    first, second = list(loader), list(loader)
    assert values(first, 0) != values(second, 0)


def test_without_seed_worker_every_pass_repeats_the_dataset_numbers() -> None:
    loader = DataLoader(OwnGenerators(), batch_size=None, num_workers=2, timeout=WORKER_TIMEOUT)
    assert list(loader) == list(loader)


def test_seed_worker_with_persistent_workers_repeats_from_run_to_run() -> None:
    def run() -> list[list[dict[str, Any]]]:
        loader = DataLoader(
            OwnGenerators(),
            batch_size=None,
            num_workers=2,
            worker_init_fn=seed_worker,
            generator=seeded_generator(4),
            persistent_workers=True,
            timeout=WORKER_TIMEOUT,
        )
        return [list(loader), list(loader)]

    first, second = run(), run()
    assert first == second
    assert values(first[0], 0) != values(first[1], 0)


class NumPyGenerator(Dataset[tuple[int, float]]):
    """A dataset holding only a NumPy generator (a spawned worker receives it pickled)."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> tuple[int, float]:
        info = get_worker_info()
        assert info is not None
        return info.id, float(self.rng.random())


def test_seed_worker_reseeds_in_spawned_workers() -> None:
    rows = load(NumPyGenerator(), worker_init_fn=seed_worker, multiprocessing_context="spawn")
    assert [w for w, _ in rows] == [0, 1]
    copied = float(np.random.default_rng(0).random())  # what a worker draws without a reseed
    assert rows[0][1] != rows[1][1]
    assert copied not in (rows[0][1], rows[1][1])


def test_seed_worker_returns_the_paths_of_the_generators_it_reseeded() -> None:
    rows = load(OwnGenerators(), worker_init_fn=record_reseeded)
    assert rows[0]["reseeded"] == ["rng", "python", "legacy", "torch_gen"]


def test_seed_worker_follows_the_datasets_a_dataset_holds() -> None:
    parts = ConcatDataset([Subset(OwnGenerators(2), [0, 1]), OwnGenerators(2)])
    rows = load(parts, worker_init_fn=record_reseeded)
    assert rows[0]["reseeded"] == [
        "datasets[0].dataset.rng",
        "datasets[0].dataset.python",
        "datasets[0].dataset.legacy",
        "datasets[0].dataset.torch_gen",
        "datasets[1].rng",
        "datasets[1].python",
        "datasets[1].legacy",
        "datasets[1].torch_gen",
    ]


def test_seed_worker_gives_two_copies_of_one_generator_other_seeds() -> None:
    twins = ConcatDataset([OwnGenerators(1), OwnGenerators(1)])
    rows = DataLoader(
        twins, batch_size=None, num_workers=1, worker_init_fn=seed_worker, timeout=WORKER_TIMEOUT
    )
    first, second = list(rows)
    assert first["rng"] != second["rng"]


class Aliased(OwnGenerators):
    """One generator under two names, and a generator that cannot be seeded."""

    def __init__(self) -> None:
        super().__init__()
        self.same_rng = self.rng
        self.system = random.SystemRandom()


def test_seed_worker_reseeds_a_shared_generator_once_and_skips_system_random() -> None:
    rows = load(Aliased(), worker_init_fn=record_reseeded)
    assert rows[0]["reseeded"] == ["rng", "python", "legacy", "torch_gen"]


class Jitter:
    """A transform that holds its own generator: not a dataset, so seed_worker skips it."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)


class HiddenGenerators(OwnGenerators):
    """Generators in a dict and inside a transform: neither is an attribute seed_worker follows."""

    def __init__(self) -> None:
        super().__init__()
        self.by_name = {"rng": np.random.default_rng(0)}
        self.transform = Jitter()


def test_seed_worker_skips_generators_in_a_dict_or_inside_a_transform() -> None:
    rows = load(HiddenGenerators(), worker_init_fn=record_reseeded)
    assert rows[0]["reseeded"] == ["rng", "python", "legacy", "torch_gen"]


def test_seed_worker_skips_the_datasets_of_a_keyword_stack_dataset() -> None:
    rows = load(StackDataset(a=OwnGenerators()), worker_init_fn=seed_worker)
    assert [r["a"]["rng"] for r in rows[:2]] == [OwnGenerators()[0]["rng"]] * 2


def refuse_then_read(worker_id: int) -> None:
    """A worker_init_fn whose seed_worker call is refused (a wrong id), then ignored."""
    with pytest.raises(ValueError, match="this worker's id"):
        seed_worker(worker_id + 1)


def test_a_refused_seed_worker_leaves_the_generators_as_they_were() -> None:
    rows = load(OwnGenerators(), worker_init_fn=refuse_then_read)
    main = OwnGenerators()[0]
    unseeded = (main["rng"], main["python"], main["legacy"], main["torch_gen"])
    assert values(rows, 0)[0] == values(rows, 1)[0] == unseeded


def test_seed_worker_with_another_workers_id_is_refused_in_the_worker() -> None:
    def wrong_id(worker_id: int) -> None:
        seed_worker(worker_id + 1)

    with pytest.raises(ValueError, match=r"expects worker_id to be this worker's id, 0, got int 1"):
        load(OwnGenerators(), worker_init_fn=wrong_id)


def test_seed_worker_in_the_main_process_is_refused() -> None:
    with pytest.raises(ValueError, match=r"got a call in no worker process$"):
        seed_worker(0)


# -- the module itself --------------------------------------------------------------------


def test_importing_the_module_changes_no_global_generator() -> None:
    script = (
        "import random, numpy, torch\n"
        "before = (random.getstate(), numpy.random.get_state()[1].tolist(),"
        " torch.get_rng_state().tolist(), torch.initial_seed())\n"
        "import ptnotes.reproducibility\n"
        "after = (random.getstate(), numpy.random.get_state()[1].tolist(),"
        " torch.get_rng_state().tolist(), torch.initial_seed())\n"
        "print(before == after)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "True"
