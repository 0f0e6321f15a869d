"""``zhiku mcp``: ``kb_search`` and ``list_datasets`` for any MCP client (stdio or streamable HTTP),
served with the official ``mcp`` SDK.

Over stdio, a line that is no JSON-RPC message is answered with JSON-RPC 2.0's parse error
(-32700) or invalid request (-32600): the SDK's stdio transport hands such a line to the session,
which drops it without a reply, and the client waits for an answer that never comes. (The SDK's
streamable HTTP transport answers them itself.)

The server reads the knowledge base itself, or — when ``zhiku serve`` already owns the data
directory's embedded stores — asks that server over its HTTP API, as the CLI does.
"""

from __future__ import annotations

import contextvars
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Annotated, Any, Literal, Protocol

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import Field, ValidationError

from zhiku.agent_tools.search_tool import KB_SEARCH_TOOL, KbSearchArgs, SearchResult, kb_search
from zhiku.core.documents import Hit

Transport = Literal["stdio", "streamable-http"]

INSTRUCTIONS = (
    "Search a zhiku knowledge base. Call list_datasets to see what it holds, then kb_search; "
    "cite the document_name and position of the snippets you use."
)


class Backend(Protocol):
    def search(self, args: KbSearchArgs) -> SearchResult: ...

    def datasets(self) -> list[dict[str, Any]]: ...


class LocalBackend:
    """A knowledge base opened by this process."""

    def __init__(self, kb: Any) -> None:
        self._kb = kb

    def search(self, args: KbSearchArgs) -> SearchResult:
        def run(query: str, datasets: Any, top_k: int) -> list[Hit]:
            return list(self._kb.retrieve(query, datasets=datasets, top_k=top_k).hits)

        return kb_search(run, args)

    def datasets(self) -> list[dict[str, Any]]:
        out = []
        for dataset in self._kb.datasets():
            stats = dataset.stats()
            out.append(
                {
                    "id": dataset.id,
                    "name": dataset.name,
                    "description": dataset.description,
                    "documents": stats["documents"],
                }
            )
        return out


class RemoteBackend:
    """The ``zhiku serve`` that owns the data directory, over its HTTP API."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def search(self, args: KbSearchArgs) -> SearchResult:
        return SearchResult.model_validate(self._client.kb_search(args.model_dump(exclude_none=True)))

    def datasets(self) -> list[dict[str, Any]]:
        return [
            {
                "id": d["id"],
                "name": d["name"],
                "description": d.get("description") or "",
                "documents": d.get("document_count", 0),
            }
            for d in self._client.datasets()
        ]


def _field(name: str) -> Any:
    """The argument's constraints and description, shared with :class:`KbSearchArgs`."""
    info = KbSearchArgs.model_fields[name]
    return Field(description=info.description, **_bounds(info.metadata))


def _bounds(metadata: list[Any]) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    for item in metadata:
        for key in ("ge", "le", "min_length", "max_length"):
            value = getattr(item, key, None)
            if value is not None:
                bounds[key] = value
    return bounds


def malformed_reply(error: Exception) -> JSONRPCError | None:
    """JSON-RPC 2.0's answer to a line the transport could not read as a message: -32700 when it
    is not JSON, else -32600 (with the request's id when it has a usable one). None for a blank
    line, which is no message at all."""
    if not isinstance(error, ValidationError):
        return JSONRPCError(
            jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message="Invalid Request")
        )
    problems = error.errors(include_url=False)
    if problems and problems[0]["type"] == "json_invalid":
        raw = problems[0].get("input")
        if isinstance(raw, str | bytes) and not raw.strip():
            return None
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error"))
    request_id: str | int | None = None
    for problem in problems:
        value = problem.get("input")
        if isinstance(value, dict):
            found = value.get("id")
            if isinstance(found, str | int) and not isinstance(found, bool):
                request_id = found
                break
    message = "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=INVALID_REQUEST, message=message))


class _AnsweringReadStream:
    """The stdio transport's read stream, less what it could not read: each such item is
    answered through the write stream (:func:`malformed_reply`) and the next one is read."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last item, as the SDK reads it from its own stream."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item  # type: ignore[no-any-return]
            reply = malformed_reply(item)
            if reply is not None:
                await self._write.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _AnsweringReadStream:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _AnsweringReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


class _ZhikuMCPServer(MCPServer):
    """The SDK's server, its stdio transport answering malformed lines (see the module's text)."""

    async def run_stdio_async(self) -> None:
        async with stdio_server() as (read_stream, write_stream):
            lowlevel = self._lowlevel_server
            answering = _AnsweringReadStream(read_stream, write_stream)
            await lowlevel.run(answering, write_stream, lowlevel.create_initialization_options())


def build_server(backend: Backend) -> MCPServer:
    """An MCP server whose tools call ``backend``."""
    server: MCPServer = _ZhikuMCPServer("zhiku", instructions=INSTRUCTIONS)

    @server.tool(name="kb_search", description=KB_SEARCH_TOOL["function"]["description"])
    def kb_search_tool(
        query: Annotated[str, _field("query")],
        datasets: Annotated[list[str] | None, _field("datasets")] = None,
        top_k: Annotated[int, _field("top_k")] = 5,
        min_score: Annotated[float, _field("min_score")] = 0.0,
        max_chars: Annotated[int, _field("max_chars")] = 2000,
    ) -> SearchResult:
        """Scored passages from the knowledge base, within ``max_chars`` in total."""
        args = KbSearchArgs(
            query=query, datasets=datasets, top_k=top_k, min_score=min_score, max_chars=max_chars
        )
        return backend.search(args)

    @server.tool(name="list_datasets", description="The datasets of the knowledge base.")
    def list_datasets() -> list[dict[str, Any]]:
        return backend.datasets()

    return server


def run_mcp(home: Path | None, transport: Transport, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    from zhiku.client import ServerClient, running_server
    from zhiku.knowledge_base.knowledge_base import KnowledgeBase

    with ExitStack() as stack:
        owner = running_server(home)
        backend: Backend
        if owner is not None:
            backend = RemoteBackend(stack.enter_context(ServerClient(owner)))
        else:
            backend = LocalBackend(stack.enter_context(KnowledgeBase.open(home)))
        server = build_server(backend)
        if transport == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host=host, port=port)
