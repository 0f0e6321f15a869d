from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.fixtures.make_files import make_csv, make_xls, make_xlsx
from zhiku.core.errors import ExtractionError
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
