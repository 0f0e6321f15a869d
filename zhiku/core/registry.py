"""Named plugin registries: built-ins by name, third parties by entry point.

One :class:`Registry` per plug point (``extractors``, ``vector``, ``fulltext``, ``embedding``,
``fusion``, ``answerers``, ...; :data:`zhiku.plugins.REGISTRIES` lists them all), typed by the
factory contract of that plug point (a ``Protocol`` beside the registry). A factory registered
under a name is called lazily, so heavy imports happen only when that plugin is used.

Entry points are read by one policy, :func:`plugin_entry_points`: cached, and read again when
a package is installed or removed while the process runs.
"""

from __future__ import annotations

import os
import sys
import threading
from importlib.metadata import EntryPoints, entry_points
from typing import Generic, TypeVar

from zhiku.core.errors import ConfigError

F = TypeVar("F")

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


class Registry(Generic[F]):
    """Maps names to factories ``F`` for one plug point (``F`` is its factory contract)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, F] = {}
        self._loaded: dict[str, F] = {}  # entry point value -> its loaded factory

    def register(self, name: str) -> _Adder[F]:
        """Decorator: ``@vector_stores.register("edge")``."""
        return _Adder(self, name)

    def add(self, name: str, factory: F) -> None:
        self._factories[name] = factory

    def names(self) -> list[str]:
        """Names registered in code (entry points count once they have been used)."""
        return sorted(self._factories)

    def installed(self) -> list[str]:
        """Names installed packages declare as entry points ``<kind>.<name>``, used or not."""
        prefix = f"{self.kind}."
        return sorted(
            {ep.name[len(prefix) :] for ep in plugin_entry_points() if ep.name.startswith(prefix)}
        )

    def available(self) -> list[str]:
        """Every name :meth:`factory` resolves: registered ones and installed entry points."""
        return sorted({*self._factories, *self.installed()})

    def has(self, name: str) -> bool:
        """Whether :meth:`factory` resolves ``name``; a name registered in code answers without
        reading the installed entry points (a search checks its fusion mode on every call)."""
        return name in self._factories or name in self.installed()

    def check(self, name: str, what: str | None = None) -> str:
        """``name`` if :meth:`factory` resolves it; ConfigError listing the available names
        otherwise (``what`` names the setting or field in the message)."""
        if not self.has(name):
            raise self._unknown(name, what)
        return name

    def factory(self, name: str, *, prefer_installed: bool = False) -> F:
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
        raise self._unknown(name, None)

    def _unknown(self, name: str, what: str | None) -> ConfigError:
        label = what or self.kind
        return ConfigError(f"unknown {label} {name[:80]!r}; installed: {', '.join(self.available())}")

    def _entry_point(self, name: str) -> F | None:
        for ep in plugin_entry_points():
            if ep.name == f"{self.kind}.{name}":
                factory: F = self._loaded.get(ep.value) or ep.load()
                self._loaded[ep.value] = factory
                return factory
        return None


class _Adder(Generic[F]):
    """What :meth:`Registry.register` returns: adds the decorated factory under its name."""

    def __init__(self, registry: Registry[F], name: str) -> None:
        self._registry = registry
        self._name = name

    def __call__(self, factory: F) -> F:
        self._registry.add(self._name, factory)
        return factory
