"""Delegated: a facade's method that is its collaborator's, bound at each access."""

from __future__ import annotations

import inspect

from zhiku.core.delegation import Delegated


class Counter:
    def __init__(self, start: int) -> None:
        self.value = start

    def add(self, amount: int, *, times: int = 1) -> int:
        """Add ``amount`` ``times`` times; returns the new value."""
        self.value += amount * times
        return self.value


class Facade:
    add = Delegated("_counter", Counter.add)

    def __init__(self, start: int) -> None:
        self._counter = Counter(start)


def test_the_call_reaches_the_collaborator_of_that_instance() -> None:
    first, second = Facade(1), Facade(10)
    assert first.add(2, times=3) == 7
    assert second.add(1) == 11
    assert first._counter.value == 7  # noqa: SLF001


def test_it_offers_the_collaborators_signature_and_docstring() -> None:
    facade = Facade(0)
    assert str(inspect.signature(facade.add)) == "(amount: 'int', *, times: 'int' = 1) -> 'int'"
    assert facade.add.__doc__ == Counter.add.__doc__
    assert Facade.add.__doc__ == Counter.add.__doc__


def test_on_the_class_it_is_the_declaration() -> None:
    declared = Facade.add
    assert isinstance(declared, Delegated)
    assert declared.attribute == "_counter"
    assert declared.method is Counter.add


def test_help_of_the_facade_names_the_collaborators_method() -> None:
    assert repr(Facade.add) == "Counter.add(amount: 'int', *, times: 'int' = 1) -> 'int'"
