"""The parsing process's side: read a request, extract the file, send the documents back.

Runs in a child process started by :mod:`zhiku.extractors.parse_process`, one request at a time
until its pipe closes. Each answer is ``("ok", documents)`` or ``("error", packed exception)``:
zhiku's errors take their own constructor arguments, which pickle does not replay, so an error
travels as its class, message and attributes (:func:`pack_error`, :func:`unpack_error`).

The child must never outlive its parent: on Linux the kernel kills it when the thread that
started it ends (``PR_SET_PDEATHSIG``, asked for first thing), elsewhere a watchdog thread
exits once the parent is gone; an idle child also ends when its pipe closes. Its address space
is capped per request (``RLIMIT_AS``, see :func:`limit_memory`), so a parse that outgrows the
budget by far gets a ``MemoryError`` — reported as too costly — instead of the machine's memory.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path, PurePath
from typing import Any

from zhiku.core.documents import Document
from zhiku.extractors.budget import MB, ParseBudget, TooCostly, parse_budget
from zhiku.extractors.dispatch import extract, file_format

#: ``prctl`` option: the signal this process gets when its parent thread ends.
PR_SET_PDEATHSIG = 1
#: Address space a parse may add over the child's size at the request, in multiples of the
#: budget's ``max_mb`` (its estimates are of the parsed tree, not of every copy made of it) ...
ADDRESS_SPACE_FACTOR = 4
#: ... plus this many megabytes: a parser library imported by the request maps its own (PPTX's
#: ``unstructured`` brings torch: some 850 MB of address space, most of it never resident).
ADDRESS_SPACE_MARGIN_MB = 1024

Answer = tuple[str, Any]


def main() -> None:
    """The child's entry: ``argv`` holds its end of the pipe and its parent's pid."""
    serve(Connection(int(sys.argv[1])), int(sys.argv[2]))


def serve(conn: Connection, parent_pid: int) -> None:
    """Answer parse requests ``(source, name, budget)`` until the pipe closes."""
    die_with_parent(parent_pid)
    while True:
        try:
            source, name, budget = conn.recv()
        except (EOFError, OSError):
            return
        answer, healthy = _answer(source, name, budget)
        conn.send(answer)
        if not healthy:
            return  # out of memory: a fresh child takes the next request


def _answer(source: Path | bytes, name: str, budget: ParseBudget) -> tuple[Answer, bool]:
    limit_memory(budget)
    try:
        with parse_budget(budget):
            documents: list[Document] = extract(source, name)
        return ("ok", documents), True
    except MemoryError:
        why = f"out of memory: over {ADDRESS_SPACE_FACTOR} × {budget.max_mb:g} MB, setting parse_max_mb"
        return ("error", pack_error(TooCostly(name, format_of(source, name), why))), False
    except Exception as exc:  # noqa: BLE001 - every failure goes back to the parent, which decides
        return ("error", pack_error(exc)), True


def format_of(source: Path | bytes, name: str) -> str:
    """The file's format for a message (its suffix when its head cannot be read)."""
    try:
        head = source[: 64 * 1024] if isinstance(source, bytes) else _head(Path(source))
        return file_format(name, head) or PurePath(name).suffix.lstrip(".") or "file"
    except Exception:  # noqa: BLE001 - only a message's word depends on it
        return PurePath(name).suffix.lstrip(".") or "file"


def _head(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(64 * 1024)


def pack_error(exc: BaseException) -> tuple[type[BaseException], str, dict[str, Any]]:
    return type(exc), str(exc), dict(vars(exc))


def unpack_error(packed: tuple[type[BaseException], str, dict[str, Any]]) -> BaseException:
    """The exception the child raised, rebuilt without its constructor (same type, message and
    attributes)."""
    cls, message, state = packed
    exc = cls.__new__(cls)
    BaseException.__init__(exc, message)
    exc.__dict__.update(state)
    return exc


def limit_memory(budget: ParseBudget) -> None:
    """Cap the address space at its size now plus what this budget's parse may take."""
    try:
        import resource
    except ImportError:  # not on this platform: the parse is bounded by its estimates only
        return
    size = _address_space()
    if size is None:
        return
    limit = size + (ADDRESS_SPACE_FACTOR * budget.max_mb + ADDRESS_SPACE_MARGIN_MB) * MB
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (int(limit), hard))


def _address_space() -> int | None:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def die_with_parent(parent_pid: int) -> None:
    """End this process when its parent ends (however it ends: a SIGKILL leaves no handler)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    else:
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    if os.getppid() != parent_pid:  # the parent ended before the request above took effect
        os._exit(1)


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(0.5)
    os._exit(1)
