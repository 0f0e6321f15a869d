"""Parsing in a child process: the same documents and errors as in-process, and a parse stopped
by killing the child — on cancellation, past the time limit, when the child dies, when the
parent dies. A parse of :func:`slow_html` is one uninterruptible library call of many seconds,
so a child gone before the guard passes was killed, not finished (a finished child stays, warm).
Nothing here asserts on timing: :data:`GUARD` only keeps a broken build from hanging."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zhiku.core.cancellation import CancelToken, cancellable
from zhiku.core.documents import Document
from zhiku.core.errors import Cancelled, ExtractionError, UnsupportedFileType
from zhiku.extractors import extract, extractors
from zhiku.extractors.budget import ParseBudget, TooCostly, parse_budget
from zhiku.extractors.parse_process import child_pids, extract_document, stop_children

GUARD = 30.0
ISOLATED = ParseBudget(seconds=600, isolated=True)
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def slow_html(elements: int = 400_000) -> bytes:
    """An HTML page BeautifulSoup builds in one call of many seconds (no checkpoint inside)."""
    return b"<html><body>" + b"<p>tea</p>" * elements + b"</body></html>"


def gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie, not reaped yet, counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def wait_for(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + GUARD
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(autouse=True)
def _no_children_left() -> Iterator[None]:
    yield
    stop_children([threading.get_ident()])


def _parse_in_thread(source: bytes, name: str, budget: ParseBudget, token: CancelToken | None) -> tuple[
    threading.Thread, list[BaseException], list[int]
]:
    """Parse in a new thread; returns it, what it raised, and its child's pid once parsing."""
    raised: list[BaseException] = []

    def run() -> None:
        with cancellable(token), parse_budget(budget):
            try:
                extract_document(source, name)
            except BaseException as exc:  # noqa: BLE001 - the test looks at it
                raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert wait_for(lambda: thread.ident in child_pids() or not thread.is_alive())
    return thread, raised, [child_pids()[thread.ident]] if thread.ident in child_pids() else []


def test_the_child_gives_what_the_in_process_parse_gives() -> None:
    page = b"<html><body><h1>Tea</h1><p>Longjing is picked before Qingming.</p></body></html>"
    with parse_budget(ISOLATED):
        assert extract_document(page, "tea.html") == extract(page, "tea.html")
        first = child_pids()[threading.get_ident()]
        with pytest.raises(ExtractionError, match="empty file") as empty:
            extract_document(b"", "tea.html")
        assert empty.value.source == "tea.html" and empty.value.reason == "empty file"
        with pytest.raises(UnsupportedFileType):
            extract_document(b"\x00\x01\x02 not a known format", "mystery.xyz")
        assert child_pids()[threading.get_ident()] == first  # one warm child served them all


def test_an_extractor_registered_in_code_parses_in_process() -> None:
    class Shouting:
        suffixes = (".shout",)

        @staticmethod
        def accepts(head: bytes) -> bool:
            return True

        def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
            return [Document(text="LOUD", metadata={"source": name})]

    extractors.add("shout", Shouting)
    try:
        with parse_budget(ISOLATED):
            assert extract_document(b"quiet", "a.shout")[0].text == "LOUD"
    finally:
        extractors._factories.pop("shout")


def test_cancelling_kills_the_child_at_once() -> None:
    token = CancelToken()
    thread, raised, pids = _parse_in_thread(slow_html(), "slow.html", ISOLATED, token)
    token.cancel("document d was deleted")
    thread.join(GUARD)
    assert not thread.is_alive()
    assert [type(exc) for exc in raised] == [Cancelled]
    assert pids and wait_for(lambda: gone(pids[0]))


def test_past_the_time_limit_the_child_is_killed_and_the_file_is_too_costly() -> None:
    budget = ParseBudget(seconds=0.5, isolated=True)
    thread, raised, pids = _parse_in_thread(slow_html(), "slow.html", budget, None)
    thread.join(GUARD)
    assert not thread.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], TooCostly), raised
    assert "HTML too costly to parse" in str(raised[0]) and "parse_time_limit" in str(raised[0])
    assert pids and wait_for(lambda: gone(pids[0]))


def test_a_child_killed_from_outside_is_an_error_with_its_reason() -> None:
    thread, raised, pids = _parse_in_thread(slow_html(), "slow.html", ISOLATED, CancelToken())
    assert pids
    os.kill(pids[0], signal.SIGKILL)
    thread.join(GUARD)
    assert not thread.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], ExtractionError), raised
    assert "parsing process ended unexpectedly (killed by SIGKILL)" in str(raised[0])


def test_stopping_a_thread_s_children_stops_its_parse() -> None:
    token = CancelToken()
    thread, raised, pids = _parse_in_thread(slow_html(), "slow.html", ISOLATED, token)
    token.cancel("the indexing workers are stopping")  # what stopping the workers does first
    stop_children([thread.ident])
    thread.join(GUARD)
    assert [type(exc) for exc in raised] == [Cancelled]
    assert pids and wait_for(lambda: gone(pids[0]))


def test_the_child_does_not_outlive_a_parent_killed_with_sigkill(tmp_path: Path) -> None:
    page = tmp_path / "slow.html"
    page.write_bytes(slow_html())
    script = (
        "import sys, threading\n"
        "from zhiku.extractors.budget import ParseBudget, parse_budget\n"
        "from zhiku.extractors.parse_process import child_pids, extract_document\n"
        "def parse():\n"
        "    with parse_budget(ParseBudget(seconds=600, isolated=True)):\n"
        "        extract_document(sys.argv[1], 'slow.html')\n"
        "threading.Thread(target=parse, daemon=True).start()\n"
        "while not child_pids(): threading.Event().wait(0.05)\n"
        "print(list(child_pids().values())[0], flush=True)\n"
        "threading.Event().wait()\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script, str(page)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert not gone(child)
    finally:
        parent.kill()
        parent.wait()
    assert wait_for(lambda: gone(child))
