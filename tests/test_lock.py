"""The locks: ``requirements/lock.txt`` pins every package the app and the tests install, with
its hashes, within pyproject.toml's ranges; ``requirements/bench.txt`` is the same plus the
``bench`` extra; and the environment the tests run in is the lock's (``make`` installs it)."""

from __future__ import annotations

import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK, BENCH = ROOT / "requirements" / "lock.txt", ROOT / "requirements" / "bench.txt"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def pins(path: Path) -> dict[str, tuple[Requirement, list[str]]]:
    """name -> (its pin, its hashes), for every entry of a lock whose marker holds here."""
    text = path.read_text().replace("\\\n", " ")
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):  # (the "# via" notes)
            continue
        spec, *options = line.split(" --hash=")
        req = Requirement(spec)
        if req.marker is None or req.marker.evaluate():
            out[canonicalize_name(req.name)] = (req, [o.strip() for o in options])
    return out


def wanted(requirements: list[str]) -> list[Requirement]:
    reqs = [Requirement(r) for r in requirements]
    return [r for r in reqs if r.marker is None or r.marker.evaluate()]


@pytest.mark.parametrize(
    ("lock", "groups"),
    [(LOCK, ("dependencies", "test")), (BENCH, ("dependencies", "test", "bench"))],
    ids=["lock", "bench"],
)
def test_the_lock_pins_every_requirement_within_pyproject_s_range(lock, groups):
    """(After a change of pyproject.toml: ``make lock``.)"""
    pinned = pins(lock)
    for group in groups:
        reqs = (
            PROJECT[group] if group == "dependencies" else PROJECT["optional-dependencies"][group]
        )
        for req in wanted(reqs):
            name = canonicalize_name(req.name)
            assert name in pinned, f"{req} ({group}) is not in {lock.name}: run make lock"
            (pin,) = pinned[name][0].specifier
            assert pin.operator == "==" and req.specifier.contains(pin.version, prereleases=True), (
                f"{lock.name} pins {name} {pin.version}, outside pyproject's {req}: run make lock"
            )


@pytest.mark.parametrize("lock", [LOCK, BENCH], ids=["lock", "bench"])
def test_every_pin_is_exact_and_hashed(lock):
    pinned = pins(lock)
    assert len(pinned) > 50  # the whole tree, not the direct requirements alone
    for name, (req, hashes) in pinned.items():
        assert [s.operator for s in req.specifier] == ["=="], name
        assert hashes and all(h.startswith("sha256:") and len(h) == 71 for h in hashes), name


def test_the_bench_lock_is_the_lock_plus_the_bench_extra():
    """make bench runs the packages the suite ran, and Mt-KaHyPar besides."""
    lock, bench = pins(LOCK), pins(BENCH)
    extra = {canonicalize_name(r.name) for r in wanted(PROJECT["optional-dependencies"]["bench"])}
    assert set(bench) - set(lock) >= extra
    assert {n: str(r.specifier) for n, (r, _) in bench.items() if n in lock} == {
        n: str(r.specifier) for n, (r, _) in lock.items()
    }


def test_the_tests_run_on_the_locked_versions():
    """The environment running this suite has every package at the lock's version — what
    make's set-up installs (after the lock changed, the next make reinstalls)."""
    wrong = {}
    for name, (req, _) in pins(LOCK).items():
        (pin,) = req.specifier
        try:
            have = version(name)
        except PackageNotFoundError:
            have = None
        if have != pin.version:
            wrong[name] = f"{have} installed, {pin.version} locked"
    assert wrong == {}, "not the locked versions: make .venv/.installed installs them"
