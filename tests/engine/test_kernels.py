"""Where numba caches the kernels: beside the package, in the user's cache, or — for a user
of an install they cannot write, with a home they cannot write either — in a folder of
theirs in the temporary folder, or nowhere; never "cannot cache function … no locator
available" (every ``cache=True`` kernel raised it as its module was imported).

The package is copied with every ``__pycache__`` a file and ``HOME`` a file: neither numba's
folder beside the module nor its user-wide one can be made, whoever runs the test (root
writes through permissions, not through a file)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.kernels import choose_cache

ROOT = Path(__file__).resolve().parents[2]

# import a module of kernels and run one (compiling it: ~1 s)
KERNEL = (
    "import numpy as np\n"
    "from engine.heap import push\n"
    "heap, pos = np.zeros(4, np.int64), -np.ones(4, np.int64)\n"
    "print(push(heap, np.arange(4.0), pos, 0, 2))\n"
)


@pytest.fixture(scope="module")
def unwritable(tmp_path_factory) -> Path:
    """A copy of the engine whose cache folders cannot be made, and a home that is a file."""
    where = tmp_path_factory.mktemp("install")
    shutil.copytree(ROOT / "engine", where / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    for folder, _, files in os.walk(where / "engine"):
        if any(f.endswith(".py") for f in files):
            (Path(folder) / "__pycache__").write_text("")
    (where / "home").write_text("")
    return where


def run(where: Path, tmp: Path, code: str = KERNEL, **env) -> subprocess.CompletedProcess:
    environ = {
        k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")
    }
    environ |= {"PYTHONPATH": str(where), "HOME": str(where / "home"), "TMPDIR": str(tmp), **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environ, cwd=where, timeout=120)  # fmt: skip


def test_kernels_are_cached_in_a_folder_of_the_user_s_when_numba_has_none(unwritable, tmp_path):
    done = run(unwritable, tmp_path, "import engine; print(engine.__file__)\n" + KERNEL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(unwritable / "engine" / "__init__.py"), "1"]
    folder = tmp_path / f"meshscope-numba-{os.getuid()}"
    assert done.stderr == (
        "meshscope: warning: numba cannot cache its compiled kernels beside MeshScope "
        f"({unwritable / 'engine' / '__pycache__'} is not writable) nor in "
        f"{unwritable / 'home' / '.cache' / 'numba'}: they are cached in {folder} (set "
        "NUMBA_CACHE_DIR to choose another folder)\n"
    )
    cached = [p.name for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert any(name.startswith("heap.push") for name in cached), cached
    assert oct(folder.stat().st_mode & 0o777) == "0o700"


def test_kernels_run_uncached_when_nothing_can_be_written(unwritable, tmp_path):
    nowhere = f"import tempfile; tempfile.tempdir = {str(unwritable / 'home')!r}\n"
    done = run(unwritable, tmp_path, nowhere + KERNEL)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "1\n"
    assert done.stderr.count("\n") == 1 and "nowhere writable, so each run compiles" in done.stderr


def test_a_cache_folder_the_user_names_is_left_to_numba(unwritable, tmp_path):
    mine = tmp_path / "mine"
    done = run(unwritable, tmp_path, KERNEL, NUMBA_CACHE_DIR=str(mine))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert any(p.suffix == ".nbi" for p in mine.rglob("*"))


def test_nothing_is_said_or_changed_where_numba_can_cache():
    assert choose_cache() is None  # (this checkout's __pycache__ folders are writable)
