"""Does a follow-up depend on the conversation before it? The offline answer, by rule.

Searching every follow-up together with the previous question drowns a new topic in the old one
("And how long is the warranty on the smart kettle?" after a question about membership points
found the points again). So a follow-up is folded into the earlier question only when it cannot
stand alone: it refers back (*it*, *this one*, 它, 这款) without naming much of its own, trails
off (*What about Sunday?*, 那周日呢？) with few words of its own, or has one at most (*How much?*,
运费多少？). One that announces another question (*Also, …*, 另外，…) stands alone. The reason
is returned, so the answer's plan can say which happened and why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import jieba.posseg as posseg

from zhiku.text.tokenizer import Tokenizer

#: Words that ask rather than name: they do not give a follow-up a subject of its own.
QUESTION_WORDS = frozenset(
    """
    多少 什么 怎么 怎样 怎么样 如何 哪 哪些 哪里 哪儿 哪个 哪种 几 几点 几天 多久 多长 多长时间 多大 为什么
    是否 可以 能 能否 会 要 需要 有 有没有 没有 还 还有 另外 请问 一下 呢 吗 么 吧 啊 知道 告诉 想 问 钱 价格
    这款 那款 这种 那种 这家 那家 这件 那件 这样 那样 这里 那里 这儿 那儿 该款
    long much many often soon far mean means tell know please need want get like else more still
    any anything something also price cost costs
    """.split()
)
#: English words that ask, point or join rather than name (beside the tokenizer's stop words).
FUNCTION_WORDS = frozenset(
    """
    if one ones some there here yes not no us let lets does doing done has have had having whether
    while after before again ever other another each every own same
    """.split()
)
#: jieba's part-of-speech tags (first letters) of words that do not name anything: pronouns,
#: adverbs, particles, prepositions, conjunctions, modal particles, numerals, measure words,
#: directions, times, punctuation, interjections, onomatopoeia and status words.
FUNCTION_TAGS = ("r", "d", "u", "p", "c", "y", "m", "q", "f", "t", "x", "w", "e", "o", "z")
_HAN = re.compile(r"[\u4e00-\u9fff]")
#: Words that point back at something named earlier.
_REFERENCE = re.compile(
    r"\b(it|its|it's|they|them|their|theirs|this|that|these|those|he|him|his|she|her|one|ones|same)\b"
    r"|[它其]|该(?=[款种个家件位项])|[这那][款种个家些件位次样里边]|这(?![么儿])",
    re.IGNORECASE,
)
#: Openings and endings of a question that trails off and leans on the one before.
_ELLIPSIS = re.compile(
    r"^\s*(?:what about|how about|and (?:the|for|on|in|at|with|if)|same for)\b"
    r"|^\s*(?:那|还有|以及)|呢\s*[?？]?\s*$",
    re.IGNORECASE,
)
#: Openings that announce another question: what follows names its own subject.
_NEW_TOPIC = re.compile(
    r"^\s*(?:also|another question|by the way|one more thing|unrelated)\b"
    r"|^\s*(?:另外|顺便问|还有个问题|换个问题)",
    re.IGNORECASE,
)
#: A follow-up naming this many words of its own stands alone even when it says *it*.
OWN_SUBJECT_WORDS = 4
#: Trailing off with at most this many words of its own leans on the question before.
ELLIPSIS_MAX_WORDS = 2
#: How many earlier questions a chain of dependent follow-ups may reach back through.
MAX_FOLDED_TURNS = 3


def own_words(question: str, tokenizer: Tokenizer) -> list[str]:
    """The words that name something, each once. Stop, question and function words are dropped,
    and so is a Chinese word that jieba tags as a pronoun, adverb, particle, preposition,
    conjunction, numeral, measure word, direction or time (那, 多久, 下午, 三点) or that is a
    single character (出, 找, 寄: too little to be a subject of its own, and a question that drops
    its subject, as Chinese does, is left with little else). A word inside a longer one (水壶 in
    电水壶) counts with the longer one."""
    words = set()
    for piece in posseg.lcut(question):
        word = piece.word.strip().lower()
        if not word or word in QUESTION_WORDS or word in FUNCTION_WORDS or word in tokenizer.stop_words:
            continue
        if _HAN.search(word):
            if len(word) < 2 or piece.flag.startswith(FUNCTION_TAGS):
                continue
        elif len(word) < 2 or not any(char.isalnum() for char in word):
            continue
        words.add(word)
    return sorted(w for w in words if not any(w != other and w in other for other in words))


def refers_back(question: str, tokenizer: Tokenizer) -> str | None:
    """Why ``question`` cannot be searched alone, or None when it names its own subject."""
    words = own_words(question, tokenizer)
    if words and _NEW_TOPIC.search(question):
        return None
    reference = _REFERENCE.search(question)
    if reference and len(words) < OWN_SUBJECT_WORDS:
        return f"it refers back ('{reference.group(0)}')"
    ellipsis = _ELLIPSIS.search(question)
    if ellipsis and len(words) <= ELLIPSIS_MAX_WORDS:
        return f"it trails off ('{ellipsis.group(0).strip()}') with few words of its own"
    if len(words) <= 1:
        return "it has hardly a word of its own"
    return None


def fold(question: str, earlier: Sequence[str], tokenizer: Tokenizer) -> tuple[str, str | None]:
    """The query to search for ``question`` after the ``earlier`` questions (oldest first), and
    the reason it was folded (None: searched alone). A chain of dependent follow-ups reaches back
    to the nearest question that stood alone, at most :data:`MAX_FOLDED_TURNS` questions."""
    reason = refers_back(question, tokenizer)
    if reason is None or not earlier:
        return question, None
    folded: list[str] = []
    for previous in reversed(earlier[-MAX_FOLDED_TURNS:]):
        folded.insert(0, previous)
        if refers_back(previous, tokenizer) is None:
            break
    return " ".join([*folded, question]), reason
