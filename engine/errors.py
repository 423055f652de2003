"""One family of errors, each saying what is wrong and what to do about it.

The CLI prints ``str(error)`` on one line and exits 2; the explorer shows it as a
notification and keeps its previous state.
"""

__all__ = [
    "MeshScopeError",
    "InvalidNetworkError",
    "InvalidHardwareError",
    "InfeasibleMappingError",
    "BadFileError",
    "UnknownNameError",
]


class MeshScopeError(Exception):
    """Base class of every error the engine raises on purpose."""


class InvalidNetworkError(MeshScopeError):
    """A network's arrays are inconsistent or a workload spec is malformed."""


class InvalidHardwareError(MeshScopeError):
    """A hardware preset or spec string is malformed."""


class InfeasibleMappingError(MeshScopeError):
    """A partition or placement breaks a hardware limit, or the network does not fit."""


class BadFileError(MeshScopeError):
    """A file could not be read as the format it claims to be."""


class UnknownNameError(MeshScopeError):
    """A name (network, preset, partitioner, placer …) is not in its registry."""

    def __init__(self, kind: str, name: str, known):
        known = sorted(known)
        super().__init__(f"unknown {kind} {name!r}; known {kind}s: {', '.join(known)}")
        self.kind, self.name, self.known = kind, name, known
