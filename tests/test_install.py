"""MeshScope as a user installs it: the wheel built from this tree, installed into a new
virtual environment with the dependencies its metadata asks for at the versions of
``requirements/lock.txt``, and run from a folder outside the repository. A file the code reads
from disk but the wheel leaves out (a hardware preset, a demo network, a page's script), or an
import that only works from a checkout, fails here and nowhere else: every other test runs on
the repository's sources.

The new environment shares no package with the test environment: no system site-packages,
no ``PYTHONPATH``, the repository nowhere on ``sys.path``. pip (the test environment's, through
``--python``) installs the wheel in hash-checking mode with the lock as constraints, so a
dependency the wheel declares but the lock lacks fails the install, and only the app's own
dependencies come in (no pytest, no Playwright): an engine or explorer module importing a
test-only package fails too. pip downloads what the app needs (or takes it from its cache).

The numba kernels the test environment compiled (make's warm-up) are copied beside the
installed sources, whose modification times are set to the repository's: numba's cache, keyed
on a source file's time and size and each function's bytecode, then loads them rather than
compiling the simulator's kernel again for a minute; a kernel whose source differs from the
repository's compiles as on any first run. Marked ``install``: ``pytest -m "not install"``
leaves it out.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import venv
from pathlib import Path

import pytest

from explorer.browser import free_port

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
BUILT_FROM = ("pyproject.toml", "README.md", "engine", "explorer")  # what the build reads
INSTALL_S = 600  # pip's downloads on a cold cache; the kernels' first compile


def _run(argv, cwd: Path, env: dict, timeout_s: float = INSTALL_S) -> str:
    """``argv``'s standard output, after checking it exited 0 (else its stderr, said)."""
    out = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=timeout_s)  # fmt: skip
    assert out.returncode == 0, f"{' '.join(map(str, argv))} exited {out.returncode}:\n{out.stderr}"
    return out.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the new environment's bin folder, a working folder outside the repository, the
    environment its commands run with)."""
    work = tmp_path_factory.mktemp("install")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONSAFEPATH"] = "1"  # (python -c: not even the working folder on the path)
    # a copy of what the build reads: a build in the tree would leave build/ behind, whose
    # stale files the next wheel would carry whether or not pyproject.toml still ships them
    src = work / "src"
    src.mkdir()
    for name in BUILT_FROM:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
            shutil.copytree(ROOT / name, src / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--quiet"]
    _run([*pip, "wheel", "--no-deps", "--wheel-dir", work / "dist", src], work, env)
    (wheel,) = (work / "dist").glob("meshscope-*.whl")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    wanted = work / "wheel.txt"
    wanted.write_text(f"meshscope @ {wheel.as_uri()} --hash=sha256:{digest}\n")
    venv.create(work / "venv", with_pip=False)  # its own site-packages alone
    python = work / "venv" / "bin" / "python"
    _run([*pip, "--python", python, "install", "--require-hashes", "-r", wanted, "-c", LOCK],
         work, env)  # fmt: skip
    site = Path(_run([python, "-c", "import engine; print(engine.__file__)"], work, env))
    _carry_numba_cache(site.parents[1])
    run = work / "run"
    run.mkdir()
    return python.parent, run, env


def _carry_numba_cache(site: Path) -> None:
    """The repository's compiled kernels (``__pycache__/*.nbi``, ``*.nbc``) beside the same
    sources installed under ``site``, the sources' times set to the repository's."""
    for index in [*ROOT.glob("engine/**/__pycache__/*.nbi"),
                  *ROOT.glob("explorer/**/__pycache__/*.nbi")]:  # fmt: skip
        folder = index.parent.relative_to(ROOT)
        source = index.name.split(".")[0] + ".py"  # module.function-line.py311.nbi
        mine, theirs = ROOT / folder.parent / source, site / folder.parent / source
        if not theirs.exists() or theirs.read_bytes() != mine.read_bytes():
            continue
        (site / folder).mkdir(exist_ok=True)
        stem = index.name.removesuffix(".nbi")
        for cached in index.parent.glob(f"{glob.escape(stem)}.*"):
            shutil.copy2(cached, site / folder / cached.name)
        times = mine.stat()
        os.utime(theirs, ns=(times.st_atime_ns, times.st_mtime_ns))


def test_the_installed_package_is_the_wheel_s_and_nothing_else(installed):
    bin_, run, env = installed
    where = json.loads(_run([bin_ / "python", "-c", (
        "import importlib.util, json, sys, engine, explorer\n"
        "print(json.dumps({'files': [engine.__file__, explorer.__file__], 'path': sys.path,\n"
        "  'missing': [m for m in ('pytest', 'playwright', 'hypothesis', 'ruff')\n"
        "              if importlib.util.find_spec(m) is None]}))"
    )], run, env))  # fmt: skip
    site = str(bin_.parent / "lib")
    assert all(f.startswith(site) for f in where["files"]), where["files"]
    assert not [p for p in where["path"] if p.startswith(str(ROOT))], where["path"]
    assert where["missing"] == ["pytest", "playwright", "hypothesis", "ruff"]  # the app's alone


def test_version_and_list(installed):
    bin_, run, env = installed
    version = _run([bin_ / "meshscope", "--version"], run, env)
    assert version == "meshscope 0.1.0\n"
    listed = json.loads(_run([bin_ / "meshscope", "list", "--json"], run, env))
    presets = {p.stem for p in (ROOT / "engine" / "presets").glob("*.toml")}
    assert presets and {h["name"] for h in listed["hardware"]["presets"]} == presets
    demos = {p.name for p in (ROOT / "engine" / "demo_networks").glob("*.npz")}
    files = [Path(f) for f in listed["networks"]["files"]]
    assert demos and {f.name for f in files} == demos  # every demo network, in the package:
    assert all(f.is_relative_to(bin_.parent / "lib") for f in files), files
    assert {g["name"] for g in listed["networks"]["generators"]} >= {"mlp", "qubo", "rand"}


def test_evaluate_a_shipped_demo_network_by_its_bare_name(installed):
    """``qubo-1000.npz`` is no file of the working folder: only the package has it."""
    bin_, run, env = installed
    out = json.loads(_run([bin_ / "meshscope", "evaluate", "--json", "--network",
                           "qubo-1000.npz", "--hardware", "loihi2"], run, env))  # fmt: skip
    assert out["network"] == "qubo:n=1000,density=0.1,rate=0.1"  # the file's own spec
    assert out["hardware"] == "loihi2" and out["latency_us"] > 0


def test_simulate_a_short_synthetic_run(installed):
    bin_, run, env = installed
    out = json.loads(_run([bin_ / "meshscope", "simulate", "--json", "--pattern", "uniform",
                           "--mesh", "4x4", "--rate", "0.1", "--warmup", "20", "--cycles",
                           "100"], run, env))  # fmt: skip
    assert out["mesh"] == "4x4" and out["measured_packets"] > 0 and out["stable"]


SOURCES = re.compile(r"""<(?:script|link)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""")


def test_serve_answers_the_page_and_every_file_it_loads(installed):
    bin_, run, env = installed
    port = free_port()
    server = subprocess.Popen(
        [bin_ / "meshscope", "serve", "--no-browser", "--port", str(port)], cwd=run, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        end = time.monotonic() + 120  # the server imports Panel and listens
        while True:
            assert server.poll() is None, (
                f"serve exited {server.returncode}:\n{server.stderr.read()}"
            )
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < end, "serve did not listen within 120 s"
            time.sleep(0.1)  # poll interval
        url = f"http://127.0.0.1:{port}/"
        with urllib.request.urlopen(url, timeout=180) as answer:  # a session built cold
            assert answer.status == 200
            page = answer.read().decode()
        assert "<title>MeshScope</title>" in page
        files = [s for s in SOURCES.findall(page) if not s.startswith(("http:", "https:", "//"))]
        assert files, "the page loads no script of the server's"
        for path in files:  # Bokeh's and Panel's scripts and styles, from the installed packages
            with urllib.request.urlopen(url + path.lstrip("./"), timeout=60) as answer:
                assert answer.status == 200, path
    finally:
        server.terminate()
        server.wait(30)
