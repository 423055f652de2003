"""A mapping's step's two vocabularies, apart from the step so the command line and the
explorer offer them without importing it (``engine.simulate.step`` needs the mapping side)."""

__all__ = ["MODES", "SPIKES"]

MODES = ("pipelined", "fall-through")  # when a step's packets are released
SPIKES = ("sample", "expected")  # how a step's spike counts are drawn from the rates
