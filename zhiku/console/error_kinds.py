"""A document's stored error as a short, translatable sentence: the kinds of failure the
pipeline records, recognised by their wording. The raw text stays available beside it (files,
positions and library messages are details a user may need)."""

from __future__ import annotations

import re

#: (pattern on the stored error, what the console says), the first match wins.
KINDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), message)
    for pattern, message in (
        (r"previous version is still served", "Re-indexing failed; the previous version is still served."),
        (r"chunk\(s\) not indexed", "Some chunks could not be indexed."),
        (r"segment\(s\) served without summary", "Some segments are served without their summary."),
        (r"unsupported file type", "This file type is not supported."),
        (r"empty file", "The file is empty."),
        (r"no text layer", "The PDF has no text layer (scanned?); it needs OCR first."),
        (r"not text", "The file is not text (binary content or an unknown encoding)."),
        (r"encrypted", "The file is encrypted."),
        (r"corrupt|truncated|invalid |cannot open", "The file is damaged or truncated."),
        (r"cannot read file", "The file could not be read."),
        (r"no text left", "No text was left after extraction and cleaning."),
        (r"time limit", "Indexing took longer than the time limit per document."),
        (r"stored upload is gone", "The uploaded file is gone; upload it again."),
        (
            r"over the limit of [0-9,]+ a document",
            "The document makes more segments than a document may have.",
        ),
    )
)
UNKNOWN = "Indexing failed."


def error_kind(error: str) -> str:
    """The English sentence for a stored error (the page translates it)."""
    for pattern, message in KINDS:
        if pattern.search(error):
            return message
    return UNKNOWN
