"""PowerPoint (``.pptx``) and e-mail (``.eml``) through the ``unstructured`` library, offline.

See :mod:`zhiku.extractors.unstructured_offline` for what keeps it off the network. Tables come
back as HTML from unstructured and are rendered with the HTML rules (cells joined by ``" | "``).

- PPTX: one Document per slide with ``page`` (the slide number) and ``title`` (the slide's first
  title); speaker notes are included (unstructured puts them before the slide's shapes), they
  often carry the explanation the slide only hints at.
- EML: one Document with ``title`` (the subject), whose text starts with the subject line; the
  HTML body is preferred over the plain one. Attachments are not read (each would need its own
  extractor run and error handling; extract them as separate files).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Document
from zhiku.extractors import unstructured_offline
from zhiku.extractors.base import make_document, parser_errors, read_bytes, require_text
from zhiku.extractors.html import html_to_text

if TYPE_CHECKING:
    from unstructured.documents.elements import Element


class PptxExtractor:
    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        unstructured_offline.prepare_unstructured()
        from unstructured.partition.pptx import partition_pptx

        data = read_bytes(source, name)
        with parser_errors(name, "PPTX"):
            elements = partition_pptx(
                file=io.BytesIO(data), include_page_breaks=False, include_slide_notes=True
            )
        slides: dict[int, list[Element]] = {}
        for element in elements:
            slides.setdefault(element.metadata.page_number or 1, []).append(element)
        documents = [
            make_document(_elements_text(items), name, page=number, title=_first_title(items))
            for number, items in sorted(slides.items())
        ]
        return require_text(documents, name, "no slide with text")


class EmlExtractor:
    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        unstructured_offline.prepare_unstructured()
        from unstructured.partition.email import partition_email

        data = read_bytes(source, name)
        with parser_errors(name, "e-mail"):
            elements = partition_email(file=io.BytesIO(data), process_attachments=False)
        meta: dict[str, Any] = elements[0].metadata.to_dict() if elements else {}
        subject = (meta.get("subject") or "").strip() or None
        body = _elements_text(elements)
        text = f"{subject}\n\n{body}" if subject and body else (subject or body)
        document = make_document(
            text,
            name,
            title=subject,
            sent_from=meta.get("sent_from"),
            sent_to=meta.get("sent_to"),
        )
        return require_text([document], name, "no text in the message")


def _elements_text(elements: Sequence[Element]) -> str:
    parts = []
    for element in elements:
        checkpoint()
        html = getattr(element.metadata, "text_as_html", None)
        text = html_to_text(html)[0] if element.category == "Table" and html else element.text
        if text.strip():
            parts.append(text.strip())
    return "\n\n".join(parts)


def _first_title(elements: Sequence[Element]) -> str | None:
    return next((e.text.strip() for e in elements if e.category == "Title" and e.text.strip()), None)
