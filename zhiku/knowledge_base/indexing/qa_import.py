"""Reading question/answer pairs from a CSV file, for Q&A datasets built without an LLM."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from zhiku.core.errors import InvalidInput

#: First rows that name the two columns without saying ``question``/``answer``.
_HEADERS = (["q", "a"], ["问题", "答案"], ["问", "答"])


def read_qa_csv(path: Path) -> list[tuple[str, str]]:
    """Pairs from columns ``question`` and ``answer`` found by header, else the first two columns
    (a first row that reads as a header is skipped). UTF-8 (with or without BOM) or GB18030,
    the two encodings spreadsheet programs write Chinese CSV in."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"{path.name}: cannot read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            text = raw.decode("gb18030")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{path.name}: not UTF-8 or GB18030 text") from exc
    rows = [row for row in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in row)]
    if not rows:
        raise InvalidInput(f"{path.name}: empty CSV")
    header = [cell.strip().lower() for cell in rows[0]]
    if "question" in header and "answer" in header:
        q, a = header.index("question"), header.index("answer")
        body = rows[1:]
    else:
        q, a = 0, 1
        body = rows[1:] if header[:2] in _HEADERS else rows
    too_short = [number for number, row in enumerate(body, start=1) if len(row) <= max(q, a)]
    if too_short:
        raise InvalidInput(f"{path.name}: row {too_short[0]} has no answer column")
    return [(row[q], row[a]) for row in body]
