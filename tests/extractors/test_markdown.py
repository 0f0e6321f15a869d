from __future__ import annotations

import pytest

from tests.fixtures.bounded import CountingToken
from zhiku.core.cancellation import cancellable
from zhiku.core.errors import Cancelled
from zhiku.extractors.markdown import MarkdownExtractor

MARKDOWN = """前言：这是一份说明。

# 用户手册

## 安装

运行 `pip install zhiku`。

```bash
# 这不是标题
zhiku serve
```

### Linux

用 apt 安装依赖。

## 使用 Usage

启动服务。

Setext heading
--------------

最后一段。
"""


def test_sections_with_heading_paths() -> None:
    docs = MarkdownExtractor().extract(MARKDOWN.encode(), name="guide.md")
    assert [d.metadata["headings"] for d in docs] == [
        [],
        ["用户手册", "安装"],
        ["用户手册", "使用 Usage"],
        ["用户手册", "Setext heading"],
    ]
    assert all(d.metadata["title"] == "用户手册" and d.metadata["source"] == "guide.md" for d in docs)
    install = docs[1].text
    assert install.startswith("# 用户手册\n\n## 安装")
    assert "# 这不是标题" in install and "### Linux" in install and "用 apt 安装依赖。" in install
    assert docs[0].text == "前言：这是一份说明。"
    assert docs[3].text.endswith("最后一段。")


def test_split_level_one_keeps_h2_inside() -> None:
    docs = MarkdownExtractor(split_level=1).extract(MARKDOWN.encode(), name="guide.md")
    assert len(docs) == 2
    assert docs[1].metadata["headings"] == ["用户手册"]
    assert "## 使用 Usage" in docs[1].text


def test_no_headings_is_one_document() -> None:
    [doc] = MarkdownExtractor().extract("只有一段文字。\n\n第二段。".encode("gbk"), name="n.md")
    assert doc.text == "只有一段文字。\n\n第二段。"
    assert doc.metadata == {"source": "n.md", "headings": []}


def test_a_long_file_reaches_checkpoints() -> None:
    text = "\n\n".join(f"第{n}段。" for n in range(5_000))
    token = CountingToken(after=5)
    with cancellable(token), pytest.raises(Cancelled):
        MarkdownExtractor().extract(text.encode(), name="long.md")
    assert token.checks == 5
