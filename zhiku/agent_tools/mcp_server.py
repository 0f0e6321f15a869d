"""``zhiku mcp``: ``kb_search`` and ``list_datasets`` for any MCP client (stdio or streamable HTTP),
served with the official ``mcp`` SDK.

The server reads the knowledge base itself, or — when ``zhiku serve`` already owns the data
directory's embedded stores — asks that server over its HTTP API, as the CLI does.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from mcp.server.mcpserver import MCPServer
from pydantic import Field

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


def build_server(backend: Backend) -> MCPServer:
    """An MCP server whose tools call ``backend``."""
    server: MCPServer = MCPServer("zhiku", instructions=INSTRUCTIONS)

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
    from zhiku.cli.remote import ServerClient, running_server
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
