"""What every test shares: generated networks cached in a folder of the run's own, never in
the user's cache."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _network_cache(tmp_path_factory):
    old = os.environ.get("MESHSCOPE_CACHE_DIR")
    os.environ["MESHSCOPE_CACHE_DIR"] = str(tmp_path_factory.mktemp("network-cache"))
    yield
    if old is None:
        os.environ.pop("MESHSCOPE_CACHE_DIR", None)
    else:
        os.environ["MESHSCOPE_CACHE_DIR"] = old
