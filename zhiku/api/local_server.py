"""``zhiku serve`` as a child process on a free 127.0.0.1 port, with an API key made by
``zhiku apikey create``: for the load benchmark and the API fuzzing, which measure and probe the
real server (waitress and its threads) rather than Flask's test client."""

from __future__ import annotations

import collections
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

import zhiku

#: Seconds to wait for the server to print its address (loading the embedding model included).
START_TIMEOUT = 120.0
#: Where this ``zhiku`` package is imported from: the child serves the same code.
_PACKAGE_ROOT = str(Path(zhiku.__file__).resolve().parents[1])


class LocalServer:
    """``with LocalServer(home) as server:`` serves ``home`` at ``server.url`` (``…/v1``) for
    ``server.key``; leaving the block stops the server (SIGTERM, then SIGKILL after 30 s).

    ``env`` adds settings (``ZHIKU_EMBEDDING_MODEL``, ...); ``preload`` names modules the child
    imports first, for plugins registered in code (the benchmarks' synthetic embedding model).
    The server's output is kept, its last lines in ``server.output()`` for a report when
    something fails.
    """

    def __init__(
        self,
        home: Path,
        *,
        env: Mapping[str, str] | None = None,
        threads: int = 8,
        preload: Sequence[str] = (),
    ) -> None:
        self.home = home
        paths = [_PACKAGE_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])]
        self.env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join(paths),
            **(env or {}),
        }
        self.threads = threads
        self.preload = tuple(preload)
        self.url = ""
        self.key = ""
        self._process: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._lines: collections.deque[str] = collections.deque(maxlen=200)

    def _cli(self, *args: str) -> list[str]:
        imports = "".join(f"import {module}; " for module in self.preload)
        program = f"{imports}from zhiku.cli import main; main()"
        return [sys.executable, "-c", program, "--home", str(self.home), *args]

    def __enter__(self) -> LocalServer:
        created = subprocess.run(
            self._cli("apikey", "create", "--name", "local-server"),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=START_TIMEOUT,
            check=True,
        )
        self.key = created.stdout.strip()
        self._process = subprocess.Popen(
            self._cli("serve", "--host", "127.0.0.1", "--port", "0", "--threads", str(self.threads)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=self.env,
        )
        try:
            self.url = self._address(self._process)
        except BaseException:
            self.stop()
            raise
        # Keep reading, so that a chatty server never blocks on a full pipe.
        self._reader = threading.Thread(target=self._drain, args=(self._process,), daemon=True)
        self._reader.start()
        return self

    def _address(self, process: subprocess.Popen[str]) -> str:
        assert process.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            self._lines.append(line)
            match = re.search(r"http://127\.0\.0\.1:\d+/v1", line)
            if match:
                return match.group(0)
        raise RuntimeError(f"zhiku serve did not start:\n{self.output()}")

    def _drain(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self._lines.append(line)

    def output(self) -> str:
        """The server's last lines of output."""
        return "".join(self._lines)

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs (to read its CPU time)."""
        return self._process.pid if self._process is not None else None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def stop(self) -> None:
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
        if self._reader is not None:
            self._reader.join(timeout=5)
        if process.stdout is not None:
            process.stdout.close()
        self._process = None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
