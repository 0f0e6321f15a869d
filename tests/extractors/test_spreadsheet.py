from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.fixtures.bounded import CountingToken, bounded
from tests.fixtures.make_files import make_csv, make_xls, make_xlsx
from zhiku.core.cancellation import cancellable
from zhiku.core.errors import Cancelled, ExtractionError
from zhiku.extractors.budget import ParseBudget, TooCostly, parse_budget
from zhiku.extractors.spreadsheet import CsvExtractor, XlsExtractor, XlsxExtractor

ROWS = [["名称", "价格", "备注"], ["苹果", 5, "新鲜"], ["香蕉", 3.5, ""], ["", "", ""], ["梨", 4, "本地"]]


def test_csv_in_gbk_one_document_per_row(tmp_path: Path) -> None:
    path = make_csv(tmp_path / "fruit.csv", ROWS, encoding="gbk")
    docs = CsvExtractor().extract(path, name="fruit.csv")
    assert [d.text for d in docs] == [
        "名称: 苹果\n价格: 5\n备注: 新鲜",
        "名称: 香蕉\n价格: 3.5",
        "名称: 梨\n价格: 4\n备注: 本地",
    ]
    assert [d.metadata for d in docs] == [
        {"source": "fruit.csv", "row": 2},
        {"source": "fruit.csv", "row": 3},
        {"source": "fruit.csv", "row": 5},
    ]


def test_tsv_and_missing_header_cells(tmp_path: Path) -> None:
    path = make_csv(tmp_path / "t.tsv", [["问题", ""], ["什么是知库？", "一个知识库引擎"]], delimiter="\t")
    [doc] = CsvExtractor().extract(path, name="t.tsv")
    assert doc.text == "问题: 什么是知库？\ncolumn 2: 一个知识库引擎"


def test_xlsx_sheets_rows_and_dates(tmp_path: Path) -> None:
    path = make_xlsx(
        tmp_path / "book.xlsx",
        {
            "价格表": [["名称", "价格", "日期"], ["苹果", 5, dt.datetime(2024, 1, 2)]],
            "空表": [],
            "说明": [["只有表头", "没有数据"]],
        },
    )
    docs = XlsxExtractor().extract(path, name="book.xlsx")
    assert [(d.text, d.metadata) for d in docs] == [
        ("名称: 苹果\n价格: 5\n日期: 2024-01-02", {"source": "book.xlsx", "sheet": "价格表", "row": 2}),
        ("只有表头 | 没有数据", {"source": "book.xlsx", "sheet": "说明", "row": 1}),
    ]


def test_xls(tmp_path: Path) -> None:
    path = make_xls(
        tmp_path / "old.xls",
        {"表一": [["名称", "数量", "日期"], ["苹果", 12, dt.date(2023, 5, 6)], ["梨", 0.25, None]]},
    )
    docs = XlsExtractor().extract(path, name="old.xls")
    assert [d.text for d in docs] == ["名称: 苹果\n数量: 12\n日期: 2023-05-06", "名称: 梨\n数量: 0.25"]
    assert docs[1].metadata == {"source": "old.xls", "sheet": "表一", "row": 3}


def test_corrupt_workbooks(tmp_path: Path) -> None:
    with pytest.raises(ExtractionError, match=r"b\.xlsx: invalid XLSX"):
        XlsxExtractor().extract(b"PK\x03\x04garbage", name="b.xlsx")
    with pytest.raises(ExtractionError, match=r"b\.xls: invalid XLS"):
        XlsExtractor().extract(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100, name="b.xls")


def _workbook(path: Path, rows: list[list[object]], far: dict[str, object] | None = None) -> Path:
    """An xlsx of ``rows``, plus cells placed far away (``far``: coordinate → value), so its
    ``dimension`` claims the whole sheet."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    for coordinate, value in (far or {}).items():
        sheet[coordinate] = value
    book.save(path)
    return path


def _dimension(path: Path) -> str:
    import re
    import zipfile

    with zipfile.ZipFile(path) as archive:
        xml = archive.read("xl/worksheets/sheet1.xml").decode()
    match = re.search(r'<dimension ref="([^"]+)"', xml)
    assert match is not None
    return match.group(1)


def test_xlsx_claiming_the_whole_sheet_reads_only_its_cells(tmp_path: Path) -> None:
    """A 1.5 KB workbook whose dimension is A1:XFD1048576 with one far cell was read as a
    million rows of 16,384 empty cells (minutes, gigabytes); only the cells it holds count."""
    path = _workbook(tmp_path / "far.xlsx", [["名称", "价格"], ["苹果", 5]], {"XFD1048576": "远"})
    assert _dimension(path) == "A1:XFD1048576" and path.stat().st_size < 10_000
    docs = bounded(lambda: XlsxExtractor().extract(path, name="far.xlsx"))
    assert [(d.text, d.metadata["row"]) for d in docs] == [
        ("名称: 苹果\n价格: 5", 2),
        ("column 16384: 远", 1048576),
    ]


def test_xlsx_with_a_far_cell_in_many_rows_stays_sparse(tmp_path: Path) -> None:
    """Each row holding a cell at column XFD must not become a row of 16,384 values."""
    rows: list[list[object]] = [["名称"]]
    far = {f"XFD{n}": f"v{n}" for n in range(2, 20_002)}
    path = _workbook(tmp_path / "wide.xlsx", rows, far)
    docs = bounded(lambda: XlsxExtractor().extract(path, name="wide.xlsx"))
    assert len(docs) == 20_000 and docs[-1].text == "column 16384: v20001"


def test_cells_over_the_budget_are_refused_naming_the_setting(tmp_path: Path) -> None:
    rows: list[list[object]] = [[f"{r}-{c}" for c in range(10)] for r in range(200)]
    xlsx = _workbook(tmp_path / "many.xlsx", rows)
    xls = make_xls(tmp_path / "many.xls", {"s": rows})
    csv_file = make_csv(tmp_path / "many.csv", rows)
    cases = ((XlsxExtractor(), xlsx), (XlsExtractor(), xls), (CsvExtractor(), csv_file))
    for extractor, path in cases:
        with parse_budget(ParseBudget(max_cells=1_000)), pytest.raises(TooCostly) as caught:
            extractor.extract(path, name=path.name)
        assert "over 1,000 cells" in str(caught.value) and "parse_max_cells" in str(caught.value)
        assert len(extractor.extract(path, name=path.name)) == 199  # the default budget holds it


@pytest.mark.parametrize("kind", ["xlsx", "xls", "csv"])
def test_reading_rows_reaches_checkpoints(tmp_path: Path, kind: str) -> None:
    """A paused or deleted document stops inside the row loop, not after the whole sheet."""
    rows: list[list[object]] = [["名称", "价格"], *([f"茶{n}", n] for n in range(5_000))]
    if kind == "xlsx":
        path, extractor = _workbook(tmp_path / "r.xlsx", rows), XlsxExtractor()
    elif kind == "xls":
        path, extractor = make_xls(tmp_path / "r.xls", {"s": rows}), XlsExtractor()
    else:
        path, extractor = make_csv(tmp_path / "r.csv", rows), CsvExtractor()
    token = CountingToken(after=3)
    with cancellable(token), pytest.raises(Cancelled):
        extractor.extract(path, name=path.name)
    assert token.checks == 3
