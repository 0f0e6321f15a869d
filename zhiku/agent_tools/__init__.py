"""Knowledge search for agents: the ``kb_search`` tool and the MCP server that serves it."""
