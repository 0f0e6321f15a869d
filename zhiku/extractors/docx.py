"""Word ``.docx`` files through python-docx: paragraphs and tables in reading order.

Headings (styles "Heading N", "Title", or an outline level) are written as Markdown heading
lines (``## Install``) so that structure reads the same as in Markdown files, and the file is
cut into one Document per top section like Markdown (see :mod:`zhiku.extractors.sections`).
A table row is one line with its cells joined by ``" | "``. Headers, footers and comments are
left out: they repeat on every page and would crowd out the body in retrieval.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import TYPE_CHECKING

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Document
from zhiku.extractors.base import make_document, parser_errors, read_bytes, require_text
from zhiku.extractors.sections import DEFAULT_SPLIT_LEVEL, Block, group_sections

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from docx.table import Table
    from docx.text.paragraph import Paragraph

_HEADING_STYLE = re.compile(r"(?:heading|标题)\s*([1-9])", re.IGNORECASE)


class DocxExtractor:
    """``split_level``: headings of this level or above start a new Document."""

    def __init__(self, split_level: int = DEFAULT_SPLIT_LEVEL) -> None:
        self.split_level = split_level

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        import docx

        data = read_bytes(source, name)
        with parser_errors(name, "DOCX"):
            document = docx.Document(io.BytesIO(data))
            levels = _StyleLevels(document)
            blocks = []
            for item in document.iter_inner_content():
                checkpoint()  # a file of a million empty paragraphs must stay stoppable
                blocks.append(_block(item, levels))
            title = (document.core_properties.title or "").strip() or None
        if title is None:
            title = next((b.heading_text for b in blocks if b.heading_level == 1), None)
        documents = [
            make_document(s.text, name, title=title, headings=s.headings)
            for s in group_sections(blocks, self.split_level)
        ]
        return require_text(documents, name)


class _StyleLevels:
    """Heading level of each paragraph style, looked up once per style id: the work per paragraph
    stays constant (python-docx's ``paragraph.style`` searches the styles part every time)."""

    def __init__(self, document: DocxDocument) -> None:
        self._names = {
            style.style_id: (style.name or "").strip() for style in document.styles if style.style_id
        }
        self._levels: dict[str | None, int | None] = {}

    def level(self, style_id: str | None) -> int | None:
        if style_id not in self._levels:
            self._levels[style_id] = _style_level(self._names.get(style_id or "", ""))
        return self._levels[style_id]


def _style_level(style_name: str) -> int | None:
    match = _HEADING_STYLE.fullmatch(style_name)
    if match:
        return int(match.group(1))
    return 1 if style_name.lower() == "title" else None


def _block(item: Paragraph | Table, levels: _StyleLevels) -> Block:
    from docx.table import Table

    if isinstance(item, Table):
        return Block(_table_text(item))
    text = item.text.strip()
    if not text:
        return Block("")
    level = _heading_level(item, levels)
    if level is None:
        return Block(text)
    return Block(f"{'#' * min(level, 6)} {text}", level, text)


def _heading_level(paragraph: Paragraph, levels: _StyleLevels) -> int | None:
    level = levels.level(paragraph._p.style)
    if level is not None:
        return level
    outline = paragraph._p.xpath("./w:pPr/w:outlineLvl/@w:val")
    if outline and str(outline[0]).isdigit() and int(outline[0]) < 9:
        return int(outline[0]) + 1
    return None


def _table_text(table: Table) -> str:
    """One line per row, the cells the row holds joined by ``" | "``.

    A cell's span is a number the file states (``gridSpan``, ``gridBefore``), and python-docx's
    ``row.cells`` yields the cell once per column it claims to span: 2,147,483,647 for one cell
    of a 4 KB file, with no step where the parse could stop. Here a span only moves the column
    offset, and a cell continuing a vertical merge repeats the text of the cell above it at the
    same offset (so a row stays one whole fact), found in a dictionary, not by searching the
    rows above again for each cell.
    """
    from docx.table import _Cell

    lines = []
    above: dict[int, str] = {}
    for tr in table._tbl.tr_lst:
        checkpoint()  # a table of many rows is a long loop of its own
        offset = tr.grid_before
        row: dict[int, str] = {}
        for tc in tr.tc_lst:
            checkpoint()
            if tc.vMerge == "continue":
                row[offset] = above.get(offset, "")
            else:
                row[offset] = " ".join(_Cell(tc, table).text.split())
            offset += tc.grid_span
        above = row
        if any(row.values()):
            lines.append(" | ".join(row.values()))
    return "\n".join(lines)
