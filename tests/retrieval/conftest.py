from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from zhiku import KnowledgeBase

CORPORA = {
    "tea": (
        "Tea garden handbook: green tea leaves are picked in spring and roasted in iron pans.",
        "青山茶园的龙井茶在清明前采摘，用铁锅炒制。",
        "Oolong tea is rolled and oxidised before it is fired.",
    ),
    "astronomy": (
        "Jupiter is the largest planet of the solar system and has dozens of moons.",
        "A light year is the distance light travels in one year.",
        "Saturn's rings are made of ice and rock.",
    ),
    "payroll": (
        "Salaries are paid on the last working day of each month.",
        "Overtime is paid at one and a half times the hourly rate.",
        "员工工资每月最后一个工作日发放。",
    ),
}
DESCRIPTIONS = {
    "tea": "Tea growing, picking and processing in our tea garden",
    "astronomy": "Planets, stars and the solar system",
    "payroll": "Salaries, overtime pay and payroll dates for employees",
}


@pytest.fixture(scope="module")
def routed_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    home: Path = tmp_path_factory.mktemp("routing") / "home"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        for name, texts in CORPORA.items():
            dataset = kb.create_dataset(name, description=DESCRIPTIONS[name])
            for number, text in enumerate(texts):
                assert dataset.add_text(f"{name}-{number}.txt", text).status == "completed"
        yield kb
