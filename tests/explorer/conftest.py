"""Explorer states shared by the explorer tests (no browser)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.mapping.assignment import Mapping, Placement
from explorer.state import ExplorerState

SMALL_NETWORK = "mlp:widths=64-128-32-10"
TWO_CHIPS = "mesh:2x2x2@2x1"  # two chips side by side, 2×2 routers each, 2 cores per router


@pytest.fixture(scope="session")
def demo_state() -> ExplorerState:
    """The default demo of ``meshscope serve``: sparse-mlp-1 on one Loihi 2 chip."""
    return ExplorerState.from_specs("sparse-mlp-1", "loihi2")


@pytest.fixture
def two_chip_state() -> ExplorerState:
    """A four-layer MLP (its input a spike source, three layers on cores) spread over two
    chips so that traffic crosses the chip boundary."""
    state = ExplorerState.from_specs(SMALL_NETWORK, TWO_CHIPS)
    hw = state.hardware
    cores = [hw.core_id(1, 1, 1, 0), hw.core_id(0, 1, 0, 1), hw.core_id(1, 0, 0, 1)]
    state.set_mapping(Mapping(state.mapping.partition, Placement(np.array(cores))))
    return state
