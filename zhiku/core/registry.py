"""Named plugin registries: built-ins by name, third parties by entry point.

One :class:`Registry` per plug point (``extractors``, ``vector``, ``fulltext``, ``embedding``,
``cleaners``, ``splitters``, ``index_processors``, ...; :data:`zhiku.plugins.REGISTRIES` lists
them all). A factory registered under a name is called lazily, so heavy imports happen only when
that plugin is used.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from zhiku.core.errors import ConfigError

T = TypeVar("T")

ENTRY_POINT_GROUP = "zhiku.plugins"


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
                for ep in entry_points(group=ENTRY_POINT_GROUP)
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
        factory (extractors: a plug-in for ``txt`` reads every text file); this looks the
        entry points up on every call, so use it where a call costs far more (a file).
        """
        if prefer_installed or name not in self._factories:
            found = self._entry_point(name)
            if found is not None:
                return found
        if name in self._factories:
            return self._factories[name]
        raise ConfigError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")

    def _entry_point(self, name: str) -> Callable[..., T] | None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == f"{self.kind}.{name}":
                factory: Callable[..., T] = self._loaded.get(ep.value) or ep.load()
                self._loaded[ep.value] = factory
                if name not in self._factories:
                    self._factories[name] = factory
                return factory
        return None

    def create(self, name: str, *, prefer_installed: bool = False, **options: object) -> T:
        return self.factory(name, prefer_installed=prefer_installed)(**options)
