"""Tables: CSV/TSV (any common encoding), XLSX (openpyxl) and XLS (xlrd).

The first non-empty row of each sheet is the header. Every further row becomes one Document
whose text is one ``header: value`` line per non-empty cell, with ``row`` (1-based, the number a
spreadsheet program shows; the header is usually row 1) and, for workbooks, ``sheet``.

Why one Document per row: a row is one record (a product, a FAQ entry, a contact). Writing the
headers into it makes the record understandable on its own, so a retrieved segment answers
"what is the price of X" without the header row, and the splitter never glues half of one record
to half of the next. A sheet with only a header row yields that row as its one Document.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from zhiku.core.documents import Document
from zhiku.extractors.base import make_document, parser_errors, read_bytes, require_text
from zhiku.extractors.encoding import decode_text

_DELIMITERS = ",\t;|"


class CsvExtractor:
    """``delimiter`` None: sniffed from the first lines (comma, tab, semicolon or bar)."""

    def __init__(self, delimiter: str | None = None) -> None:
        self.delimiter = delimiter

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        text, _ = decode_text(read_bytes(source, name), name)
        delimiter = self.delimiter or _sniff_delimiter(text, name)
        with parser_errors(name, "CSV"):
            rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
        return require_text(rows_to_documents(enumerate(rows, start=1), name), name, "no rows")


class XlsxExtractor:
    """Every worksheet; formula cells give the value Excel last saved (empty if never computed)."""

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        import openpyxl

        data = read_bytes(source, name)
        documents: list[Document] = []
        with parser_errors(name, "XLSX"):
            book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
            try:
                for sheet in book.worksheets:
                    rows = sheet.iter_rows(min_row=1, values_only=True)
                    numbered = ((i, [cell_text(v) for v in row]) for i, row in enumerate(rows, 1))
                    documents += rows_to_documents(numbered, name, sheet=sheet.title)
            finally:
                book.close()
        return require_text(documents, name, "no rows")


class XlsExtractor:
    """Legacy Excel 97-2003 workbooks."""

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        import xlrd

        data = read_bytes(source, name)
        documents: list[Document] = []
        with parser_errors(name, "XLS"):
            book = xlrd.open_workbook(file_contents=data, on_demand=True)
            try:
                for sheet in book.sheets():
                    numbered = (
                        (r + 1, [_xls_cell(cell, book.datemode) for cell in sheet.row(r)])
                        for r in range(sheet.nrows)
                    )
                    documents += rows_to_documents(numbered, name, sheet=sheet.name)
            finally:
                book.release_resources()
        return require_text(documents, name, "no rows")


def rows_to_documents(
    rows: Iterable[tuple[int, list[str]]], name: str, sheet: str | None = None
) -> list[Document]:
    """One Document per data row of ``(row_number, cell_texts)``; see the module docstring."""
    documents: list[Document] = []
    header: list[str] | None = None
    header_row = 0
    for number, values in _non_empty(rows):
        if header is None:
            header, header_row = values, number
            continue
        lines = [f"{_column_name(header, i)}: {value}" for i, value in enumerate(values) if value]
        documents.append(make_document("\n".join(lines), name, sheet=sheet, row=number))
    if header is not None and not documents:
        text = " | ".join(v for v in header if v)
        documents.append(make_document(text, name, sheet=sheet, row=header_row))
    return documents


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


def _non_empty(rows: Iterable[tuple[int, list[str]]]) -> Iterator[tuple[int, list[str]]]:
    for number, values in rows:
        cleaned = [v.strip() for v in values]
        if any(cleaned):
            yield number, cleaned


def _column_name(header: list[str], index: int) -> str:
    if index < len(header) and header[index]:
        return header[index]
    return f"column {index + 1}"


def _sniff_delimiter(text: str, name: str) -> str:
    if name.lower().endswith(".tsv"):
        return "\t"
    sample = "\n".join(text.splitlines()[:20])
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        return ","
