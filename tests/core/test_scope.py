"""A scope of payload tests reads its list of documents once, only when asked for, and reads as
the same scope with its list made at once in every operation."""

from __future__ import annotations

import threading

import pytest

from zhiku.core.payload_filter import FieldTest, PayloadFilter
from zhiku.core.scope import DocumentScope

TEAM_IS_HR = PayloadFilter((FieldTest("meta_team", strings=("hr",)),))


class Reader:
    """The list a scope reads, counting the reads."""

    def __init__(self, listed: DocumentScope) -> None:
        self.listed = listed
        self.reads = 0

    def __call__(self) -> DocumentScope:
        self.reads += 1
        return self.listed


def test_the_list_is_read_when_first_asked_for_and_only_once() -> None:
    reader = Reader(DocumentScope(frozenset({"d1", "d2"})))
    scope = DocumentScope.by_payload(TEAM_IS_HR, reader)
    assert not scope.listed and not scope.empty  # not known to be empty: the stores find out
    assert scope.payload_filter == TEAM_IS_HR and scope.section is None
    assert "not read" in repr(scope)
    assert reader.reads == 0
    assert scope.ids == {"d1", "d2"} and not scope.exclude and scope.listed
    assert scope.admits("d1") and not scope.admits("d3")
    assert scope == DocumentScope(frozenset({"d1", "d2"}), payload_filter=TEAM_IS_HR)
    assert hash(scope) == hash(DocumentScope(frozenset({"d1", "d2"}), payload_filter=TEAM_IS_HR))
    assert reader.reads == 1
    with pytest.raises(AttributeError):  # hashed by its contents: none of them can change
        scope.section = "A"  # type: ignore[misc]


def test_threads_asking_together_share_one_read() -> None:
    reader = Reader(DocumentScope(frozenset({"d1"}), exclude=True))
    scope = DocumentScope.by_payload(TEAM_IS_HR, reader)
    gate = threading.Barrier(8)
    seen: list[tuple[frozenset[str], bool]] = []

    def ask() -> None:
        gate.wait()
        seen.append((scope.ids, scope.exclude))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert reader.reads == 1
    assert seen == [(frozenset({"d1"}), True)] * 8


def test_a_failed_read_is_tried_again_by_the_next_ask() -> None:
    attempts: list[int] = []

    def flaky() -> DocumentScope:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("database gone")
        return DocumentScope(frozenset({"d1"}))

    scope = DocumentScope.by_payload(TEAM_IS_HR, flaky)
    with pytest.raises(RuntimeError):
        _ = scope.ids
    assert not scope.listed
    assert scope.ids == {"d1"} and len(attempts) == 2


def test_a_section_narrows_the_scope_without_reading_its_list() -> None:
    reader = Reader(DocumentScope(frozenset({"d1", "d2"})))
    scope = DocumentScope.by_payload(TEAM_IS_HR, reader)
    for narrowed in (
        scope.intersect(DocumentScope.of_section("A > B")),
        DocumentScope.of_section("A > B").intersect(scope),
    ):
        assert narrowed.section == "A > B" and narrowed.payload_filter == TEAM_IS_HR
        assert not narrowed.listed
    assert reader.reads == 0
    narrowed = scope.intersect(DocumentScope.of_section("A"))
    assert narrowed.admits("d1", "A > C") and not narrowed.admits("d1", "B")
    assert not narrowed.admits("d3", "A")
    assert reader.reads == 1 and scope.listed  # the copies share the one list
    assert scope.intersect(DocumentScope.of_section("A")).listed


def test_with_a_list_the_list_is_read_and_joined() -> None:
    scope = DocumentScope.by_payload(TEAM_IS_HR, Reader(DocumentScope(frozenset({"d1", "d2"}))))
    joined = scope.intersect(DocumentScope(frozenset({"d2", "d3"})))
    assert joined == DocumentScope(frozenset({"d2"}))  # the list says it: no payload test kept
    either = DocumentScope.by_payload(TEAM_IS_HR, Reader(DocumentScope(frozenset({"d1"}))))
    assert either.union(DocumentScope(frozenset({"d9"}), exclude=True)) == DocumentScope(
        frozenset({"d9"}), exclude=True
    )
    assert scope.with_payload_filter(None) == DocumentScope(frozenset({"d1", "d2"}))
    nothing = DocumentScope.by_payload(TEAM_IS_HR, Reader(DocumentScope(frozenset())))
    assert not nothing.empty
    _ = nothing.ids
    assert nothing.empty
