"""The prompts of the answer loop, in Chinese and English (chosen by the question's language)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from zhiku.answers.sources import Source

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


ANSWER_SYSTEM = {
    "zh": (
        "你是一个基于知识库回答问题的助手。只根据下面给出的资料回答，不要使用资料以外的知识。"
        "每句话引用其依据的资料编号，格式为[1]或[1][2]，编号只能是资料中出现的编号。"
        "如果资料不足以回答，就直说资料中没有相关内容。用中文回答，简洁准确。"
    ),
    "en": (
        "You answer questions from a knowledge base. Answer only from the sources given below, "
        "never from other knowledge. Cite the source each sentence relies on as [1] or [1][2], "
        "using only the numbers of the given sources. If the sources do not answer the question, "
        "say that they contain nothing on it. Be concise and accurate."
    ),
}

CONDENSE = {
    "zh": (
        "根据对话历史，把最后的追问改写成一个完整、独立的问题，补全其中的指代（它、那个、这些）。"
        "只输出改写后的问题。"
    ),
    "en": (
        "Given the conversation, rewrite the follow-up as one complete, standalone question, "
        "resolving references such as 'it' or 'that'. Output only the rewritten question."
    ),
}

HYDE = {
    "zh": "写一段可能回答下面问题的资料原文（约100字），只输出这段文字。",
    "en": (
        "Write a short passage (about 80 words) that would answer the question below. "
        "Output only the passage."
    ),
}

INTENT = {
    "zh": "把用户的问题归入下列类别之一，调用对应的工具。",
    "en": "Classify the user's question into exactly one of the categories below by calling its tool.",
}

NOTHING_FOUND = {
    "zh": "知识库中没有找到与这个问题相关的内容。",
    "en": "The knowledge base has nothing on this question.",
}

REFUSAL = {
    "zh": "抱歉，这个问题不在本知识库的范围内。",
    "en": "Sorry, this question is outside what this knowledge base covers.",
}


def sources_block(sources: Sequence[Source], language: Language) -> str:
    heading = "资料" if language == "zh" else "Sources"
    parts = [f"{heading}:"]
    for source in sources:
        parts.append(f"[{source.number}] ({source.label()})\n{source.text}")
    return "\n\n".join(parts)


def question_block(question: str, language: Language) -> str:
    return f"问题：{question}" if language == "zh" else f"Question: {question}"
