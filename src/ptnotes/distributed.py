"""Run a function on N local processes that share a ``torch.distributed`` process group."""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

import torch.distributed as dist
import torch.multiprocessing as mp

from ptnotes.validation import argument_error, check_callable, check_int, check_number, check_type

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

__all__ = ["WorkerError", "find_free_port", "run_parallel"]

#: Seconds the workers get, all together, to exit by themselves (after their results
#: arrived, or after SIGTERM) before they and their process groups are killed.
_GRACE_S = 2.0

#: The longest ``timeout`` accepted: what :func:`multiprocessing.connection.wait` (``poll``,
#: in milliseconds in a C ``int``) can wait for.
_MAX_TIMEOUT_S = (2**31 - 1) // 1000

#: The only interface the store and the backends use.
_LOOPBACK = "127.0.0.1"


class WorkerError(RuntimeError):
    """A worker process of :func:`run_parallel` failed.

    It raised an exception (the message holds its formatted traceback), it exited
    without sending a result (the message holds its exit code), or it sent a result that
    the caller could not unpickle (the message holds the caller's traceback).

    Attributes:
        rank: the rank of the worker that failed.
        details: the worker's formatted traceback, what is known about its exit, or the
            traceback of unpickling its result.
    """

    def __init__(self, rank: int, details: str) -> None:
        self.rank = rank
        self.details = details
        super().__init__(f"worker rank {rank} failed:\n{details}")

    def __reduce__(self) -> tuple[type[WorkerError], tuple[int, str]]:
        return type(self), (self.rank, self.details)


def find_free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port on ``host`` that was free when this function ran.

    The operating system picks it: binding to port 0 assigns an unused port, which
    is read back and released. Another process could take it between this call and
    its use. :func:`run_parallel` does not use this function for that reason: it keeps
    its socket bound and hands it to the rendezvous store, so the port it reports
    cannot be taken in between.

    Raises:
        TypeError: if ``host`` is not a str.
        ValueError: if no socket can be bound to ``host``, such as an address of another
            machine or an IPv6 address (even ``"::1"``).

    Examples:
        >>> from ptnotes.distributed import find_free_port
        >>> 0 < find_free_port() < 65536
        True
    """
    check_type(find_free_port, "host", host, str)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, 0))
        except OSError as error:  # unknown name, or an address of another machine
            expected = "a name or IPv4 address of this machine"
            got = f"{host!r} ({error.strerror or error})"
            raise argument_error(find_free_port, "host", host, expected, got=got) from error
        port: int = sock.getsockname()[1]
    return port


def run_parallel(
    fn: Callable[..., Any],
    world_size: int,
    *args: Any,
    backend: str = "gloo",
    timeout: float = 60.0,
) -> list[Any]:
    """Call ``fn(rank, world_size, *args)`` on ``world_size`` processes; return their results.

    Each worker is a new Python process that joins a process group before ``fn`` runs and
    always leaves it after (:func:`torch.distributed.destroy_process_group`), so ``fn`` can
    use collectives such as :func:`torch.distributed.all_reduce` or wrap a model in
    ``DistributedDataParallel``. The group meets at a rendezvous store that the calling
    process serves on ``127.0.0.1`` only (a socket bound to the loopback interface, at a
    port the system picks), and the backends' own
    connections are kept on the loopback interface too (``GLOO_SOCKET_IFNAME`` and
    ``NCCL_SOCKET_IFNAME``): nothing listens on, or talks to, the network. The workers
    see six of the environment variables ``torchrun`` sets, the ones a training script
    reads (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``,
    ``MASTER_ADDR``, ``MASTER_PORT``); it does not set the others (``GROUP_RANK``,
    ``ROLE_RANK``, ``TORCHELASTIC_RUN_ID``, ...), which a worker has only where it
    inherits them (from a caller that ``torchrun`` started, say).

    Workers are started with the *forkserver* start method where the platform has it
    (Linux, macOS), with ``torch`` preloaded in the server: each worker is forked from a
    process that has already imported torch, so once the first call has started the
    server (which imports torch: seconds), starting a worker costs a fraction of a
    second instead of a full ``import torch``. The preload applies only where
    ``run_parallel`` starts the server: with a forkserver that other code of the process
    started first, each worker imports torch itself (unless that server preloaded it),
    on every call. Unlike *spawn*, the workers do not see environment variables the
    caller sets after the first call: the workers get the environment the server
    started with (plus the variables above), though they do start in the caller's
    current directory. Elsewhere *spawn* would be used, but the process-group handling
    below needs :func:`os.setpgid` and :func:`os.killpg`, which only Unix has:
    on Windows ``run_parallel`` does not work.

    Nothing hangs: as soon as one worker fails, the others are terminated and
    :class:`WorkerError` is raised (it does not wait for the survivors to time out in a
    collective); a call that takes longer than ``timeout`` seconds in all is stopped
    with :class:`TimeoutError`. ``timeout`` is also the process group's timeout for
    each collective. Each worker leads its own process group (``setpgid``), and the
    whole group is killed when the worker is done, so processes a worker started do
    not outlive the call (except one that left the group on purpose). Workers are
    stopped all at once (SIGTERM, then SIGKILL after a grace of 2 s shared by all), so a
    hung call returns at most about 2 s after ``timeout``, whatever ``world_size`` is
    (right after it when SIGTERM stops the workers), except on the call that starts the
    forkserver: starting its first worker waits for the server to import torch
    (seconds), which ``timeout`` does not interrupt.

    Args:
        fn: a function importable by name (defined at the top level of a module, not a
            lambda, a nested function, nor a function typed at the interactive prompt
            or in a script read from standard input, ``python -``): a new process
            finds it by importing its module. Its return value must
            be picklable.
        world_size: the number of processes, at least 1.
        *args: extra positional arguments for ``fn``, picklable.
        backend: the :mod:`torch.distributed` backend: ``"gloo"`` (CPU) or, with one
            GPU per process, ``"nccl"``.
        timeout: seconds, greater than 0 and at most 2147483 (about 24 days), for
            the whole call (process start-up included) and for each collective.

    Returns:
        The return values of ``fn``, in rank order.

    Raises:
        TypeError: if ``fn`` is not callable or cannot be pickled by reference, if an
            argument cannot be pickled, if ``world_size`` is not an int, ``timeout`` not
            a number or ``backend`` not a str.
        ValueError: if ``world_size < 1``, ``timeout`` is not finite and positive or is
            above 2147483, or the backend is not available in this build of torch.
        RuntimeError: if this build of torch has no :mod:`torch.distributed`.
        WorkerError: if a worker raised, exited without a result, or sent one that the
            caller could not unpickle; the message holds the rank and a traceback (the
            worker's, or that of the unpickling), or the exit code.
        TimeoutError: if the workers did not all finish within ``timeout`` seconds.

    Examples:
        The function runs in other processes, so it lives in a module, not at the
        prompt. The first call takes a few seconds (the forkserver imports torch),
        so this example is executed by ``tests/test_distributed.py`` rather than as a
        doctest:

        .. code-block:: python

            # my_module.py
            import torch
            import torch.distributed as dist

            def rank_sum(rank: int, world_size: int) -> float:
                value = torch.tensor([float(rank + 1)])
                dist.all_reduce(value)  # sums across the group by default
                return value.item()

            # anywhere (under ``if __name__ == "__main__":`` in a script)
            from ptnotes.distributed import run_parallel
            from my_module import rank_sum

            run_parallel(rank_sum, 2)  # [3.0, 3.0]: 1 + 2, seen by both ranks
    """
    payload = _validate(fn, world_size, args, backend, timeout)
    deadline = time.monotonic() + timeout
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    processes: list[BaseProcess] = []
    readers: dict[Connection, int] = {}
    try:
        listener.bind((_LOOPBACK, 0))
        listener.listen()
        port: int = listener.getsockname()[1]
        store = _serve_store(listener, port, world_size, timeout)
        listener.detach()  # the store owns the socket now, and closes it
        context = _start_context()
        for rank in range(world_size):
            reader, writer = context.Pipe(duplex=False)
            readers[reader] = rank
            process = context.Process(
                target=_worker,
                args=(rank, world_size, port, backend, timeout, payload, writer),
                name=f"ptnotes-rank-{rank}",
            )
            process.start()
            writer.close()  # the worker holds the only writer: its exit means EOF here
            processes.append(process)
        results = _collect(readers, processes, deadline, timeout)
        del store
        return results
    finally:
        _stop(processes)
        for reader in readers:
            reader.close()
        listener.close()


def _validate(
    fn: object, world_size: object, args: tuple[Any, ...], backend: object, timeout: object
) -> bytes:
    """Check the arguments of :func:`run_parallel`; return ``(fn, args)`` pickled."""
    me = run_parallel
    check_int(me, "world_size", world_size, minimum=1)
    seconds = check_number(me, "timeout", timeout, positive=True)
    if seconds > _MAX_TIMEOUT_S:  # a wait on the workers' pipes takes at most 2**31 - 1 ms
        expected = f"a number of seconds <= {_MAX_TIMEOUT_S} (about 24 days)"
        raise argument_error(me, "timeout", timeout, expected)
    backend = check_type(me, "backend", backend, str)
    if not dist.is_available():
        raise RuntimeError(
            "run_parallel() needs torch.distributed, which this build of torch lacks"
        )
    if not dist.is_backend_available(backend):
        raise argument_error(me, "backend", backend, "a backend available in this build of torch")
    check_callable(me, "fn", fn)
    name = getattr(fn, "__qualname__", repr(fn))
    try:
        pickle.dumps(fn)
    except (pickle.PicklingError, AttributeError, TypeError) as error:
        expected = "picklable by reference, i.e. defined at the top level of an importable module"
        got = f"{name!r} ({error})"
        raise argument_error(me, "fn", fn, expected, error=TypeError, got=got) from error
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    if getattr(fn, "__module__", None) == "__main__" and not (
        isinstance(main_file, str) and os.path.isfile(main_file)
    ):
        where = "the interactive prompt" if main_file is None else f"{main_file} (python -)"
        expected = "defined in a module or a script file, which new processes can import"
        got = f"{name!r}, defined at {where}"
        raise argument_error(me, "fn", fn, expected, error=TypeError, got=got)
    try:
        pickle.dumps(args)
    except Exception as error:
        raise argument_error(
            me, "args", args, "picklable", error=TypeError, got=f"{error}"
        ) from error
    return pickle.dumps((fn, args))


def _loopback_interface() -> str | None:
    """The name of the loopback interface (``lo`` on Linux, ``lo0`` on macOS), if found."""
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return None
    return next((n for n in names if n in ("lo", "lo0")), None)


def _start_context() -> Any:
    """The multiprocessing context for workers: forkserver with torch preloaded, or spawn."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(["torch", "torch.distributed"])
    return context


def _serve_store(listener: socket.socket, port: int, world_size: int, timeout: float) -> Any:
    """The rendezvous store, served by this process on the bound loopback socket only.

    Where torch's libuv store cannot take a listening socket (it raises NotImplementedError on
    the oldest release of the matrix), use its legacy store.
    """
    options: dict[str, Any] = {
        "is_master": True,
        "timeout": timedelta(seconds=timeout),
        "wait_for_workers": False,
        "master_listen_fd": listener.fileno(),
    }
    try:
        return dist.TCPStore(_LOOPBACK, port, world_size, **options)  # type: ignore[attr-defined]
    except NotImplementedError:  # "The libuv TCPStore backend does not support ... listen fd"
        return dist.TCPStore(  # type: ignore[attr-defined]
            _LOOPBACK, port, world_size, use_libuv=False, **options
        )


def _worker(
    rank: int,
    world_size: int,
    port: int,
    backend: str,
    timeout: float,
    payload: bytes,
    conn: Connection,
) -> None:
    """Body of one worker process: join the group, call ``fn``, send the outcome, leave."""
    os.setpgid(0, 0)  # lead a process group: whatever this worker starts can be killed with it
    os.environ.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_WORLD_SIZE=str(world_size),
        MASTER_ADDR=_LOOPBACK,
        MASTER_PORT=str(port),
    )
    interface = _loopback_interface()
    if interface is not None:
        os.environ.update(GLOO_SOCKET_IFNAME=interface, NCCL_SOCKET_IFNAME=interface)
    try:
        try:
            fn, args = pickle.loads(payload)
            store = dist.TCPStore(  # type: ignore[attr-defined]  # not re-exported in the stubs
                _LOOPBACK, port, world_size, is_master=False, timeout=timedelta(seconds=timeout)
            )
            dist.init_process_group(
                backend,
                store=store,
                rank=rank,
                world_size=world_size,
                timeout=timedelta(seconds=timeout),
            )
            message = pickle.dumps((True, fn(rank, world_size, *args)))
        except BaseException:
            message = pickle.dumps((False, traceback.format_exc()))
        conn.send_bytes(message)  # plain pickle: tensors travel by value, not shared memory
    finally:
        conn.close()
        if dist.is_initialized():
            dist.destroy_process_group()


def _collect(
    readers: dict[Connection, int],
    processes: list[BaseProcess],
    deadline: float,
    timeout: float,
) -> list[Any]:
    """Wait for every worker's outcome; raise on the first failure or at the deadline."""
    pending = dict(readers)
    results: dict[int, Any] = {}
    while pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(
                f"run_parallel: rank(s) {sorted(pending.values())} did not finish within "
                f"{timeout:g} s; all workers were terminated"
            )
        for conn in wait(list(pending), timeout=remaining):
            assert isinstance(conn, Connection)
            rank = pending.pop(conn)
            try:
                ok, value = pickle.loads(conn.recv_bytes())
            except EOFError:
                process = processes[rank]
                process.join(max(0.0, min(_GRACE_S, deadline - time.monotonic())))
                raise WorkerError(
                    rank,
                    f"the process exited with code {process.exitcode} before sending a result",
                ) from None
            except Exception:
                raise WorkerError(
                    rank, "its result could not be unpickled:\n" + traceback.format_exc()
                ) from None
            if not ok:
                raise WorkerError(rank, value)
            results[rank] = value
    leave = time.monotonic() + _GRACE_S  # one grace for all: they leave in parallel
    for process in processes:  # each sent its result; let it leave the group and exit
        process.join(max(0.0, min(leave, deadline) - time.monotonic()))
    return [results[rank] for rank in range(len(processes))]


def _kill_group(process: BaseProcess, sig: int) -> None:
    """Send ``sig`` to the process group the worker leads (itself and what it started)."""
    if process.pid is None:
        return
    # ProcessLookupError: the group is empty, or the worker had not made it yet
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def _stop(processes: list[BaseProcess]) -> None:
    """Stop every worker and its process group, in parallel; reap the workers.

    SIGTERM goes to every worker still alive at once; they share one grace period,
    then whatever is left, and every process the workers started, gets SIGKILL.
    """
    for process in processes:
        if process.is_alive():
            process.terminate()
            _kill_group(process, signal.SIGTERM)
    end = time.monotonic() + _GRACE_S
    for process in processes:
        process.join(max(0.0, end - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.kill()
        _kill_group(process, signal.SIGKILL)  # the worker's children, even if it exited
    for process in processes:
        process.join()
        process.close()
