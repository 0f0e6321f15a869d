"""MkDocs hook: renders the generated reference pages while the site builds, and fails the
build if the built site would fetch anything from another site.

A page asks for a generated part with a line ``<!-- reference: NAME -->`` (``cli``,
``http-api``, ``settings``); the hook replaces it with the Markdown made from the code by
:mod:`docs_reference`, the same functions the tests check.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docs_reference import cli, http_api, offline, settings  # beside this file: MkDocs imports it from here
from mkdocs.exceptions import PluginError

_MARKER = re.compile(r"^<!-- reference: ([a-z-]+) -->$", re.M)


def _cli() -> str:
    from zhiku.cli import main

    return cli.render(main)


RENDERERS: dict[str, Callable[[], str]] = {
    "cli": _cli,
    "http-api": lambda: http_api.render(http_api.openapi()),
    "settings": settings.render,
}


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    def replace(match: re.Match[str]) -> str:
        renderer = RENDERERS.get(match.group(1))
        if renderer is None:
            raise ValueError(f"{page.file.src_path}: no generated reference {match.group(1)!r}")
        return renderer()

    return _MARKER.sub(replace, markdown)


def on_post_build(config: Any, **_: Any) -> None:
    remote = offline.remote_fetches(Path(config["site_dir"]))
    if remote:
        listed = "\n".join(remote)
        raise PluginError(f"the site would fetch from other sites (it must work offline):\n{listed}")
