"""The built site must work offline: no page or stylesheet may load a script, stylesheet, font
or image from another site (a CDN, Google Fonts). Links a reader follows are fine."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

#: ``<link rel=...>`` values that make a browser fetch the target
_FETCHED_LINKS = {"stylesheet", "preload", "modulepreload", "icon", "preconnect", "dns-prefetch", "manifest"}
_REMOTE = re.compile(r"^(?:https?:)?//", re.I)
_CSS_URL = re.compile(r"""(?:@import\s+|url\()\s*["']?((?:https?:)?//[^"')\s]+)""", re.I)


class _Fetches(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.remote: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "link" and not _FETCHED_LINKS & set(values.get("rel", "").lower().split()):
            return
        if tag in {"script", "img", "iframe", "source", "audio", "video", "embed", "link"}:
            for attribute in ("src", "href", "srcset"):
                if _REMOTE.match(values.get(attribute, "").strip()):
                    self.remote.append(f"<{tag} {attribute}={values[attribute]}>")
        style = values.get("style", "")
        self.remote += _CSS_URL.findall(style)


def remote_fetches(site: Path) -> list[str]:
    """``file: what`` for everything in the built ``site`` that a browser would fetch remotely."""
    found = []
    for page in sorted(site.rglob("*.html")):
        parser = _Fetches()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        found += [f"{page.relative_to(site)}: {fetch}" for fetch in parser.remote]
    for sheet in sorted(site.rglob("*.css")):
        text = sheet.read_text(encoding="utf-8", errors="replace")
        found += [f"{sheet.relative_to(site)}: {url}" for url in _CSS_URL.findall(text)]
    return found
