"""Refuse zip bombs before an Office or EPUB parser inflates them.

DOCX, XLSX, PPTX and EPUB are zip archives; their parsers inflate members into memory, so a
1 MB file whose XML expands to gigabytes would take the process down, and a 4 KB one whose XML
expands to megabytes of empty paragraphs keeps a worker busy for minutes. The zip central
directory states every member's uncompressed size, so the check costs nothing but reading it;
ratio and total are checked at every size. The sizes are what the archive claims; the parsers'
own decompressors stop at the stated size.
"""

from __future__ import annotations

import io
import zipfile

from zhiku.core.errors import ExtractionError

#: Largest total the members may inflate to by default (setting ``parse_max_mb`` replaces it).
#: Real Office files of a few hundred pages stay under 100 MB.
MAX_UNCOMPRESSED_BYTES = 256 * 1024 * 1024
#: Largest compression ratio of the whole archive, at any size. Office XML compresses 5-20×;
#: repetitive spreadsheets reach ~50×; bombs are 100× (a 166 KB DOCX of 30 MB of empty
#: paragraphs is 190×) to 1000× and more.
MAX_RATIO = 100
ZIP_FORMATS = frozenset({"docx", "xlsx", "pptx", "epub"})


def check_zip(data: bytes, name: str, max_bytes: int = MAX_UNCOMPRESSED_BYTES) -> None:
    """Raise ExtractionError when ``data`` is an archive that would inflate beyond ``max_bytes``
    or :data:`MAX_RATIO` times its size. Bytes that are not a readable zip pass: the format's
    parser reports that in its own words."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            inflated = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return
    ratio = inflated / max(1, len(data))
    if inflated > max_bytes or ratio > MAX_RATIO:
        raise ExtractionError(
            name,
            f"refused: the archive would expand to {inflated / 1024 / 1024:.0f} MB "
            f"({ratio:.0f}× its size), which looks like a zip bomb",
        )
