"""A knowledge base with the fast ``use`` embedding and a small handbook, for the answer loop."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from zhiku import KnowledgeBase

HANDBOOK = [
    (
        "leave.md",
        "# 年假\n\n员工每年享有十五天带薪年假。年假需要提前两周向主管提交申请。"
        "未休完的年假可以顺延到次年三月。",
    ),
    ("expenses.md", "# 报销\n\n差旅报销需要在出差结束后三十天内提交。住宿标准为每晚不超过六百元。"),
    (
        "office.md",
        "# Office\n\nThe Shanghai office opens at 9am and closes at 6pm on weekdays. "
        "Visitors sign in at the front desk.",
    ),
]


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeBase]:
    knowledge_base = KnowledgeBase.open(tmp_path / "home", embedding_model="use")
    yield knowledge_base
    knowledge_base.close()


@pytest.fixture
def handbook(kb: KnowledgeBase) -> KnowledgeBase:
    dataset = kb.create_dataset("handbook", description="company handbook: leave, expenses, offices")
    for name, text in HANDBOOK:
        dataset.add_text(name, text)
    return kb
