"""A refused form field as the page shows it: which form and input, and the message in the
page's language, so the form is shown again with the error beside its field and what was typed."""

from __future__ import annotations

from typing import TypedDict

from flask import g

from zhiku.console.forms import FormError
from zhiku.console.i18n import translator
from zhiku.core.errors import AlreadyExists


class Refusal(TypedDict):
    form: str
    input: str
    message: str


def translated(exc: FormError) -> str:
    """The error's message in the page's language."""
    text = translator(getattr(g, "lang", "en"))(exc.template)
    return text % exc.params if exc.params else text


def refusal(form: str, exc: FormError | AlreadyExists, *, input_name: str = "name") -> Refusal:
    """What the page shows for ``exc`` refusing a field of ``form`` (a name taken is the name's)."""
    if isinstance(exc, FormError):
        return {"form": form, "input": exc.input_name, "message": translated(exc)}
    message = translator(getattr(g, "lang", "en"))("this name is taken")
    return {"form": form, "input": input_name, "message": message}
