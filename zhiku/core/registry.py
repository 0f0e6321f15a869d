"""Named plugin registries: built-ins by name, third parties by entry point.

One :class:`Registry` per plug point (``extractors``, ``vector``, ``fulltext``, ``embedding``,
``cleaners``, ``splitters``, ``index_processors``, ...; :data:`zhiku.plugins.REGISTRIES` lists
them all). A factory registered under a name is called lazily, so heavy imports happen only when
that plugin is used.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from importlib.metadata import EntryPoints, entry_points
from typing import Generic, TypeVar

from zhiku.core.errors import ConfigError

T = TypeVar("T")

ENTRY_POINT_GROUP = "zhiku.plugins"


class _EntryPointCache:
    """The group's entry points, read again only when ``sys.path`` or the modification time of
    one of its directories changed. Reading them scans every installed distribution (tens of ms,
    more than a small file's whole ingest); installing or removing a package adds or removes a
    ``*.dist-info`` directory in a ``sys.path`` directory, which changes that directory's time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[tuple[str, int], ...] | None = None
        self._found: EntryPoints | None = None

    def get(self) -> EntryPoints:
        key = tuple((path, _mtime_ns(path)) for path in sys.path)
        with self._lock:
            if self._found is None or key != self._key:
                self._found, self._key = entry_points(group=ENTRY_POINT_GROUP), key
            return self._found


def _mtime_ns(path: str) -> int:
    try:
        return os.stat(path or ".").st_mtime_ns
    except OSError:
        return -1


plugin_entry_points = _EntryPointCache().get


class Registry(Generic[T]):
    """Maps names to factories for one plug point."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, Callable[..., T]] = {}
        self._loaded: dict[str, Callable[..., T]] = {}  # entry point value -> its loaded factory

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator: ``@extractors.register("pdf")``."""

        def add(factory: Callable[..., T]) -> Callable[..., T]:
            self._factories[name] = factory
            return factory

        return add

    def add(self, name: str, factory: Callable[..., T]) -> None:
        self._factories[name] = factory

    def names(self) -> list[str]:
        """Names registered in code (entry points count once they have been used)."""
        return sorted(self._factories)

    def installed(self) -> list[str]:
        """Names installed packages declare as entry points ``<kind>.<name>``, used or not."""
        prefix = f"{self.kind}."
        return sorted(
            {
                ep.name[len(prefix) :]
                for ep in plugin_entry_points()
                if ep.name.startswith(prefix)
            }
        )

    def available(self) -> list[str]:
        """Every name :meth:`factory` resolves: registered ones and installed entry points."""
        return sorted({*self._factories, *self.installed()})

    def factory(self, name: str, *, prefer_installed: bool = False) -> Callable[..., T]:
        """The factory for ``name``: a registered name or an installed entry point.

        Never an importable path: names come from stored settings and request bodies, and
        importing whatever they name would let any writer of them run any function
        (``os.system:...``). Code that needs its own class registers it with :meth:`add`.
        With ``prefer_installed`` an installed entry point of that name replaces a registered
        factory (extractors: a plug-in for ``txt`` reads every text file); a package installed
        while the process runs is found at the next call (see :func:`plugin_entry_points`).
        """
        if prefer_installed or name not in self._factories:
            found = self._entry_point(name)
            if found is not None:
                return found
        if name in self._factories:
            return self._factories[name]
        raise ConfigError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")

    def _entry_point(self, name: str) -> Callable[..., T] | None:
        for ep in plugin_entry_points():
            if ep.name == f"{self.kind}.{name}":
                factory: Callable[..., T] = self._loaded.get(ep.value) or ep.load()
                self._loaded[ep.value] = factory
                if name not in self._factories:
                    self._factories[name] = factory
                return factory
        return None

    def create(self, name: str, *, prefer_installed: bool = False, **options: object) -> T:
        return self.factory(name, prefer_installed=prefer_installed)(**options)
