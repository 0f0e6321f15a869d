"""E-mail through Python's ``email`` package: the subject and the HTML (else plain) body, the
addresses; the HTML body on the element budget and stoppable like any page."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.fixtures.bounded import CountingToken
from tests.fixtures.make_files import make_eml
from zhiku.core.cancellation import cancellable
from zhiku.core.errors import Cancelled
from zhiku.extractors.budget import ParseBudget, TooCostly, parse_budget
from zhiku.extractors.dispatch import extract
from zhiku.extractors.eml import EmlExtractor


def test_eml_subject_and_html_body(tmp_path: Path) -> None:
    path = make_eml(
        tmp_path / "notice.eml",
        subject="会议通知 Meeting",
        text="大家好，明天上午十点开会。",
        html="<html><body><p>大家好，明天上午十点开会。</p><table><tr><td>地点</td><td>三楼</td></tr>"
        "</table></body></html>",
    )
    [doc] = EmlExtractor().extract(path, name="notice.eml")
    assert doc.text.startswith("会议通知 Meeting\n\n大家好，明天上午十点开会。")
    assert "地点 | 三楼" in doc.text
    assert doc.metadata == {
        "source": "notice.eml",
        "title": "会议通知 Meeting",
        "sent_from": ["alice@example.com"],
        "sent_to": ["bob@example.com"],
    }


def test_eml_plain_only(tmp_path: Path) -> None:
    path = make_eml(tmp_path / "p.eml", subject="纯文本", text="只有纯文本正文。\n第二行。")
    [doc] = EmlExtractor().extract(path, name="p.eml")
    assert "只有纯文本正文。" in doc.text and "第二行。" in doc.text


def test_an_encoded_body_in_another_charset_is_read(tmp_path: Path) -> None:
    message = EmailMessage()
    message["Subject"] = "=?gb2312?b?sujSttaqyrY=?="  # 茶叶知识, encoded as mail clients do
    message["From"] = "Tea Shop <shop@example.com>"
    message["To"] = "amy@example.com, Bob <bob@example.com>"
    message.set_content("龙井产自杭州。\n", charset="gb2312", cte="base64")
    path = tmp_path / "gbk.eml"
    path.write_bytes(bytes(message))
    [doc] = EmlExtractor().extract(path, name="gbk.eml")
    assert doc.text == "茶叶知识\n\n龙井产自杭州。"
    assert doc.metadata["sent_from"] == ["shop@example.com"]
    assert doc.metadata["sent_to"] == ["amy@example.com", "bob@example.com"]


def test_an_html_body_over_the_element_limit_is_refused(tmp_path: Path) -> None:
    html = "<html><body>" + "<p>茶</p>" * 3000 + "</body></html>"
    path = make_eml(tmp_path / "big.eml", subject="大邮件", text="茶", html=html)
    with parse_budget(ParseBudget(max_elements=2000)), pytest.raises(TooCostly) as caught:
        extract(path, "big.eml")
    assert "EML too costly to parse" in str(caught.value), caught.value
    assert "parse_max_elements" in str(caught.value), caught.value


def test_reading_an_html_body_reaches_checkpoints(tmp_path: Path) -> None:
    """The body is walked with checkpoints, a few hundred nodes apart."""
    html = "<html><body>" + "<p>茶</p>" * 20_000 + "</body></html>"
    path = make_eml(tmp_path / "long.eml", subject="长邮件", text="茶", html=html)
    token = CountingToken(after=20)
    with cancellable(token), pytest.raises(Cancelled):
        EmlExtractor().extract(path, name="long.eml")
    assert token.checks == 20
