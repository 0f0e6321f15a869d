"""Runs the code blocks of one Markdown page as CONTRIBUTING.md says ("Documentation").

The page gets a fresh directory holding a copy of the demo corpus in ``corpus/`` and a home
(``ZHIKU_HOME``) inside it. ``python`` blocks run in order in one namespace (one process, see
:mod:`tests.docs.python_worker`), ``bash`` blocks as ``bash -euo pipefail`` scripts, ``toml``
blocks must validate as settings. Every block is bounded in time (:data:`BLOCK_TIMEOUT_S`). A
block that fails raises :class:`ExampleFailed` naming its file and line, with its output.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

from pydantic import ValidationError

import zhiku
from tests.docs.blocks import Block, read_blocks
from tests.docs.services import BIN, DOCS_CHAT_MODEL, DOCS_KEY, DOCS_SERVER, ChatModel, Server, kill_group
from zhiku.core.config import Settings

BLOCK_TIMEOUT_S = 300.0
SERVER_LOG_LINES = 40
DEMO_CORPUS = Path(zhiku.__file__).parent / "demo" / "corpus"
WORKER = Path(__file__).with_name("python_worker.py")


class ExampleFailed(AssertionError):
    pass


class Page:
    """One page's run: ``with Page(path, workdir) as page: page.run()``."""

    def __init__(self, path: Path, workdir: Path, *, timeout_s: float = BLOCK_TIMEOUT_S) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self.blocks = read_blocks(path)
        self.workdir = workdir
        self.home = workdir / "home"
        self._chat: ChatModel | None = None
        self._server: Server | None = None
        self._python: PythonWorker | None = None
        shutil.copytree(DEMO_CORPUS, workdir / "corpus")

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self) -> None:
        """Every block in order; the first that fails (or is marked wrongly) raises."""
        for block in self.blocks:
            if block.problems:
                raise ExampleFailed(f"{block.where}: " + "; ".join(block.problems))
            if block.runs:
                try:
                    self._run(block)
                except ExampleFailed as failed:
                    raise ExampleFailed(str(failed) + self._server_log(block)) from None

    def _server_log(self, block: Block) -> str:
        """The end of the server's log, for a failed ``server`` block."""
        if "server" not in block.markers or self._server is None:
            return ""
        lines = self._server.log.read_text(errors="replace").splitlines()[-SERVER_LOG_LINES:]
        return "\n--- the end of zhiku serve's log ---\n" + "\n".join(lines)

    def close(self) -> None:
        for running in (self._python, self._server, self._chat):
            if running is not None:
                running.close()
        self._python = self._server = self._chat = None

    # -- one block --------------------------------------------------------------------------

    def _run(self, block: Block) -> None:
        source, extra = self._prepare(block)
        if block.language == "toml":
            _check_settings(block, source, self.home)
        elif block.language == "bash":
            _run_bash(block, source, self.workdir, {**self.env(), **extra}, self.timeout_s)
        else:
            if self._python is None:
                self._python = PythonWorker(self.workdir, self.env(), self.timeout_s)
            self._python.run(block, source, extra)

    def _prepare(self, block: Block) -> tuple[str, dict[str, str]]:
        """The block's text with the services' real addresses, and its extra environment."""
        source, extra = block.text, {}
        if "chat-model" in block.markers:
            chat = self._chat_model()
            source = source.replace(DOCS_CHAT_MODEL, chat.server.base_url)
            extra.update(chat.env)
        if "server" in block.markers:
            if self._server is None:
                env = {**self.env(), **(self._chat.env if self._chat else {})}
                self._server = Server.start(self.home, self.workdir, env)
            source = source.replace(DOCS_SERVER, self._server.url).replace(DOCS_KEY, self._server.key)
        return source, extra

    def _chat_model(self) -> ChatModel:
        if self._chat is None:
            self._chat = ChatModel()
        return self._chat

    def env(self) -> dict[str, str]:
        """This environment without its zhiku settings, the page's home, the venv first on PATH."""
        env = {name: value for name, value in os.environ.items() if not name.startswith("ZHIKU_")}
        env["ZHIKU_HOME"] = str(self.home)
        env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", "")])
        return env


def _failure(block: Block, what: str, output: str) -> ExampleFailed:
    shown = output.strip() or "(no output)"
    return ExampleFailed(f"{block.where}: {block.language} block {what}\n--- its output ---\n{shown}")


def _check_settings(block: Block, source: str, home: Path) -> None:
    try:
        Settings.model_validate({**tomllib.loads(source), "home": home})
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise _failure(block, "is not a valid zhiku.toml", str(exc)) from None


def _run_bash(block: Block, source: str, cwd: Path, env: dict[str, str], timeout_s: float) -> None:
    process = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", source],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: whatever it starts is stopped with it
    )
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(process.pid)
        output, _ = process.communicate()
        late = output.decode(errors="replace")
        raise _failure(block, f"did not finish in {timeout_s:g} s", late) from None
    finally:
        kill_group(process.pid)
    if process.returncode != 0:
        raise _failure(block, f"exited with {process.returncode}", output.decode(errors="replace"))


class PythonWorker:
    """The process running a page's ``python`` blocks (see :mod:`tests.docs.python_worker`)."""

    def __init__(self, cwd: Path, env: dict[str, str], timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.log = cwd / "python-output.log"
        self.log.touch()
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), str(self.log)],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self._answers: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._answers.put(line)
        self._answers.put("")  # the worker is gone

    def run(self, block: Block, source: str, env: dict[str, str]) -> None:
        assert self.process.stdin is not None
        start = self.log.stat().st_size
        request = {"source": source, "filename": str(block.path), "line": block.first_line, "env": env}
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            answer = self._answers.get(timeout=self.timeout_s)
        except (BrokenPipeError, queue.Empty):
            self.close(grace_s=0)
            raise _failure(block, f"did not finish in {self.timeout_s:g} s", self._output(start)) from None
        if not answer:
            raise _failure(block, "ended its Python process", self._output(start))
        result = json.loads(answer)
        if not result["ok"]:
            raise _failure(block, "raised", self._output(start) + "\n" + result["error"])

    def _output(self, start: int) -> str:
        with self.log.open("rb") as log:
            log.seek(start)
            return log.read().decode(errors="replace")

    def close(self, grace_s: float = 30.0) -> None:
        """End of input, then ``grace_s`` for the blocks' objects to close before it is killed."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(grace_s)
        kill_group(self.process.pid)
        self.process.wait()
