"""Markdown files, cut into one Document per top section (see :mod:`zhiku.extractors.sections`).

Headings are found with a real Markdown parser (markdown-it-py), so a ``#`` line inside a code
fence is not a heading and setext headings (``Title`` over ``===``) are. The source text is kept
as written, heading lines included. Metadata: ``headings`` (the section's heading path) and
``title`` (the first level-1 heading of the file, on every section).
"""

from __future__ import annotations

from pathlib import Path

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Document
from zhiku.extractors.base import make_document, read_bytes, require_text
from zhiku.extractors.encoding import decode_text
from zhiku.extractors.sections import DEFAULT_SPLIT_LEVEL, Block, group_sections


class MarkdownExtractor:
    """``split_level``: headings of this level or above (1 = ``#``) start a new Document."""

    def __init__(self, split_level: int = DEFAULT_SPLIT_LEVEL) -> None:
        self.split_level = split_level

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        text, _ = decode_text(read_bytes(source, name), name)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        blocks = markdown_blocks(text)
        title = next((b.heading_text for b in blocks if b.heading_level == 1), None)
        documents = [
            make_document(s.text, name, title=title, headings=s.headings)
            for s in group_sections(blocks, self.split_level)
        ]
        return require_text(documents, name, "no text (only whitespace)")


def markdown_blocks(text: str) -> list[Block]:
    """The text as alternating body and heading blocks; top-level headings only (not in quotes)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    lines = text.split("\n")
    blocks: list[Block] = []
    cursor = 0
    for i, token in enumerate(tokens):
        if i % 512 == 0:
            checkpoint()  # a long file is hundreds of thousands of tokens
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        start, end = token.map
        if start > cursor:
            blocks.append(Block("\n".join(lines[cursor:start])))
        heading_text = " ".join(tokens[i + 1].content.split()) if i + 1 < len(tokens) else ""
        blocks.append(Block("\n".join(lines[start:end]), int(token.tag[1]), heading_text))
        cursor = end
    if cursor < len(lines):
        blocks.append(Block("\n".join(lines[cursor:])))
    return blocks
