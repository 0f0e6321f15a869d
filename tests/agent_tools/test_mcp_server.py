"""``zhiku mcp`` answers the ``mcp`` SDK's own client, over stdio and over streamable HTTP, in a
separate process reading a real knowledge base."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
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
        command=sys.executable, args=["-m", "zhiku.cli", "--home", str(home), "mcp"],
        env={**os.environ, **ENV},
    )
    anyio.run(exercise, params)


@pytest.fixture
def http_server(home: Path) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "zhiku.cli", "--home", str(home), "mcp", "--transport", "streamable-http",
         "--port", str(port)],
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
            command=sys.executable, args=["-m", "zhiku.cli", "--home", str(home), "mcp"],
        env={**os.environ, **ENV},
        )
        anyio.run(exercise, params)
        assert server.process.poll() is None
    finally:
        server.stop()
    assert server.process.returncode == 0
