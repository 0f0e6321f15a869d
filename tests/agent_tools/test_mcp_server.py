"""``zhiku mcp`` answers the ``mcp`` SDK's own client, over stdio and over streamable HTTP, in a
separate process reading a real knowledge base."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from tests.agent_tools.test_search_tool import LEAVE, OFFICE
from zhiku import KnowledgeBase

ENV = {"ZHIKU_EMBEDDING_MODEL": "use"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        dataset = kb.create_dataset("handbook", description="leave and offices")
        dataset.add_text("leave.md", LEAVE)
        dataset.add_text("office.md", OFFICE)
    return home


def structured(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def exercise(server: StdioServerParameters | str) -> None:
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"kb_search", "list_datasets"}
        assert tools["kb_search"].input_schema["properties"]["max_chars"]["minimum"] == 40

        listed = structured(await client.call_tool("list_datasets", {}))
        assert [d["name"] for d in listed["result"]] == ["handbook"]
        assert listed["result"][0]["documents"] == 2

        found = structured(await client.call_tool("kb_search", {"query": "年假怎么申请", "max_chars": 40}))
        assert found["total_chars"] <= 40
        assert found["snippets"][0]["document_name"] == "leave.md"
        assert found["snippets"][0]["text"].endswith("…")

        refused = await client.call_tool("kb_search", {"query": "x", "top_k": 0})
        assert refused.is_error and "top_k" in str(refused.content)


def test_stdio(home: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "zhiku.cli", "--home", str(home), "mcp"],
        env={**os.environ, **ENV},
    )
    anyio.run(exercise, params)


@pytest.fixture
def http_server(home: Path) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "zhiku.cli",
            "--home",
            str(home),
            "mcp",
            "--transport",
            "streamable-http",
            "--port",
            str(port),
        ],
        env={**os.environ, **ENV},
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "the MCP server exited"
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the MCP server did not start"
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_streamable_http(http_server: str) -> None:
    anyio.run(exercise, http_server)


def test_stdio_beside_a_running_server_goes_through_its_api(home: Path) -> None:
    """The server owns the embedded stores; the MCP server asks it instead of opening them."""
    from tests.api.test_server import Server

    server = Server(home)
    try:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "zhiku.cli", "--home", str(home), "mcp"],
            env={**os.environ, **ENV},
        )
        anyio.run(exercise, params)
        assert server.process.poll() is None
    finally:
        server.stop()
    assert server.process.returncode == 0


class RawStdioClient:
    """``zhiku mcp`` over stdio, spoken to line by line as a client's transport does. Lines are
    read in a thread, so a message that never comes fails the test instead of hanging it."""

    #: Seconds to wait for any one answer: only a bound on a hang, far above the time it takes.
    PATIENCE = 120.0

    def __init__(self, home: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "zhiku.cli", "--home", str(home), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, **ENV},
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=self.PATIENCE)
        except queue.Empty:
            raise AssertionError("the MCP server sent no answer") from None
        assert line, "the MCP server closed its output"
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, id_: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.send(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}))
        return self.receive()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


#: Lines that are no JSON-RPC message, with the error code and the id (null unless the line is an
#: object carrying a usable one) of their answer.
MALFORMED = [
    ("{not json", -32700, None),
    ('{"jsonrpc": "2.0", "id": 7, "method": ', -32700, None),
    ('{"jsonrpc": "2.0", "id": 8}', -32600, 8),
    ('{"jsonrpc": "1.0", "id": 9, "method": "ping"}', -32600, 9),
    ('{"jsonrpc": "2.0", "id": "x", "method": 5}', -32600, "x"),
    ("[]", -32600, None),
    ("42", -32600, None),
    ('"ping"', -32600, None),
]


def test_stdio_answers_malformed_json_rpc_with_its_errors(home: Path) -> None:
    """The SDK's transport dropped such lines without a word: a client waited for an answer
    that never came. Each now gets JSON-RPC's parse error or invalid request, and the session
    carries on."""
    client = RawStdioClient(home)
    try:
        info = {"name": "raw", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
        assert "result" in client.request(1, "initialize", params)
        client.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for number, (line, code, id_) in enumerate(MALFORMED, start=100):
            client.send(line)
            error = client.receive()
            assert error["jsonrpc"] == "2.0" and error["id"] == id_, (line, error)
            assert error["error"]["code"] == code, (line, error)
            assert error["error"]["message"], error
            assert client.request(number, "ping") == {"jsonrpc": "2.0", "id": number, "result": {}}
        tools = client.request(200, "tools/list")["result"]["tools"]
        assert {tool["name"] for tool in tools} == {"kb_search", "list_datasets"}
    finally:
        client.close()


def test_streamable_http_answers_malformed_json_rpc_with_a_parse_error(http_server: str) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    response = httpx.post(http_server, content=b"{not json", headers=headers, timeout=30)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700
