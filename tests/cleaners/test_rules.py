from __future__ import annotations

from zhiku.cleaners import RemoveExtraSpaces, RemoveUrlsEmails


def test_remove_extra_spaces_keeps_newlines_and_chinese() -> None:
    text = "中文  文本\t\t含有   多余空格   \n\n第二行 a  b\u00a0\u00a0c\n　　全角缩进"
    assert RemoveExtraSpaces().clean(text) == "中文 文本 含有 多余空格\n\n第二行 a b c\n　　全角缩进"


def test_markdown_links_keep_their_text() -> None:
    text = '请看[使用文档](https://example.com/docs "标题")和![架构图](img/arch.png)。'
    assert RemoveUrlsEmails().clean(text) == "请看使用文档和架构图。"


def test_bare_urls_and_emails_removed_around_chinese() -> None:
    text = "访问https://example.com/a?b=1获取，或见 www.example.org/x. 联系zhang.san@example.com谢谢"
    assert RemoveUrlsEmails().clean(text) == "访问获取，或见 . 联系谢谢"


def test_angle_links_and_mailto() -> None:
    text = "Docs: <https://example.com/p>. Mail: mailto:a@b.cn or <mailto:c@d.org>\nnext line"
    assert RemoveUrlsEmails().clean(text) == "Docs: . Mail:  or \nnext line"


def test_text_without_links_unchanged() -> None:
    text = "价格为 3.5 元/斤，时间 10:30，比例 1:2。"
    assert RemoveUrlsEmails().clean(text) == text
