"""Where evaluations run: worker processes on this machine, or a Dask cluster.

Both searches (the nested ES and the pymoo ones) hand their evaluator's batches to one
interface. A ``Setup`` says how a worker builds its evaluator (a picklable function and its
arguments: the network and hardware travel once per worker, not per evaluation), and
``executor.map(setup, items)`` returns ``evaluator.evaluate(item)`` for every item, in order —
so a run does not depend on where, or on how many workers, it ran.

* ``ProcessExecutor(workers)``: a pool of local processes (``concurrent.futures``) that die
  with this process, however it dies (``local_pool``);
* ``DaskExecutor(address)``: an existing Dask cluster (``tcp://HOST:8786``) or a
  ``distributed.Client``. The setup travels as a worker plugin, so every worker builds its
  evaluator once, including a worker that joins or restarts later; a batch goes out as two
  tasks a worker, each a run of evaluations naming the setup by its token. A worker that
  dies takes its tasks with it and the scheduler runs them again elsewhere (Dask's
  ``allowed-failures``); an evaluation that raises is retried ``retries`` times before the
  run fails. The workers need MeshScope installed (they import ``engine``).
"""

from __future__ import annotations

import contextlib
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from engine.errors import SpecError

__all__ = ["DaskExecutor", "ProcessExecutor", "Setup", "local_pool", "make_executor", "stop_pool"]


@dataclass(frozen=True)
class Setup:
    """How a worker builds the object that evaluates: ``build(*args)``, once per worker."""

    build: Callable
    args: tuple = ()
    token: str = field(default_factory=lambda: uuid.uuid4().hex)


_ADDRESS = re.compile(r"^((tcp|tls|ws|wss|ucx)://)?[^\s:/]+:\d{1,5}$")
_built: dict[str, object] = {}  # token -> the worker's evaluator (in each worker process)
_lock = threading.Lock()


def _evaluator(setup: Setup):
    with _lock:  # a Dask worker may run tasks in several threads
        obj = _built.get(setup.token)
        if obj is None:
            obj = _built[setup.token] = setup.build(*setup.args)
    return obj


def _init(setup: Setup) -> None:
    _evaluator(setup)


def local_pool(workers: int, initializer: Callable | None = None, initargs: tuple = ()):
    """A pool of ``workers`` local processes that die with this one: each asks the kernel to
    kill it when this process dies (``engine.io.process.die_with_parent``) — a SIGKILL of
    ``meshscope evolve --workers 4`` left its four workers running, 350 MB each — then runs
    ``initializer(*initargs)``. Start and end it in one thread (the kernel watches the thread
    that started a worker)."""
    import os

    return ProcessPoolExecutor(
        workers, initializer=_start_worker, initargs=(os.getpid(), initializer, initargs)
    )


def _start_worker(parent: int, initializer: Callable | None, initargs: tuple) -> None:
    from engine.io.process import die_with_parent

    die_with_parent(parent)
    if initializer is not None:
        initializer(*initargs)


def _call_built(token: str, items: list) -> list:
    """A task: a chunk of evaluations by the evaluator the worker built for ``token`` (the
    pool's initializer or the Dask worker plugin did): only the token and the items travel."""
    evaluator = _built[token]
    return [evaluator.evaluate(item) for item in items]


def _chunks(items: Sequence, n: int) -> list[list]:
    """``items`` in ``n`` runs of near-equal length, in order."""
    n = max(1, min(len(items), n))
    bounds = [len(items) * i // n for i in range(n + 1)]
    return [list(items[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


def _plugin(setup: Setup):
    """A worker plugin that builds ``setup``'s evaluator on every worker, now and on the
    workers that start later (a restarted one too). distributed is imported here, not with
    the module: the command line pays for it only with ``--dask-scheduler``."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class Builder(WorkerPlugin):
        def __init__(self, what: Setup):
            self.what = what

        def setup(self, worker):
            _evaluator(self.what)

        def teardown(self, worker):
            _built.pop(self.what.token, None)

    return Builder(setup)


class ProcessExecutor:
    """Local worker processes, one pool per setup."""

    def __init__(self, workers: int):
        if workers < 1:
            raise SpecError(f"workers must be at least 1, not {workers}")
        self.workers = workers
        self._pools: dict[str, ProcessPoolExecutor] = {}

    def map(self, setup: Setup, items: Sequence) -> list:
        if not items:
            return []
        pool = self._pools.get(setup.token)
        if pool is None:  # the setup travels once a worker, with the initializer
            pool = self._pools[setup.token] = local_pool(self.workers, _init, (setup,))
        chunks = _chunks(items, 2 * self.workers)
        done = pool.map(_call_built, [setup.token] * len(chunks), chunks)
        return [out for chunk in done for out in chunk]

    def close(self, *, cancel: bool = False) -> None:
        """Shut the pools down; with ``cancel``, now: the evaluations running are killed with
        their workers, not waited for (a cancelled run has no use for them)."""
        for pool in self._pools.values():
            if cancel:
                stop_pool(pool)
            else:
                pool.shutdown(cancel_futures=True)
        self._pools.clear()


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """End ``pool`` at once: its queued work dropped, its workers killed mid-task."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    for process in workers:
        with contextlib.suppress(Exception):  # gone already
            process.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        with contextlib.suppress(Exception):
            process.join(timeout=1.0)


class DaskExecutor:
    """A Dask cluster: ``address`` of its scheduler, or a ``distributed.Client``."""

    def __init__(self, address, *, retries: int = 2, timeout_s: float = 10.0):
        try:
            from distributed import Client
        except ImportError:  # pragma: no cover - a dependency
            raise SpecError("--dask-scheduler needs the 'distributed' package") from None
        if isinstance(address, Client):
            self.client, self._own = address, False
        else:
            if not _ADDRESS.match(str(address)):
                raise SpecError(
                    f"bad Dask scheduler address {address!r}: give it as tcp://HOST:PORT "
                    "(e.g. tcp://127.0.0.1:8786)"
                )
            try:
                self.client = Client(address, timeout=timeout_s)
            except (OSError, TimeoutError, ValueError) as e:
                raise SpecError(
                    f"cannot reach the Dask scheduler at {address}: {e}; start one with "
                    "'dask scheduler' (and workers with 'dask worker ADDRESS') or check the address"
                ) from None
            self._own = True
        self.retries = retries
        self._plugins: list[str] = []  # the names of the plugins this executor registered

    def map(self, setup: Setup, items: Sequence) -> list:
        if not items:
            return []
        name = f"meshscope-{setup.token}"
        if name not in self._plugins:
            self.client.register_plugin(_plugin(setup), name=name)
            self._plugins.append(name)
        # a task per chunk, two chunks a thread: a task costs ~10 ms of scheduling, the
        # model's evaluation less, and two a thread keep them busy when one is slower
        threads = max(1, sum(self.client.nthreads().values()))
        chunks = _chunks(items, 2 * threads)
        futures = self.client.map(
            _call_built, [setup.token] * len(chunks), chunks, pure=False, retries=self.retries
        )
        try:
            return [out for chunk in self.client.gather(futures) for out in chunk]
        except BaseException:  # Ctrl-C, a failure: the cluster need not finish the batch
            with contextlib.suppress(Exception):
                self.client.cancel(futures, force=True)
            raise

    def close(self, *, cancel: bool = False) -> None:
        """Unregister the plugins; a batch interrupted was cancelled already (``cancel`` is
        for the same call as ``ProcessExecutor.close``)."""
        for name in self._plugins:
            with contextlib.suppress(Exception):  # the cluster may be gone already
                self.client.unregister_worker_plugin(name)
        self._plugins.clear()
        if self._own:
            self.client.close()


def make_executor(workers: int = 1, dask_scheduler: str | None = None):
    """The executor the command line asks for: a Dask cluster, worker processes, or None
    (evaluate in this process)."""
    if dask_scheduler:
        return DaskExecutor(dask_scheduler)
    if workers > 1:
        return ProcessExecutor(workers)
    return None
