"""PDF files through pypdfium2: one Document per page that has text, with ``page`` (1-based).

Only the text layer is read; a PDF whose pages carry no text (a scan) is an error rather than an
empty result, so the user learns that the file needs OCR. A PDF encrypted with an empty user
password (view allowed, editing restricted) opens and is read as usual.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Document
from zhiku.core.errors import ExtractionError
from zhiku.extractors.base import make_document, parser_errors, read_bytes

if TYPE_CHECKING:
    from pypdfium2 import PdfDocument

_TRAILING_SPACES = re.compile(r"[ \t]+\n")
#: A visual line break inside a CJK sentence: a CJK character (not sentence-ending punctuation)
#: before the break and a CJK character after it. Removing it re-joins words such as 支|持.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WRAPPED_CJK = re.compile(rf"(?<=[{_CJK}，、（“‘《])\n(?=[{_CJK}，、。！？；：）”’》])")
#: Titles that PDF producers write when the author gave none.
_PLACEHOLDER_TITLES = frozenset({"untitled", "(anonymous)"})


class PdfExtractor:
    """``title`` comes from the PDF's document information, when it has one."""

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        import pypdfium2 as pdfium

        data = read_bytes(source, name)
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise ExtractionError(name, _open_failure(exc)) from exc
        try:
            with parser_errors(name, "PDF"):
                title = _title(pdf)
                documents = []
                for index in range(len(pdf)):
                    checkpoint()
                    text = _page_text(pdf, index)
                    if text.strip():
                        documents.append(make_document(text, name, page=index + 1, title=title))
        finally:
            pdf.close()
        if not documents:
            raise ExtractionError(name, "no text layer (scanned?); the PDF needs OCR first")
        return documents


def _title(pdf: PdfDocument) -> str | None:
    title = (pdf.get_metadata_dict().get("Title") or "").strip()
    return title if title and title.lower() not in _PLACEHOLDER_TITLES else None


def _page_text(pdf: PdfDocument, index: int) -> str:
    page = pdf[index]
    textpage = page.get_textpage()
    try:
        text: str = textpage.get_text_bounded()
    finally:
        textpage.close()
        page.close()
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return join_wrapped_cjk_lines(_TRAILING_SPACES.sub("\n", text)).strip()


def join_wrapped_cjk_lines(text: str) -> str:
    """Remove line breaks that PDF layout put inside Chinese sentences (``不支\n持`` → ``不支持``)."""
    return _WRAPPED_CJK.sub("", text)


def _open_failure(exc: Exception) -> str:
    import pypdfium2.raw as raw

    code = getattr(exc, "err_code", None)
    if code == raw.FPDF_ERR_PASSWORD:
        return "PDF is encrypted (a password is required)"
    if code == raw.FPDF_ERR_SECURITY:
        return "PDF is encrypted with an unsupported security handler"
    if code == raw.FPDF_ERR_FORMAT:
        return "corrupt or truncated PDF (PDFium: data format error)"
    return f"cannot open PDF: {exc}"
