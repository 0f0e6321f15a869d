"""HTML pages as readable text lines.

Scripts, styles, ``noscript`` and ``template`` content is dropped. Block elements (paragraphs,
headings, list items, ...) become their own lines, ``<br>`` a line break, and a table row one
line whose cells are joined by ``" | "`` so a row stays one retrievable fact. Whitespace inside a
line is collapsed as a browser would; ``<pre>`` keeps its line breaks. The encoding comes from the page's
own declaration (BOM, ``<meta charset>``) and otherwise from :mod:`zhiku.extractors.encoding`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from zhiku.core.documents import Document
from zhiku.extractors.base import make_document, parser_errors, read_bytes, require_text
from zhiku.extractors.encoding import decode_text

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

_DROPPED = ("script", "style", "noscript", "template", "head", "svg", "iframe", "object")
_BLOCKS = frozenset(
    "address article aside blockquote caption dd details div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody "
    "thead tfoot ul".split()
)
_SPACES = re.compile(r"[ \t\r\n\f\u00a0]+")
_LINE_MARK = "\x00"  # stands for a line break until inline whitespace has been collapsed


class HtmlExtractor:
    """One Document; ``title`` from ``<title>`` or else the first ``<h1>``."""

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        data = read_bytes(source, name)
        with parser_errors(name, "HTML"):
            text, title = html_to_text(_decode_html(data, name))
        return require_text([make_document(text, name, title=title)], name, "no visible text")


def html_to_text(markup: str | bytes) -> tuple[str, str | None]:
    """``(text, title)`` of an HTML document or fragment; see the module docstring for rules."""
    from bs4 import BeautifulSoup, Comment

    soup = BeautifulSoup(markup, "lxml")
    title = _title(soup)
    for tag in soup.find_all(_DROPPED):
        tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    _mark_lines(soup)
    raw = soup.get_text()
    lines = (_SPACES.sub(" ", line).strip() for line in raw.split(_LINE_MARK))
    return "\n".join(line for line in lines if line), title


def _decode_html(data: bytes, name: str) -> str | bytes:
    """Bytes for bs4 when the page declares its encoding, else text decoded by our detector."""
    from bs4.dammit import EncodingDetector

    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return data
    if EncodingDetector.find_declared_encoding(data, is_html=True):
        return data
    return decode_text(data, name)[0]


def _title(soup: BeautifulSoup) -> str | None:
    for tag_name in ("title", "h1"):
        tag = soup.find(tag_name)
        if tag is not None:
            text = _SPACES.sub(" ", tag.get_text()).strip()
            if text:
                return text
    return None


def _mark_lines(soup: BeautifulSoup) -> None:
    """Replace rows, ``<pre>`` and ``<br>`` by marked strings and put marks around blocks."""
    for row in soup.find_all("tr"):
        cells = [_inline(cell) for cell in row.find_all(("td", "th"), recursive=False)]
        row.replace_with(_LINE_MARK + " | ".join(c for c in cells if c) + _LINE_MARK)
    for pre in soup.find_all("pre"):
        pre.replace_with(_LINE_MARK + _LINE_MARK.join(pre.get_text().splitlines()) + _LINE_MARK)
    for br in soup.find_all("br"):
        br.replace_with(_LINE_MARK)
    for block in soup.find_all(_BLOCKS):
        block.insert_before(_LINE_MARK)
        block.insert_after(_LINE_MARK)


def _inline(tag: Tag) -> str:
    return _SPACES.sub(" ", tag.get_text(" ")).strip()
