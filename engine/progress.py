"""How far a long phase has got, for whoever shows it (a terminal's bar, the explorer).

Work that can tell calls ``report(done, total)`` between its chunks; whoever started it and
wants to know wraps it in ``reporting(callback)``, and each report reaches
``callback(fraction)``. Without a ``reporting`` around it a report costs one lookup, so a
partitioner reports whether or not anyone listens. The callback is held in a context
variable: a thread or a task sees only its own.

    with reporting(lambda f: print(f"{f:.0%}")):
        partition = make_partition(network, hardware, "overlap")
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["report", "reporting"]

_LISTENER: ContextVar[Callable[[float], None] | None] = ContextVar("progress", default=None)


@contextmanager
def reporting(callback: Callable[[float], None] | None) -> Iterator[None]:
    """Within this block, ``report`` calls ``callback`` with the fraction done (0–1)."""
    token = _LISTENER.set(callback)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def report(done: float, total: float) -> None:
    """``done`` of ``total`` units of the current phase are done."""
    listener = _LISTENER.get()
    if listener is not None and total > 0:
        listener(min(1.0, max(0.0, done / total)))
