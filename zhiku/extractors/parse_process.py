"""Parsing in a child process, killed when the document stops.

Some parses are one long call into a library — lxml or BeautifulSoup building a tree, openpyxl
loading a workbook, python-pptx opening a deck, the email package reading a message — with no
:func:`~zhiku.core.cancellation.checkpoint` inside: a pause or a DELETE waited for it to end
(seconds to minutes on a hostile file), and the memory it grew stayed with the server. Under a
budget that asks for it (``ParseBudget.isolated``, setting ``parse_in_child_process``), the
extraction runs in a child process instead; the calling thread waits on it, checks the
document's cancel token every :data:`POLL_SECONDS`, and kills the child (SIGKILL, then reaps it)
when the document is paused or deleted, the server stops, or the parse time limit passes (then
``<FORMAT> too costly to parse``, as a parse that stops itself says). A child that dies on its
own gives the document an error naming the signal.

Start method: a fresh interpreter (``subprocess``, like multiprocessing's ``spawn``), one warm
child per calling thread, reused for every document that thread parses and replaced only after
it was killed. ``fork`` would copy a process whose other threads (the API's, the other indexing
threads, the embedding model's) may hold locks the child then waits on forever;
``forkserver`` is safe but puts a second long-lived process between the server and its
children, and multiprocessing's ``spawn`` imports the caller's main module again in the child (a
script without an ``if __name__ == "__main__"`` guard would ingest itself). A fresh child
imports the extractors once (a fraction of a second) and then costs only the pickling of the
request and of the documents it returns. Because the
child belongs to its thread, Linux kills it when that thread ends (see
:mod:`zhiku.extractors.parse_child`), and :func:`stop_children` kills the children of threads
being stopped.

Extractors registered in code in this process (not built in, not an entry point) are unknown to
a spawned child: with one of them registered, parsing stays in-process.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import NoReturn

from zhiku.core.cancellation import CancelToken, current_token
from zhiku.core.documents import Document
from zhiku.core.errors import ExtractionError
from zhiku.extractors.budget import ParseBudget, TooCostly, current_budget, too_slow
from zhiku.extractors.dispatch import extract, only_builtin_or_installed
from zhiku.extractors.parse_child import format_of, unpack_error

#: Seconds between two looks at the cancel token and the clock while the child parses.
POLL_SECONDS = 0.05
#: Seconds past the parse time limit before the child is killed: a parse with checkpoints stops
#: itself first, with the same message.
KILL_GRACE_SECONDS = 1.0
#: Seconds :func:`stop_children` waits for a killed child to be reaped.
KILL_WAIT_SECONDS = 5.0


#: What the child runs (``python -I``: no environment, no current directory on its path) with
#: this process's ``sys.path``, so it imports the same modules (a checkout a script put first),
#: then :func:`~zhiku.extractors.parse_child.main`.
_BOOT = "import sys; sys.path[:] = sys.argv[3:]; from zhiku.extractors.parse_child import main; main()"


class ParseChild:
    """One child process parsing one file at a time for the thread that started it."""

    def __init__(self) -> None:
        mine, theirs = socket.socketpair()
        with theirs:
            fd = theirs.fileno()
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOT, str(fd), str(os.getpid()), *sys.path],
                pass_fds=(fd,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        self._conn = Connection(mine.detach())

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def extract(
        self, source: Path | bytes, name: str, budget: ParseBudget, token: CancelToken | None
    ) -> list[Document]:
        """The file's documents, parsed in this child; raises what the parse raised, or stops
        the work (killing the child) as described in the module docstring."""
        started = time.monotonic()
        try:
            self._conn.send((source, name, budget))
        except OSError:  # it died before it read the request
            self._died(name, token)
        limit = budget.seconds + KILL_GRACE_SECONDS if budget.seconds is not None else None
        while not self._conn.poll(POLL_SECONDS):
            try:
                if token is not None:
                    token.check()
                spent = time.monotonic() - started
                if limit is not None and spent > limit:
                    raise TooCostly(name, format_of(source, name), too_slow(spent, budget.seconds or 0))
            except BaseException:
                self.kill()
                raise
        try:
            status, payload = self._conn.recv()
        except (EOFError, OSError):
            self._died(name, token)
        if status == "ok":
            documents: list[Document] = payload
            return documents
        raise unpack_error(payload)

    def _died(self, name: str, token: CancelToken | None) -> NoReturn:
        """The child ended during a request: the work stops if it was stopping (the workers'
        stop kills children), else the file fails with the way the child ended."""
        self.kill()
        if token is not None:
            token.check()
        raise ExtractionError(name, f"the parsing process ended unexpectedly ({self._ending()})")

    def kill(self) -> None:
        """SIGKILL the child and reap it (at once: a killed process ends without delay)."""
        self.process.kill()
        self.process.wait()
        self._conn.close()

    def _ending(self) -> str:
        code = self.process.returncode
        if code is not None and code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"


_local = threading.local()
_lock = threading.Lock()
#: the live child of each thread, by thread ident
_children: dict[int, ParseChild] = {}


def extract_document(source: Path | bytes, name: str) -> list[Document]:
    """Extract a file as :func:`~zhiku.extractors.dispatch.extract` does, in this thread's
    child process when the current budget is ``isolated`` (else in-process)."""
    budget = current_budget()
    if not budget.isolated or not only_builtin_or_installed():
        return extract(source, name)
    child = _child()
    try:
        return child.extract(source, name, budget, current_token())
    finally:
        if not child.alive:
            _forget(child)


def _child() -> ParseChild:
    child: ParseChild | None = getattr(_local, "child", None)
    if child is None or not child.alive:
        _reap_orphans()
        child = ParseChild()
        _local.child = child
        with _lock:
            _children[threading.get_ident()] = child
    return child


def _reap_orphans() -> None:
    """Reap the children of threads that ended (killed with them, not yet waited for)."""
    living = {thread.ident for thread in threading.enumerate()}
    stop_children([ident for ident in child_pids() if ident not in living])


def _forget(child: ParseChild) -> None:
    child.kill()
    if getattr(_local, "child", None) is child:
        _local.child = None
    with _lock:
        for ident, known in list(_children.items()):
            if known is child:
                del _children[ident]


def child_pids() -> dict[int, int]:
    """The pid of each thread's parsing child, by thread ident."""
    with _lock:
        return {ident: child.process.pid for ident, child in _children.items()}


def stop_children(threads: Iterable[int | None] | None = None) -> None:
    """Kill the parsing children of these threads (by ident; None: of every thread); a thread
    parsing then sees its work stopping, an idle one starts a new child when next asked."""
    with _lock:
        idents = list(_children) if threads is None else [i for i in threads if i in _children]
        chosen = [_children.pop(ident) for ident in idents if ident is not None]
    for child in chosen:
        child.process.kill()
        # Popen's wait is safe beside its thread's own; past the wait, whoever waits next reaps it
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.process.wait(KILL_WAIT_SECONDS)


atexit.register(stop_children)
