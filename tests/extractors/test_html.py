from __future__ import annotations

import pytest

from zhiku.core.errors import ExtractionError
from zhiku.extractors.html import HtmlExtractor, html_to_text

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>产品 价格</title>
<style>body { color: red }</style><script>var secret = "脚本内容";</script></head>
<body>
<noscript>请启用 JavaScript</noscript>
<h1>水果价格表</h1>
<p>以下是今天的
   价格。<br>Prices change daily.</p>
<table>
  <tr><th>名称</th><th>价格</th></tr>
  <tr><td>苹果</td><td>5 元</td></tr>
  <tr><td><b>香蕉</b></td><td>3 元</td></tr>
</table>
<ul><li>新鲜</li><li>本地</li></ul>
<!-- 注释不应出现 -->
</body></html>"""


def test_text_lines_rows_and_dropped_elements() -> None:
    [doc] = HtmlExtractor().extract(PAGE.encode("utf-8"), name="p.html")
    assert doc.text.split("\n") == [
        "# 水果价格表",
        "",
        "以下是今天的 价格。",
        "Prices change daily.",
        "名称 | 价格",
        "苹果 | 5 元",
        "香蕉 | 3 元",
        "新鲜",
        "本地",
    ]
    assert doc.metadata == {"source": "p.html", "title": "产品 价格", "headings": ["水果价格表"]}


def test_declared_and_undeclared_legacy_encodings() -> None:
    declared = '<html><head><meta charset="gbk"></head><body><p>简体中文页面</p></body></html>'
    assert HtmlExtractor().extract(declared.encode("gbk"), name="d.html")[0].text == "简体中文页面"
    bare = "<html><body><h1>标题</h1><p>没有声明编码的页面，内容是中文。</p></body></html>"
    [doc] = HtmlExtractor().extract(bare.encode("gbk"), name="b.html")
    assert doc.text == "# 标题\n\n没有声明编码的页面，内容是中文。"
    assert doc.metadata["title"] == "标题"


def test_page_without_visible_text() -> None:
    with pytest.raises(ExtractionError, match=r"e\.html: no visible text"):
        HtmlExtractor().extract(b"<html><script>x()</script></html>", name="e.html")


FAQ = """<html><body><h1>常见问题</h1><p>欢迎。</p>
<h2>配送</h2><h3>运费是多少？</h3><p>满199元包邮。</p>
<h2>售后 <small>Support</small></h2><h3>怎么保修？</h3><p>联系客服。</p><h4></h4>
</body></html>"""


def test_a_page_is_cut_into_sections_at_its_top_headings() -> None:
    """Like Markdown and DOCX: one Document per section with its heading path, headings written
    as Markdown heading lines (an empty heading dropped)."""
    docs = HtmlExtractor().extract(FAQ.encode("utf-8"), name="faq.html")
    assert [d.metadata["headings"] for d in docs] == [
        ["常见问题"],
        ["常见问题", "配送"],
        ["常见问题", "售后 Support"],
    ]
    assert docs[1].text == "## 配送\n\n### 运费是多少？\n\n满199元包邮。"
    assert docs[2].text.endswith("### 怎么保修？\n\n联系客服。")


def test_html_inside_other_formats_keeps_headings_as_plain_lines() -> None:
    text, title = html_to_text(FAQ)
    assert text.split("\n")[:4] == ["常见问题", "欢迎。", "配送", "运费是多少？"]
    assert title == "常见问题"
