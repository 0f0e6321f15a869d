"""Text from the code made safe for Markdown: help strings and comments use ``code`` spans and
words in angle brackets (``<home>``), which Markdown would take for HTML."""

from __future__ import annotations

import re

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj):(?=`)")


def escape_text(text: str) -> str:
    """``text`` with Markdown's special characters escaped outside code spans; RST's double
    backticks become Markdown's single ones, and its roles (``:class:``) are dropped."""
    text = _ROLE.sub("", text)
    out: list[str] = []
    position = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_escape_plain(text[position : match.start()]))
        out.append(code(match.group(2).strip()))
        position = match.end()
    out.append(_escape_plain(text[position:]))
    return "".join(out)


def _escape_plain(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
        .replace("*", "\\*")
        .replace("_", "\\_")
    )


def code(text: str) -> str:
    """``text`` as one inline code span, whatever backticks it holds."""
    fence = "`"
    while fence in text:
        fence += "`"
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def cell(text: str) -> str:
    """One line of a table cell: newlines joined, Markdown escaped."""
    return escape_text(" ".join(text.split()))


def anchor(text: str) -> str:
    """A heading id made of the text's words (stable, ASCII)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
