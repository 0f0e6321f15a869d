"""Which built-in format a file is, from the format its suffix names and its first bytes.

Content wins over the suffix wherever the content is unambiguous: a PDF named ``.txt`` is read
as PDF and a text file named ``.pdf`` as text. The suffix decides among text formats (Markdown,
CSV, HTML and plain text all look like text) and where the content says nothing (a corrupt
``.docx`` is still given to the DOCX reader, which reports what is wrong with it).
"""

from __future__ import annotations

import io
import re
import struct
import zipfile

from zhiku.extractors.encoding import looks_like_text

TEXT_FORMATS = frozenset({"txt", "markdown", "html", "csv", "eml"})

_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP_MAGIC = b"PK\x03\x04"
_LOCAL_HEADER_SIZE = 30  # fixed part of a zip local file header; the member name follows
_HTML_START = re.compile(
    rb"^(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)[\s>]", re.I | re.S
)
_MAIL_HEADER = re.compile(
    rb"^(?:from|to|subject|date|received|return-path|message-id|mime-version):", re.I | re.M
)
#: Zip member prefixes of the Office Open XML formats.
_OOXML_PARTS = (("word/", "docx"), ("ppt/", "pptx"), ("xl/", "xlsx"))


def content_format(head: bytes) -> str | None:
    """The format the bytes themselves show, or None when they prove nothing.

    Returns "text" for text of no recognisable kind, "zip"/"ole2" for containers whose kind is
    unknown. ``head`` may be the whole file; with only the first bytes, a zip is judged by the
    member names stored in its first entries.
    """
    if head.lstrip().startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(_ZIP_MAGIC):
        return _zip_format(head)
    if head.startswith(_OLE2_MAGIC):
        # An Excel 97-2003 workbook keeps its data in a stream named "Workbook" (or "Book").
        if "Workbook".encode("utf-16-le") in head or "Book".encode("utf-16-le") in head:
            return "xls"
        return "ole2"
    if not looks_like_text(head):
        return None
    if _HTML_START.match(head[:4096]):
        return "html"
    if len(_MAIL_HEADER.findall(head[:4096])) >= 3 and _MAIL_HEADER.match(head):
        return "eml"
    return "text"


def detect_format(by_suffix: str | None, head: bytes) -> str | None:
    """The built-in format to read a file as, or None when none can (see the module docstring);
    ``by_suffix`` is the format the file's suffix names (each extractor declares its suffixes)."""
    if by_suffix == "pdf" and b"%PDF-" in head[:1024]:
        return "pdf"  # readers accept a PDF header after some junk; trust that only with the suffix
    by_content = content_format(head)
    if by_content == "text":
        return by_suffix if by_suffix in TEXT_FORMATS else "txt"
    if by_content in ("html", "eml"):
        return by_suffix if by_suffix in TEXT_FORMATS else by_content
    if by_content == "zip":
        return by_suffix if by_suffix in ("docx", "pptx", "xlsx", "epub") else None
    if by_content == "ole2":
        return by_suffix if by_suffix == "xls" else None
    if by_content is not None:
        return by_content
    # Binary content of no known kind: the suffix's reader reports what is wrong ("not text",
    # "invalid DOCX: ..."); without a known suffix nothing can read it.
    return by_suffix


def _zip_format(head: bytes) -> str:
    names = _zip_names(head)
    if "mimetype" in names and b"application/epub+zip" in head[:100]:
        return "epub"
    for prefix, fmt in _OOXML_PARTS:
        if any(n.startswith(prefix) for n in names):
            return fmt
    if "META-INF/container.xml" in names:
        return "epub"
    return "zip"


def _zip_names(head: bytes) -> list[str]:
    try:
        with zipfile.ZipFile(io.BytesIO(head)) as archive:
            return archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        pass
    # Only the first bytes, or a damaged archive: read the names in the local file headers.
    names = []
    for match in re.finditer(re.escape(_ZIP_MAGIC), head):
        start = match.start() + _LOCAL_HEADER_SIZE
        if start > len(head):
            break
        (length,) = struct.unpack_from("<H", head, match.start() + 26)
        names.append(head[start : start + length].decode("utf-8", "replace"))
    return names
