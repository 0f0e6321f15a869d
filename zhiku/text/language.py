"""Which language a text is in, as far as choosing a prompt or a reply goes: Chinese or English."""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["zh", "en"]

_CJK = re.compile(r"[\u3400-\u9fff]")


def language_of(text: str) -> Language:
    """``zh`` when a fifth or more of the letters are Chinese characters: a Chinese question
    often carries English names and terms."""
    letters = [char for char in text if char.isalpha()]
    if not letters:
        return "en"
    chinese = sum(1 for char in letters if _CJK.match(char))
    return "zh" if chinese * 5 >= len(letters) else "en"
