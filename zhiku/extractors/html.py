"""HTML pages as readable text lines.

Scripts, styles, ``noscript`` and ``template`` content is dropped. Block elements (paragraphs,
headings, list items, ...) become their own lines, ``<br>`` a line break, and a table row one
line whose cells are joined by ``" | "`` so a row stays one retrievable fact. Whitespace inside a
line is collapsed as a browser would; ``<pre>`` keeps its line breaks. The encoding comes from the page's
own declaration (BOM, ``<meta charset>``) and otherwise from :mod:`zhiku.extractors.encoding`.

A page read as a document (:class:`HtmlExtractor`) keeps its structure as Markdown and DOCX files
do: ``<h1>``–``<h6>`` become Markdown heading lines (``## Shipping``) and the page is cut into one
Document per top section with its heading path (see :mod:`zhiku.extractors.sections`), so an FAQ
page's sections can be searched alone and its headings read as what they are. HTML inside other
formats (an e-mail body, an EPUB chapter, a table cell) is read as plain lines
(:func:`html_to_text`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Document
from zhiku.extractors.base import make_document, parser_errors, read_bytes, require_text
from zhiku.extractors.encoding import decode_text
from zhiku.extractors.sections import DEFAULT_SPLIT_LEVEL, Block, group_sections

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
_HEADING_MARK = "\x01"  # opens a heading's line, followed by its level (one digit)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_CLOSE = object()  # on the walk's stack: a block's end, where a line mark goes
_NODES_PER_CHECKPOINT = 512


class HtmlExtractor:
    """One Document per top section (``split_level``: headings of this level or above start
    one); ``title`` from ``<title>`` or else the first ``<h1>``."""

    def __init__(self, split_level: int = DEFAULT_SPLIT_LEVEL) -> None:
        self.split_level = split_level

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        data = read_bytes(source, name)
        with parser_errors(name, "HTML"):
            blocks, title = html_blocks(_decode_html(data, name))
        documents = [
            make_document(s.text, name, title=title, headings=s.headings)
            for s in group_sections(blocks, self.split_level)
        ]
        return require_text(documents, name, "no visible text")


def html_to_text(markup: str | bytes) -> tuple[str, str | None]:
    """``(text, title)`` of an HTML document or fragment, headings as plain lines; see the module
    docstring for rules."""
    lines, title = _lines(markup)
    return "\n".join(line.lstrip(_HEADING_MARK)[1:] if _heading(line) else line for line in lines), title


def html_blocks(markup: str | bytes) -> tuple[list[Block], str | None]:
    """``(blocks, title)``: the page's lines as body blocks and Markdown heading blocks, for
    :func:`~zhiku.extractors.sections.group_sections`."""
    lines, title = _lines(markup)
    blocks: list[Block] = []
    body: list[str] = []
    for line in lines:
        if not _heading(line):
            body.append(line)
            continue
        if body:
            blocks.append(Block("\n".join(body)))
            body = []
        level, text = int(line[1]), line[2:]
        blocks.append(Block(f"{'#' * level} {text}", level, text))
    if body:
        blocks.append(Block("\n".join(body)))
    return blocks, title


def _lines(markup: str | bytes) -> tuple[list[str], str | None]:
    """The page's non-empty lines, each heading's opened by its mark and level, and its title."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "lxml")
    title = _title(soup)
    raw = "".join(_marked_text(soup))
    lines = (_SPACES.sub(" ", line).strip() for line in raw.split(_LINE_MARK))
    return [line for line in lines if line and not (_heading(line) and len(line) == 2)], title


def _heading(line: str) -> bool:
    return line.startswith(_HEADING_MARK)


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


def _marked_text(root: Tag) -> Iterator[str]:
    """The visible text of ``root`` in document order with line marks around blocks, rows,
    ``<pre>`` lines and at ``<br>``.

    One walk over the tree with an explicit stack: no recursion limit, and no editing of the
    tree (inserting a mark beside an element costs bs4 a scan of its siblings, which made a
    chapter of a million empty paragraphs take hours). A checkpoint every few hundred nodes lets
    a paused or deleted document stop within a second.
    """
    from bs4 import Tag

    text_types = _text_types()
    stack: list[object] = [root]
    for visited, node in enumerate(_pop_all(stack)):
        if visited % _NODES_PER_CHECKPOINT == 0:
            checkpoint()
        if node is _CLOSE:
            yield _LINE_MARK
        elif not isinstance(node, Tag):
            if type(node) in text_types:
                yield str(node)
        elif node.name in _DROPPED:
            continue
        elif node.name == "tr":
            cells = [_inline(cell) for cell in node.find_all(("td", "th"), recursive=False)]
            yield _LINE_MARK + " | ".join(c for c in cells if c) + _LINE_MARK
        elif node.name == "pre":
            yield _LINE_MARK + _LINE_MARK.join(_strings(node).splitlines()) + _LINE_MARK
        elif node.name == "br":
            yield _LINE_MARK
        elif node.name in _HEADINGS:
            yield f"{_LINE_MARK}{_HEADING_MARK}{_HEADINGS[node.name]}{_inline(node)}{_LINE_MARK}"
        else:
            if node.name in _BLOCKS:
                yield _LINE_MARK
                stack.append(_CLOSE)
            stack.extend(reversed(node.contents))


def _text_types() -> tuple[type, ...]:
    """Strings that are text (bs4's ``get_text`` default): not comments, doctypes, declarations."""
    from bs4.element import CData, NavigableString

    return (NavigableString, CData)


def _pop_all(stack: list[object]) -> Iterator[object]:
    while stack:
        yield stack.pop()


def _strings(tag: Tag, separator: str = "") -> str:
    """The text of ``tag`` (comments and dropped elements left out) joined by ``separator``."""
    from bs4 import Tag

    text_types = _text_types()
    pieces: list[str] = []
    stack: list[object] = [tag]
    for visited, node in enumerate(_pop_all(stack)):
        if visited % _NODES_PER_CHECKPOINT == 0:
            checkpoint()
        if isinstance(node, Tag):
            if node.name not in _DROPPED:
                stack.extend(reversed(node.contents))
        elif type(node) in text_types:
            pieces.append(str(node))
    return separator.join(pieces)


def _inline(tag: Tag) -> str:
    return _SPACES.sub(" ", _strings(tag, " ")).strip()
