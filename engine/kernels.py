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


# ------------------------------------------------------------------ where the kernels are cached
CACHE_ENV = "NUMBA_CACHE_DIR"


def choose_cache() -> str | None:
    """Make sure numba can cache the kernels somewhere, before any is declared; return what
    was done (None: nothing needed), said once as a warning on stderr.

    numba caches a kernel beside its module (``__pycache__``), else in the user's cache
    (``~/.cache/numba``); where neither can be written — a non-root user of an install
    root owns, with a home that is not writable — every ``cache=True`` kernel raised
    "cannot cache function …: no locator available" as its module was imported. Then the
    kernels are cached in a folder of this user's in the temporary folder
    (``NUMBA_CACHE_DIR``, which the worker processes inherit), or, if even that cannot be
    written, compiled afresh by every run. ``NUMBA_CACHE_DIR`` set by the user is theirs.
    """
    import os

    if os.environ.get(CACHE_ENV) or os.environ.get("NUMBA_DISABLE_JIT", "0") != "0":
        return None
    unwritable = [f for f in _kernel_folders() if not _writable(f)]
    if not unwritable or _writable(_user_cache()):
        return None  # numba finds a place of its own
    fallback = _own_temp_folder()
    if fallback is not None:
        os.environ[CACHE_ENV] = fallback
        _tell_numba(fallback)
        done = f"they are cached in {fallback} (set {CACHE_ENV} to choose another folder)"
    else:
        _run_uncached()
        done = (
            "nowhere writable, so each run compiles them again (set NUMBA_CACHE_DIR to a "
            "writable folder)"
        )
    import logging

    logging.getLogger("meshscope").warning(
        f"meshscope: warning: numba cannot cache its compiled kernels beside MeshScope "
        f"({unwritable[0]} is not writable) nor in {_user_cache()}: {done}"
    )
    return done


def _kernel_folders() -> list[str]:
    """The ``__pycache__`` folders numba would cache the engine's kernels in."""
    import os

    root = os.path.dirname(os.path.abspath(__file__))
    return [
        os.path.join(folder, "__pycache__")
        for folder, dirs, files in os.walk(root)
        if not folder.endswith("__pycache__") and any(f.endswith(".py") for f in files)
    ]


def _writable(folder: str) -> bool:
    """Whether a file can be made in ``folder`` (made if missing), as numba tries it."""
    import os
    import tempfile

    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except (OSError, ValueError):
        return False
    return True


def _user_cache() -> str:
    """numba's user-wide cache folder (its ``AppDirs("numba").user_cache_dir``)."""
    import os
    import sys

    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/numba")
    if sys.platform.startswith("win"):
        return os.path.join(os.environ.get("LOCALAPPDATA", os.path.expanduser("~")), "numba")
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "numba")


def _own_temp_folder() -> str | None:
    """A folder of this user's in the temporary folder (made 0700, refused if someone
    else owns it or it is a link), writable; None if there is none."""
    import os
    import stat
    import tempfile

    try:
        folder = os.path.join(tempfile.gettempdir(), f"meshscope-numba-{os.getuid()}")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except (OSError, AttributeError):  # (no getuid: not a POSIX system)
        return None
    mine = stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
    return folder if mine and _writable(folder) else None


def _tell_numba(folder: str) -> None:
    """numba reads ``NUMBA_CACHE_DIR`` as it is imported; if it was already, tell it now."""
    import sys

    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = folder


def _run_uncached() -> None:
    """Kernels declared ``cache=True`` compile without a cache (numba would raise)."""
    from numba.core.dispatcher import Dispatcher

    Dispatcher.enable_caching = lambda self: None
