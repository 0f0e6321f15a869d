"""Tables: CSV/TSV (any common encoding), XLSX (openpyxl) and XLS (xlrd).

The first non-empty row of each sheet is the header. Every further row becomes one Document
whose text is one ``header: value`` line per non-empty cell, with ``row`` (1-based, the number a
spreadsheet program shows; the header is usually row 1) and, for workbooks, ``sheet``.

Why one Document per row: a row is one record (a product, a FAQ entry, a contact). Writing the
headers into it makes the record understandable on its own, so a retrieved segment answers
"what is the price of X" without the header row, and the splitter never glues half of one record
to half of the next. A sheet with only a header row yields that row as its one Document.

Only the cells a file holds are read: a workbook's ``dimension`` (or a cell placed at XFD1048576)
may claim seventeen billion cells in a 1.5 KB file, so rows are kept sparse — the non-empty
cells and their columns — and missing rows are never made. The cells read count against the
parse budget (setting ``parse_max_cells``), and the row loops reach a
:func:`~zhiku.core.cancellation.checkpoint` every few hundred rows.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Document
from zhiku.extractors.base import make_document, parser_errors, read_bytes, require_text
from zhiku.extractors.budget import TooCostly, current_budget
from zhiku.extractors.encoding import decode_text

_DELIMITERS = ",\t;|"
#: Rows (or cells, in one long row) between two checkpoints.
_ROWS_PER_CHECKPOINT = 256

#: A row as read: its 1-based number and its non-empty cells as ``(0-based column, text)``.
SparseRow = tuple[int, list[tuple[int, str]]]


class CellCounter:
    """Counts the cells a file holds against the budget's ``max_cells``; past it, TooCostly."""

    def __init__(self, name: str, fmt: str) -> None:
        self.name, self.format = name, fmt
        self.limit = current_budget().max_cells
        self.cells = 0

    def add(self, cells: int) -> None:
        self.cells += cells
        if self.cells > self.limit:
            raise TooCostly(
                self.name,
                self.format,
                f"over {self.limit:,} cells, the limit set by parse_max_cells",
            )


class CsvExtractor:
    """``delimiter`` None: sniffed from the first lines (comma, tab, semicolon or bar)."""

    def __init__(self, delimiter: str | None = None) -> None:
        self.delimiter = delimiter

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        text, _ = decode_text(read_bytes(source, name), name)
        delimiter = self.delimiter or _sniff_delimiter(text, name)
        counter = CellCounter(name, "csv")
        with parser_errors(name, "CSV"):
            reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
            documents = sparse_rows_to_documents(_dense(enumerate(reader, start=1), counter), name)
        return require_text(documents, name, "no rows")


class XlsxExtractor:
    """Every worksheet; formula cells give the value Excel last saved (empty if never computed).

    The sheet's own ``dimension`` is not used: openpyxl's ``iter_rows`` pads every row to it
    and yields each missing row, which is what let one far cell pin a thread for minutes."""

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        import openpyxl

        data = read_bytes(source, name)
        documents: list[Document] = []
        counter = CellCounter(name, "xlsx")
        with parser_errors(name, "XLSX"):
            book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
            try:
                for sheet in book.worksheets:
                    rows = _xlsx_rows(sheet, counter)
                    documents += sparse_rows_to_documents(rows, name, sheet=sheet.title)
            finally:
                book.close()
        return require_text(documents, name, "no rows")


def _xlsx_rows(sheet: Any, counter: CellCounter) -> Iterator[SparseRow]:
    """The rows a read-only worksheet's XML holds, each with only its cells, as they stream.

    This is openpyxl's own streaming parser, set up as ``ReadOnlyWorksheet`` sets it up for
    ``iter_rows``, without the padding to the claimed dimension."""
    from openpyxl.worksheet._reader import WorkSheetParser

    book = sheet.parent
    with sheet._get_source() as stream:
        parser = WorkSheetParser(
            stream,
            sheet._shared_strings,
            data_only=book.data_only,
            epoch=book.epoch,
            date_formats=book._date_formats,
            timedelta_formats=book._timedelta_formats,
        )
        for count, (number, cells) in enumerate(parser.parse()):
            if count % _ROWS_PER_CHECKPOINT == 0:
                checkpoint()
            counter.add(len(cells))
            values = sorted((cell["column"] - 1, cell_text(cell["value"])) for cell in cells)
            yield number, [(column, text) for column, text in values if text]


class XlsExtractor:
    """Legacy Excel 97-2003 workbooks."""

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        import xlrd

        data = read_bytes(source, name)
        documents: list[Document] = []
        counter = CellCounter(name, "xls")
        with parser_errors(name, "XLS"):
            # ragged rows: each row as long as its last cell, not padded to the widest row
            book = xlrd.open_workbook(file_contents=data, on_demand=True, ragged_rows=True)
            try:
                for sheet in book.sheets():
                    numbered = (
                        (r + 1, [_xls_cell(cell, book.datemode) for cell in sheet.row(r)])
                        for r in range(sheet.nrows)
                    )
                    rows = _dense(numbered, counter)
                    documents += sparse_rows_to_documents(rows, name, sheet=sheet.name)
            finally:
                book.release_resources()
        return require_text(documents, name, "no rows")


def rows_to_documents(
    rows: Iterable[tuple[int, list[str]]], name: str, sheet: str | None = None
) -> list[Document]:
    """One Document per data row of ``(row_number, cell_texts)``; see the module docstring."""
    return sparse_rows_to_documents(_dense(rows, None), name, sheet)


def sparse_rows_to_documents(
    rows: Iterable[SparseRow], name: str, sheet: str | None = None
) -> list[Document]:
    """One Document per data row of ``(row_number, [(column, text), ...])``, the cells
    non-empty; the first row with a cell is the header. Work follows the cells, not the width."""
    documents: list[Document] = []
    header: dict[int, str] | None = None
    header_row = 0
    for count, (number, cells) in enumerate(rows):
        if count % _ROWS_PER_CHECKPOINT == 0:
            checkpoint()
        if not cells:
            continue
        if header is None:
            header, header_row = dict(cells), number
            continue
        lines = [f"{_column_name(header, column)}: {value}" for column, value in cells]
        documents.append(make_document("\n".join(lines), name, sheet=sheet, row=number))
    if header is not None and not documents:
        text = " | ".join(header[column] for column in sorted(header))
        documents.append(make_document(text, name, sheet=sheet, row=header_row))
    return documents


def _dense(rows: Iterable[tuple[int, Sequence[str]]], counter: CellCounter | None) -> Iterator[SparseRow]:
    """Rows of every cell's text as sparse rows (stripped, empty cells left out)."""
    for number, values in rows:
        if counter is not None:
            counter.add(len(values))
        cells = [(column, value.strip()) for column, value in enumerate(values)]
        yield number, [(column, value) for column, value in cells if value]


def cell_text(value: Any) -> str:
    """A cell as text: whole floats without ``.0``, dates without a zero time, no padding."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.15g}"
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value).strip()


def _xls_cell(cell: Any, datemode: int) -> str:
    import xlrd

    if cell.ctype == xlrd.XL_CELL_DATE:
        return cell_text(xlrd.xldate.xldate_as_datetime(cell.value, datemode))
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return cell_text(bool(cell.value))
    if cell.ctype in (xlrd.XL_CELL_ERROR, xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return ""
    return cell_text(cell.value)


def _column_name(header: dict[int, str], column: int) -> str:
    return header.get(column) or f"column {column + 1}"


def _sniff_delimiter(text: str, name: str) -> str:
    if name.lower().endswith(".tsv"):
        return "\t"
    sample = "\n".join(text.splitlines()[:20])
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        return ","
