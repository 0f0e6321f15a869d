"""E-mail (``.eml``) through Python's own ``email`` package: one Document per message.

``title`` is the subject and the text starts with it; the HTML body is preferred over the plain
one and read with the HTML rules (:func:`zhiku.extractors.html.html_to_text`), its elements
counted against ``parse_max_elements`` before it is parsed, and its walk reaching a
checkpoint every few hundred nodes, so a deleted or paused message stops at once. (unstructured's
e-mail partitioner, used before, parsed the whole body in one call that nothing could stop.)
``sent_from`` and ``sent_to`` list the addresses. Attachments are not read (each would need its
own extractor run and error handling; extract them as separate files).
"""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage
from email.utils import getaddresses
from pathlib import Path

from zhiku.core.documents import Document
from zhiku.extractors.base import make_document, parser_errors, read_bytes, require_text
from zhiku.extractors.budget import check_elements, current_budget
from zhiku.extractors.html import html_to_text


class EmlExtractor:
    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        data = read_bytes(source, name)
        with parser_errors(name, "e-mail"):
            message = email.message_from_bytes(data, policy=email.policy.default)
            if not isinstance(message, EmailMessage):
                raise TypeError("not a MIME message")
            subject = " ".join(str(message.get("subject") or "").split()) or None
            body = _body(message, name)
            sent_from = _addresses(message, "from")
            sent_to = _addresses(message, "to")
        text = f"{subject}\n\n{body}" if subject and body else (subject or body)
        document = make_document(text, name, title=subject, sent_from=sent_from, sent_to=sent_to)
        return require_text([document], name, "no text in the message")


def _body(message: EmailMessage, name: str) -> str:
    """The text of the message's body: its HTML part read as a page, else its plain part."""
    part = message.get_body(preferencelist=("html", "plain"))
    if part is None:
        return ""
    content = part.get_content()
    if not isinstance(content, str):
        return ""
    if part.get_content_type() == "text/html":
        check_elements(content.encode("utf-8", "replace"), name, "eml", current_budget())
        return html_to_text(content)[0]
    return "\n".join(line.rstrip() for line in content.strip().splitlines())


def _addresses(message: EmailMessage, header: str) -> list[str] | None:
    """The addresses of a header (``From``, ``To``), without display names; None when absent."""
    values = [str(value) for value in message.get_all(header) or []]
    found = [address for _, address in getaddresses(values) if address]
    return found or None
