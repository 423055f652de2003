"""Registries: one per kind of thing a user names (workload, partitioner, placer, …).

A registry maps a name to an object — usually a function registered by a decorator in
the module that defines it — with its one-line description, an optional grammar for
names that take parameters (``min[+K]``) and tags that group entries (``heuristic``).
The command line, the explorer and the tests enumerate registries; nothing lists these
names by hand. An unknown name raises ``UnknownNameError`` listing the known ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from engine.errors import UnknownNameError

__all__ = ["Registry"]

T = TypeVar("T")


@dataclass(frozen=True)
class _Entry(Generic[T]):
    obj: T
    grammar: str
    tags: frozenset[str]
    doc: str


class Registry(Generic[T]):
    """Named entries of one kind, in registration order."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, _Entry[T]] = {}

    def register(
        self, name: str, *, grammar: str | None = None, tags: Iterable[str] = (), doc: str = ""
    ) -> Callable[[T], T]:
        """Decorator: register the decorated object under ``name``."""

        def deco(obj: T) -> T:
            self.add(name, obj, grammar=grammar, tags=tags, doc=doc)
            return obj

        return deco

    def add(
        self, name: str, obj: T, *, grammar: str | None = None, tags: Iterable[str] = (),
        doc: str = "",
    ) -> None:  # fmt: skip
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        text = doc or (getattr(obj, "__doc__", None) or "").strip().split("\n")[0]
        self._entries[name] = _Entry(obj, grammar or name, frozenset(tags), text)

    # ------------------------------------------------------------ lookup
    def __getitem__(self, name: str) -> T:
        entry = self._entries.get(name)
        if entry is None:
            raise UnknownNameError(self.kind, name, self.grammars())
        return entry.obj

    def get(self, name: str, default=None):
        entry = self._entries.get(name)
        return default if entry is None else entry.obj

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return [(name, e.obj) for name, e in self._entries.items()]

    def names(self, tag: str | None = None) -> list[str]:
        """Every name (with ``tag``: those so tagged), in registration order."""
        return [n for n, e in self._entries.items() if tag is None or tag in e.tags]

    def grammar(self, name: str) -> str:
        """How ``name`` is written with its parameters (the name itself if it takes none)."""
        self[name]
        return self._entries[name].grammar

    def grammars(self) -> list[str]:
        return [e.grammar for e in self._entries.values()]

    def doc(self, name: str) -> str:
        self[name]
        return self._entries[name].doc

    def has_tag(self, name: str, tag: str) -> bool:
        self[name]
        return tag in self._entries[name].tags

    def describe(self) -> dict[str, str]:
        """Grammar → one-line description of every entry (for listings)."""
        return {e.grammar: e.doc for e in self._entries.values()}
