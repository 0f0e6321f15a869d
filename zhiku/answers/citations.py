"""Citations: ``[n]`` markers in an answer, checked against the sources it was given.

Models cite in many shapes (``【1】``, ``(ID:1)``, ``[^1]``, ``[1, 2]``, ``[来源1]``); all become
``[n]``. A marker naming a source that does not exist is removed, never re-pointed — guessing
which source was meant is how off-by-one citations reach users. A sentence with no marker that is
clearly taken from one source gets that source's marker (see :data:`REPAIR_THRESHOLD`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from zhiku.answers.sentences import split_sentences
from zhiku.answers.sources import Source
from zhiku.answers.types import Citation

#: Share of a sentence's character bigrams (words for Latin text) that must occur in one source
#: for an uncited sentence to be credited to it. 0.6 credits a sentence that copies or lightly
#: rephrases a passage, and not one that merely shares its topic words.
REPAIR_THRESHOLD = 0.6
#: Sentences with fewer features than this are never credited (greetings, "根据资料：").
MIN_REPAIR_FEATURES = 6

_NUMBERS = r"\d{1,3}(?:\s*[,，、;；]\s*\d{1,3})*"
_SHAPES = [
    re.compile(rf"\[\^({_NUMBERS})\]"),  # [^1]
    re.compile(rf"[【［]\s*(?:来源|资料|source|ref|id)?\s*[:：]?\s*({_NUMBERS})\s*[】］]", re.I),
    re.compile(rf"[(（]\s*(?:ID|来源|source|ref)\s*[:：]?\s*({_NUMBERS})\s*[)）]", re.I),
    re.compile(rf"\[\s*(?:来源|资料|source|ref|id|doc)\s*[:：]?\s*({_NUMBERS})\s*\]", re.I),
    re.compile(rf"\[\s*({_NUMBERS})\s*\]"),  # [1], [1, 2]
]
_MARKER = re.compile(r"\[(\d{1,3})\]")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9]+")
_CLOSING = "。！？；!?;.…”’」』）)"


def normalise(text: str) -> str:
    """Every citation shape as ``[n]`` (``[1, 2]`` → ``[1][2]``)."""
    for shape in _SHAPES:
        text = shape.sub(_as_markers, text)
    return text


def _as_markers(match: re.Match[str]) -> str:
    numbers = re.findall(r"\d+", match.group(1))
    return "".join(f"[{int(n)}]" for n in numbers)


def drop_unknown(text: str, sources: Sequence[Source]) -> str:
    """``text`` without the markers that name no source, and without repeats of a marker that
    directly follows itself (``[1][1]``)."""
    known = {source.number for source in sources}
    text = _MARKER.sub(lambda m: m.group(0) if int(m.group(1)) in known else "", text)
    return re.sub(r"(\[\d{1,3}\])(?:\1)+", r"\1", text)


def repair(text: str, sources: Sequence[Source]) -> tuple[str, set[int]]:
    """Add a marker to each uncited sentence that one source clearly supports; the repaired text
    and the numbers added. The marker goes before the sentence's closing punctuation."""
    if not sources:
        return text, set()
    features = [(source.number, _features(source.text)) for source in sources]
    added: set[int] = set()
    out: list[str] = []
    cursor = 0
    for sentence in split_sentences(text):
        if _MARKER.search(sentence.text):
            continue
        own = _features(sentence.text)
        if len(own) < MIN_REPAIR_FEATURES:
            continue
        best_number, best_share = 0, 0.0
        for number, theirs in features:
            share = len(own & theirs) / len(own)
            if share > best_share:
                best_number, best_share = number, share
        if best_share < REPAIR_THRESHOLD:
            continue
        body = sentence.text.rstrip(_CLOSING)
        insert_at = sentence.start + len(body)
        out.append(text[cursor:insert_at])
        out.append(f"[{best_number}]")
        cursor = insert_at
        added.add(best_number)
    out.append(text[cursor:])
    return "".join(out), added


def finish(
    text: str, sources: Sequence[Source], *, repair_uncited: bool = True
) -> tuple[str, list[Citation]]:
    """The answer's final text and its citations: shapes normalised, unknown markers dropped,
    uncited sentences repaired; citations in order of first appearance."""
    text = drop_unknown(normalise(text), sources)
    written = {int(number) for number in _MARKER.findall(text)}
    if repair_uncited:
        text, _ = repair(text, sources)
    return text, citations_of(text, sources, written=written)


def citations_of(text: str, sources: Sequence[Source], *, written: set[int] | None = None) -> list[Citation]:
    """The citations of ``text`` in order of first appearance; those whose number is not in
    ``written`` (the answerer's own markers; default: all) are marked as repaired."""
    by_number = {source.number: source for source in sources}
    seen: list[int] = []
    for match in _MARKER.finditer(text):
        number = int(match.group(1))
        if number in by_number and number not in seen:
            seen.append(number)
    return [
        Citation(
            number,
            by_number[number].segment_id,
            by_number[number].document_name,
            repaired=written is not None and number not in written,
        )
        for number in seen
    ]


def strip_markers(text: str) -> str:
    """The answer as plain text (for scoring and for history given to a model)."""
    return _MARKER.sub("", text)


def _features(text: str) -> set[str]:
    """Character bigrams of the Chinese runs and lowercased words of the rest."""
    lowered = text.lower()
    found: set[str] = set(_WORD.findall(lowered))
    run: list[str] = []
    for char in lowered + " ":
        if _CJK.match(char):
            run.append(char)
            continue
        if len(run) == 1:
            found.add(run[0])
        found.update(a + b for a, b in zip(run, run[1:], strict=False))
        run = []
    return found
