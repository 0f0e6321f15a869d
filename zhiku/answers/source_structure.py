"""The structure of a source's text that a quote reads as a unit: records of ``key: value`` lines,
``|`` table rows with their header, and markdown headings."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A record is at least this many consecutive ``key: value`` lines (fewer is prose with a colon).
MIN_RECORD_LINES = 3
#: ``key: value``: a short key holding a letter or CJK character and no sentence punctuation.
_FIELD_LINE = re.compile(r"^\s*([^\s:：|#*\-•>。，,.!?！？；;][^:：|\n。，,.!?！？；;]{0,23}?)\s*[:：]\s*\S")
_TABLE_RULE = re.compile(r"^:?-{2,}:?$")


@dataclass(frozen=True)
class Line:
    start: int  # offsets of the stripped line in its source
    end: int
    key: str  # what the line holds: a record line's field name, a table row's column names


@dataclass(frozen=True)
class Block:
    """A record, or a table row with its header: lines read as one unit. ``span`` is the whole
    record or table, whose lines are not also candidates as sentences."""

    lines: tuple[Line, ...]
    record: bool
    span: tuple[int, int]


def blocks_of(text: str) -> list[Block]:
    """The records (:data:`MIN_RECORD_LINES` or more consecutive ``key: value`` lines) and the
    rows of ``|`` tables (two rows or more with as many cells; the first is the header) in
    ``text``."""
    lines: list[tuple[int, int, str]] = []
    offset = 0
    for raw in text.split("\n"):
        stripped = raw.strip()
        lead = len(raw) - len(raw.lstrip())
        lines.append((offset + lead, offset + lead + len(stripped), stripped))
        offset += len(raw) + 1
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and _key(lines[j][2]):
            j += 1
        if j - i >= MIN_RECORD_LINES:
            record = tuple(Line(a, b, _key(line)) for a, b, line in lines[i:j])
            blocks.append(Block(record, True, (record[0].start, record[-1].end)))
            i = j
            continue
        header = _cells(lines[i][2])
        j = i + 1
        rows = [lines[i]]
        while j < len(lines) and len(header) >= 2:
            cells = _cells(lines[j][2])
            if len(cells) != len(header):
                break
            if not all(_TABLE_RULE.match(cell) for cell in cells):
                rows.append(lines[j])
            j += 1
        if len(rows) >= 2:
            span = (rows[0][0], rows[-1][1])
            if re.search(r"\d", rows[0][2]):  # values, not column names: a table cut from its header
                blocks.extend(Block((Line(a, b, ""),), False, span) for a, b, _ in rows)
            else:
                head = Line(rows[0][0], rows[0][1], "")
                names = " ".join(header)
                blocks.extend(Block((head, Line(a, b, names)), False, span) for a, b, _ in rows[1:])
            i = j
            continue
        i += 1
    return blocks


def _key(line: str) -> str:
    """The field name of a ``key: value`` line; "" for any other line."""
    match = _FIELD_LINE.match(line)
    if match is None or not re.search(r"[^\W\d_]", match.group(1)):
        return ""
    return match.group(1).strip()


def _cells(line: str) -> list[str]:
    """The cells of a ``|`` table row; [] for a line that is none."""
    if "|" not in line:
        return []
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def join_lines(text: str, lines: tuple[Line, ...]) -> str:
    """``lines`` of ``text`` as they stand; `` … `` marks where lines between them were left out."""
    out = text[lines[0].start : lines[0].end]
    for previous, line in zip(lines, lines[1:], strict=False):
        skipped = text[previous.end : line.start]
        out += (skipped if not skipped.strip() else " … ") + text[line.start : line.end]
    return out


_HEADING_LINE = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+(.+)$")


def headings_of(text: str) -> list[tuple[int, str]]:
    """The markdown headings of ``text`` with their offsets."""
    return [(m.start(), m.group(1)) for m in _HEADING_LINE.finditer(text)]


def heading_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text``'s markdown heading lines start and end: a heading of two sentences
    ("### Shipping? How long?") is a heading in both."""
    return [m.span() for m in _HEADING_LINE.finditer(text)]
