"""``<home>/server.json``: where a running ``zhiku serve`` answers, for commands run beside it.

The embedded stores admit one writer, so a CLI command on a served data directory cannot open
them; it asks the server instead. The server writes its URL, its pid and a token that acts as an
all-datasets key (readable by the directory's owner only, like the database itself) when it
starts, and removes the file when it stops; a file left by a killed server names a dead pid
and is ignored.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

SERVER_FILE = "server.json"


@dataclass(frozen=True)
class ServerInfo:
    url: str  # ends in /v1
    pid: int
    token: str


def write_server_file(home: Path, url: str) -> ServerInfo:
    """Write a new token and this process's address; returns what was written."""
    info = ServerInfo(url=url, pid=os.getpid(), token=secrets.token_urlsafe(32))
    path = home / SERVER_FILE
    partial = path.with_suffix(".json.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"url": info.url, "pid": info.pid, "token": info.token}, handle)
    os.replace(partial, path)
    return info


def remove_server_file(home: Path, info: ServerInfo) -> None:
    """Remove the file if it is still this server's (a newer server may have replaced it)."""
    if read_server_file(home, check_alive=False) == info:
        (home / SERVER_FILE).unlink(missing_ok=True)


def read_server_file(home: Path, *, check_alive: bool = True) -> ServerInfo | None:
    """The running server's address, or None (no file, unreadable, or its process is gone)."""
    try:
        data = json.loads((home / SERVER_FILE).read_text(encoding="utf-8"))
        info = ServerInfo(url=str(data["url"]), pid=int(data["pid"]), token=str(data["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if check_alive and not _alive(info.pid):
        return None
    return info


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True
