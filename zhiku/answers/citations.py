"""Citations: ``[n]`` markers in an answer, checked against the sources it was given.

Models cite in many shapes (``【1】``, ``(ID:1)``, ``[^1]``, ``[1, 2]``, ``[来源1]``); all become
``[n]``. A marker naming a source that does not exist is removed, never re-pointed — guessing
which source was meant is how off-by-one citations reach users. A sentence with no marker that is
clearly taken from one source gets that source's marker (see :data:`REPAIR_THRESHOLD`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from zhiku.answers.sentences import split_sentences
from zhiku.answers.sources import Source
from zhiku.answers.types import AnswerEvent, Citation

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
_LAST_MARKER = re.compile(r"\[\d{1,3}\]\Z")
_LEADING_MARKERS = re.compile(r"\A(?:\s*\[\d{1,3}\])+")
_TRAILING_MARKER = re.compile(r"[ \t]*\[\d{1,3}\]")
#: What may open a citation, and what may follow it before it closes: every prefix of a shape
#: above matches (wider is harmless: it only holds text back until the next character decides).
_OPENING = re.compile(r"[\[【［(（]")
_MARKER_PREFIX = re.compile(
    r"[\[【［(（]\^?\s*(?:[a-z来源资料]{1,6}\s*)?[:：]?\s*(?:\d{1,3}(?:\s*[,，、;；]\s*\d{0,3})*)?\s*",
    re.I,
)
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
    while True:  # removing ``[9]`` from ``[[9]9]`` leaves another ``[9]``: until none is left
        dropped = _MARKER.sub(lambda m: m.group(0) if int(m.group(1)) in known else "", text)
        if dropped == text:
            break
        text = dropped
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
        # a marker written after the full stop ("…24个月。[1]") opens the next piece of text but
        # cites this sentence; a sentence's own leading markers belong to the one before it
        if _MARKER.search(_LEADING_MARKERS.sub("", sentence.text)) or _TRAILING_MARKER.match(
            text, sentence.end
        ):
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


class StreamedCitations:
    """Markers checked in text that arrives in pieces (a streamed answer), so that nothing handed
    on names a source that does not exist — not even a ``[9]`` split as ``[`` and ``9]``.

    A piece ending in what may open a marker (``[``, ``[1``, ``【来源``) is held back until the
    marker closes or can no longer be one. Shapes are normalised and unknown markers dropped as
    :func:`finish` does; repair needs whole sentences, so it is left to :func:`finish`.
    """

    def __init__(self, sources: Sequence[Source]) -> None:
        self._sources = list(sources)
        self._held = ""
        self._last_marker = ""  # the marker handed-on text ends with: ``[1]`` then ``[1]`` stays one

    def feed(self, piece: str) -> str:
        """The text that can be handed on now (may be empty)."""
        text = self._held + piece
        cut = _hold_from(text)
        ready = self._clean(text[:cut])
        back = _hold_from(ready)  # a dropped marker may have joined a bracket to what followed
        self._held = ready[back:] + text[cut:]
        return self._hand_on(ready[:back])

    def close(self) -> str:
        """The rest, at the end of the stream (a bracket still open is plain text)."""
        ready, self._held = self._clean(self._held), ""
        return self._hand_on(ready)

    def _clean(self, text: str) -> str:
        prefix = self._last_marker  # a known marker: cleaning keeps it as it is
        return drop_unknown(normalise(prefix + text), self._sources)[len(prefix) :]

    def _hand_on(self, text: str) -> str:
        if text:
            last = _LAST_MARKER.search(text)
            self._last_marker = last.group(0) if last else ""
        return text


def _hold_from(text: str) -> int:
    """Where the part of ``text`` that may still become a marker starts (its length if none).

    What is held may yet vanish (a ``[9`` closed and dropped), which joins the text before it to
    whatever comes next: so an opening whose text up to the held part could begin a marker is
    held too (``[[9`` is held whole, or ``[`` then ``9]`` would reach the client)."""
    held = len(text)
    while True:
        starts = (m.start() for m in _OPENING.finditer(text, 0, held))
        opening = next((at for at in starts if _MARKER_PREFIX.fullmatch(text, at, held)), None)
        if opening is None:
            return held
        held = opening


def checked_events(events: Iterator[AnswerEvent]) -> Iterator[AnswerEvent]:
    """A streamed answer's events with the deltas' markers checked against its sources (see
    :class:`StreamedCitations`); a delta left empty is not passed on."""
    citations = StreamedCitations(())
    for event in events:
        if event.kind == "sources":
            citations = StreamedCitations(event.sources)
        elif event.kind == "delta":
            text = citations.feed(event.delta)
            if text:
                yield AnswerEvent("delta", delta=text)
            continue
        elif event.answer is not None:
            rest = citations.close()
            if rest:
                yield AnswerEvent("delta", delta=rest)
        yield event


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
