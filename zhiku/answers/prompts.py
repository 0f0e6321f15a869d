"""The prompts of the answer loop, in Chinese and English (chosen by the question's language)."""

from __future__ import annotations

from collections.abc import Sequence

from zhiku.answers.sources import Source
from zhiku.text.language import Language

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

UNDERSTAND = {
    "zh": (
        "你负责理解知识库助手收到的问题，并调用 understand 工具给出结果：\n"
        "- query：用于检索的完整独立问题。改正错别字；只有当问题依赖前面的对话"
        "（如“它”“那个”“那周日呢”）时才补全对话中的内容，换了话题的问题不要带入旧话题。\n"
        "- intent：若列出了类别，选最符合的一个。\n"
        "- sections：若列出了章节，选出内容最可能回答问题的零个、一个或几个章节。\n"
        "- retrieve：需要查知识库时为 true；只有问候、闲聊或关于对话本身的问题为 false。"
    ),
    "en": (
        "You read the questions a knowledge-base assistant receives and report by calling the "
        "understand tool:\n"
        "- query: the complete, standalone question to search for. Fix typos; bring in what the "
        "conversation said only when the question depends on it ('it', 'that one', 'What about "
        "Sunday?'); a question that changes topic must not carry the old topic.\n"
        "- intent: when categories are listed, the one that fits best.\n"
        "- sections: when sections are listed, the zero, one or several whose content most likely "
        "answers the question.\n"
        "- retrieve: true when the knowledge base must be searched; false only for greetings, "
        "small talk, or questions about the conversation itself."
    ),
}

AGENT_SYSTEM = {
    "zh": (
        "你是一个基于知识库回答问题的助手，可以调用 kb_search 工具检索知识库。"
        "需要资料时先检索，读完结果后可以换个说法再检索，直到资料足够或确认没有。"
        "回答只根据检索到的资料，每句话用[n]引用资料编号（编号来自检索结果）。"
        "资料中没有的，就说知识库中没有找到。不需要查资料的问候可以直接回答。"
        "如果不能调用工具，就写两行：Action: kb_search 和 Action Input: 检索内容；"
        "回答时以 Final Answer: 开头。"
    ),
    "en": (
        "You answer questions from a knowledge base and may call the kb_search tool to search it. "
        "Search when you need facts; after reading the results you may search again with other "
        "words, until you have enough or are sure there is nothing. Answer only from the passages "
        "found, citing each sentence's passage as [n] (the numbers in the search results). If "
        "they do not answer the question, say the knowledge base has nothing on it. A greeting "
        "needs no search. If you cannot call tools, write two lines, 'Action: kb_search' and "
        "'Action Input: <query>', and start your answer with 'Final Answer:'."
    ),
}

GENERAL_ANSWER = {
    "zh": "你是一个友好的助手。这个问题不需要查知识库，请简短地直接回答，不要编造知识库中的内容。",
    "en": (
        "You are a friendly assistant. This message needs no knowledge-base search: answer it "
        "briefly and directly, and do not claim anything comes from the knowledge base."
    ),
}

#: Shown with an answer the chat model wrote alone (an intent or a question that needs no search).
NOT_FROM_KNOWLEDGE_BASE = {
    "zh": "（此回答来自模型本身，不是知识库内容。）",
    "en": "(This answer is from the model itself, not from the knowledge base.)",
}

HYDE = {
    "zh": "写一段可能回答下面问题的资料原文（约100字），只输出这段文字。",
    "en": (
        "Write a short passage (about 80 words) that would answer the question below. "
        "Output only the passage."
    ),
}

#: The kinds of document the 2nd, 3rd, ... HyDE hypothesis is written as: each drives a search of
#: its own, so each should sound like another part of a knowledge base.
HYDE_KINDS = {
    "zh": ("常见问题解答中的一条", "产品手册或规章制度中的一段", "百科条目中的一段", "操作步骤说明"),
    "en": (
        "an entry of a FAQ page",
        "a paragraph of a manual or a policy",
        "a paragraph of an encyclopedia article",
        "a list of steps in a how-to guide",
    ),
}

#: Put before the kind of document a later HyDE hypothesis is written as.
HYDE_AS = {"zh": "写成：", "en": "Write it as "}

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
