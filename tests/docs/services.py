"""What ``server`` and ``chat-model`` blocks run beside them: ``zhiku serve`` on the page's home,
with an API key for every dataset, and the scripted chat model."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.docs.chat_model import chat_model
from tests.fixtures.openai_server import ScriptedChatServer
from zhiku.core.server_file import read_server_file

#: What pages write for the server, its key and the chat model; blocks get the real ones.
DOCS_SERVER = "http://127.0.0.1:5001"
DOCS_KEY = "zk-your-key"
DOCS_CHAT_MODEL = "http://127.0.0.1:11434/v1"
CHAT_MODEL_NAME = "docs-model"

SERVER_START_TIMEOUT_S = 180.0
SERVER_STOP_TIMEOUT_S = 30.0

BIN = Path(sys.executable).parent


class ServiceFailed(AssertionError):
    pass


@dataclass
class Server:
    """``zhiku serve --port 0`` on ``home``: where it answers (``url``, without ``/v1``) and a key."""

    process: subprocess.Popen[bytes]
    url: str
    key: str
    log: Path

    @classmethod
    def start(cls, home: Path, cwd: Path, env: dict[str, str]) -> Server:
        log = cwd / "server.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [str(BIN / "zhiku"), "serve", "--port", "0"],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while (info := read_server_file(home)) is None or info.pid != process.pid:
            if process.poll() is not None or time.monotonic() > deadline:
                _stop(process)
                raise ServiceFailed(f"zhiku serve did not start:\n{log.read_text(errors='replace')}")
            time.sleep(0.2)
        return cls(process, info.url.removesuffix("/v1"), _full_scope_key(home), log)

    def close(self) -> None:
        _stop(self.process)


def _full_scope_key(home: Path) -> str:
    from zhiku.api.keys import key_store

    with key_store(home) as keys:
        _, secret = keys.create(name="docs examples")
    return secret


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the server then closes its stores), SIGKILL to its process group past the grace."""
    if process.poll() is None:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(SERVER_STOP_TIMEOUT_S)
    kill_group(process.pid)
    process.wait()


def kill_group(pid: int) -> None:
    """SIGKILL to the process group ``pid`` leads (started with ``start_new_session``)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


class ChatModel:
    """The scripted chat model and the settings that point zhiku at it."""

    def __init__(self) -> None:
        self.server: ScriptedChatServer = chat_model()

    @property
    def env(self) -> dict[str, str]:
        return {
            "ZHIKU_LLM_BASE_URL": self.server.base_url,
            "ZHIKU_LLM_MODEL": CHAT_MODEL_NAME,
            "ZHIKU_LLM_API_KEY": "sk-docs-examples",
        }

    def close(self) -> None:
        self.server.close()
        if self.server.errors:
            raise ServiceFailed("the scripted chat model raised:\n" + "\n".join(self.server.errors))
