"""One family of errors, each saying what is wrong and what to do about it.

The command line prints ``str(error)`` on one line and exits 2; the explorer shows it
as a notification and keeps its previous state. Catch ``MeshScopeError`` for all of
them, or one kind::

    MeshScopeError
    ├── SpecError            a name, spec string or option that means nothing valid
    │   ├── UnknownNameError     a name that is not in its registry
    │   ├── InvalidNetworkError  a network whose arrays or parameters are inconsistent
    │   └── InvalidHardwareError a hardware description that is inconsistent
    ├── InputFileError       a file that cannot be read as the format it claims to be
    ├── OutputFileError      an output path that cannot be written
    ├── CapacityError        something does not fit: a core limit, the cores available
    └── EvaluatorError       an evaluation or a search that produced no result
"""

__all__ = [
    "MeshScopeError",
    "SpecError",
    "UnknownNameError",
    "InvalidNetworkError",
    "InvalidHardwareError",
    "InputFileError",
    "OutputFileError",
    "CapacityError",
    "NotEnoughCoresError",
    "EvaluatorError",
    "AllFailedError",
    "Cancelled",
    "failure_text",
    "MeshScopeWarning",
]


class MeshScopeError(Exception):
    """Base class of every error MeshScope raises on purpose."""


class SpecError(MeshScopeError):
    """A name, spec string or option value that does not describe anything valid."""


class UnknownNameError(SpecError):
    """A name (network, preset, partitioner, placer …) that is not in its registry."""

    def __init__(self, kind: str, name: str, known):
        known = sorted(known)
        super().__init__(f"unknown {kind} {name!r}; known {kind}s: {', '.join(known)}")
        self.kind, self.name, self.known = kind, name, known


class InvalidNetworkError(SpecError):
    """A network's arrays are inconsistent or a workload spec is malformed."""


class InvalidHardwareError(SpecError):
    """A hardware preset or spec string is malformed."""


class InputFileError(MeshScopeError):
    """A file could not be read as the format it claims to be."""


class OutputFileError(MeshScopeError):
    """An output path cannot be written (missing folder, no permission, a directory …)."""


class CapacityError(MeshScopeError):
    """A partition or placement breaks a hardware limit, or the network does not fit."""


class NotEnoughCoresError(CapacityError):
    """A partition (or a network's totals) needs more cores than the hardware has: the same
    cores on a larger lattice would take it, unlike a core limit broken."""


class EvaluatorError(MeshScopeError):
    """An evaluation or a search could not produce a result."""


class AllFailedError(EvaluatorError):
    """A search in which every evaluation failed: there is no best mapping to report."""


def failure_text(error: BaseException, what: str) -> str:
    """What to tell a person when ``what`` (e.g. "the simulation") raised ``error``: one of
    ours says what is wrong as it is; anything else is named with its type."""
    if isinstance(error, MeshScopeError):
        return str(error)
    return f"{what} failed: {type(error).__name__}: {error}"


class Cancelled(Exception):  # noqa: N818 - what happened, not a fault
    """A run stopped because its caller asked it to (not an error: nothing is wrong)."""


class MeshScopeWarning(UserWarning):
    """Something MeshScope read past or chose for the user, said once (the CLI prints it as
    one ``meshscope: warning:`` line)."""
