"""EPUB e-books through ebooklib: one Document per chapter in reading (spine) order.

unstructured's EPUB path converts through the pandoc program; ebooklib reads the zip directly
and each chapter's XHTML goes through the same HTML rules as web pages
(:func:`zhiku.extractors.html.html_to_text`). Metadata: ``title`` (the book's title),
``chapter`` (1-based among chapters with text) and ``headings`` (the chapter's own title).
The navigation document (table of contents) is skipped.
"""

from __future__ import annotations

import io
from pathlib import Path

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Document
from zhiku.extractors.base import make_document, parser_errors, read_bytes, require_text
from zhiku.extractors.html import html_to_text


class EpubExtractor:
    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        import ebooklib
        from ebooklib import epub

        data = read_bytes(source, name)
        documents: list[Document] = []
        with parser_errors(name, "EPUB"):
            book = epub.read_epub(io.BytesIO(data), options={"ignore_ncx": True})
            titles = book.get_metadata("DC", "title")
            book_title = str(titles[0][0]).strip() if titles else None
            for item_id, _linear in book.spine:
                checkpoint()
                item = book.get_item_with_id(item_id)
                if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
                    continue
                if isinstance(item, epub.EpubNav):
                    continue
                text, chapter_title = html_to_text(item.get_content())
                if not text:
                    continue
                documents.append(
                    make_document(
                        text,
                        name,
                        title=book_title or None,
                        chapter=len(documents) + 1,
                        headings=[chapter_title] if chapter_title else None,
                    )
                )
        return require_text(documents, name, "no chapter with text")
