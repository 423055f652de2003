"""The numba kernels' first compilation, made visible.

Hot loops that cannot vectorize are numba kernels compiled on first use and cached on
disk (``cache=True``), so only the kernels a command runs are compiled, once per
machine. The first run of a command can therefore spend many seconds compiling;
``compiling_notice`` tells the user when that happens (numba's ``numba:compile`` event
fires only for real compilations, never for a kernel loaded from the cache).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

__all__ = ["compiling_notice"]

NOTICE = "compiling kernels (first run only)…"


@contextlib.contextmanager
def compiling_notice(say: Callable[[str], None]) -> Iterator[None]:
    """Within the block, call ``say(NOTICE)`` once, when a kernel starts to compile."""
    from numba.core import event

    class _Listener(event.Listener):
        said = False

        def on_start(self, ev):
            if not self.said:
                self.said = True
                say(NOTICE)

        def on_end(self, ev):
            """Nothing to do when a compilation ends."""

    with event.install_listener("numba:compile", _Listener()):
        yield
