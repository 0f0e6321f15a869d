"""Whether an upload is worth queueing: the cheap checks on a file's name and first bytes that
refuse it at once, beside the file, rather than as a failed document minutes later.

Refused are an empty file (or blanks only), a suffix no extractor declares (``notes.xyz``), and
binary bytes under a text format's suffix (an image named ``.txt``). A file without a suffix is
still read by its content. A file of a known format that is damaged inside (a truncated PDF) is
not seen here: only its extractor finds that, and the document shows the reason.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from zhiku.core.errors import ExtractionError, UnsupportedFileType
from zhiku.extractors.dispatch import file_format, suffix_formats
from zhiku.extractors.sniff import TEXT_FORMATS, content_format

#: The reasons given, as written (the console translates them).
EMPTY = "empty file"
UNKNOWN_SUFFIX = "no reader for this kind of file"
NOT_TEXT = "binary content under a text file's name"
UNREADABLE = "neither its name nor its content is a known format"
#: Bytes the content checks read, as the extractors' own sniffing does.
HEAD_BYTES = 64 * 1024
#: A suffix as file types are named (".md", ".docx"); "v1.2 notes" has none.
_SUFFIX = re.compile(r"\.[a-z0-9]{1,10}")


def check_upload(name: str, data: bytes) -> None:
    """ExtractionError for an empty file, UnsupportedFileType (its ``detail`` one of the reasons
    above) for a file no extractor will read; nothing for a file worth queueing."""
    if not data.strip():
        raise ExtractionError(name, EMPTY)
    suffix = PurePath(name).suffix.lower()
    by_suffix = suffix_formats().get(suffix) if _SUFFIX.fullmatch(suffix) else None
    if _SUFFIX.fullmatch(suffix) and by_suffix is None:
        raise UnsupportedFileType(name, UNKNOWN_SUFFIX)
    head = data[:HEAD_BYTES]
    if by_suffix in TEXT_FORMATS and content_format(head) is None:
        raise UnsupportedFileType(name, NOT_TEXT)
    if file_format(name, head) is None:
        raise UnsupportedFileType(name, UNREADABLE)
