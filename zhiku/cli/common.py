"""What the commands share: the knowledge base they open, how errors reach the user, progress bars."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import click
from pydantic import ValidationError

from zhiku.cli.lookup import AmbiguousName
from zhiku.core.errors import ZhikuError
from zhiku.knowledge_base import KnowledgeBase

#: The search methods as the command line names them, and as a retrieval config does.
SEARCH_METHODS = {
    "semantic": "semantic_search",
    "full_text": "full_text_search",
    "keyword": "keyword_search",
    "hybrid": "hybrid_search",
}

#: ``--dataset NAME`` of the commands that work inside one dataset.
dataset_option = click.option("--dataset", "dataset_name", required=True, help="Dataset name or id.")


class CommandError(click.ClickException):
    """An error the user can act on: one line on stderr and exit status 1. A command run with
    ``--json`` also prints ``{"error": {"code", "message", ...}}`` on stdout, so a script
    reading stdout always gets one JSON document (``details`` adds keys, e.g. ``candidates``)."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "error",
        as_json: bool = False,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.as_json = as_json
        self.details = details or {}

    def show(self, file: IO[Any] | None = None) -> None:
        if self.as_json:
            error = {"code": self.code, "message": self.message, **self.details}
            click.echo(json.dumps({"error": error}, ensure_ascii=False))
        super().show(file)


def json_mode(ctx: click.Context) -> bool:
    """Whether the running command was asked for JSON (its ``--json`` flag)."""
    return bool(ctx.params.get("as_json"))


@contextmanager
def user_errors(ctx: click.Context) -> Iterator[None]:
    """Turn zhiku's errors, and settings refused by validation, into a :class:`CommandError`."""
    try:
        yield
    except AmbiguousName as exc:
        candidates = [
            {"id": info.id, "status": info.status, "source": info.source} for info in exc.candidates
        ]
        raise CommandError(
            str(exc), code=exc.code, as_json=json_mode(ctx), details={"candidates": candidates}
        ) from exc
    except ZhikuError as exc:
        raise CommandError(str(exc), code=exc.code, as_json=json_mode(ctx)) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = f"{where}: {first['msg']}" if where else first["msg"]
        raise CommandError(message, code="invalid_input", as_json=json_mode(ctx)) from exc


@contextmanager
def open_knowledge_base(ctx: click.Context) -> Iterator[KnowledgeBase]:
    """The knowledge base of ``--home``, closed when the command ends."""
    with user_errors(ctx):
        kb = KnowledgeBase.open(ctx.obj["home"])
        try:
            yield kb
        finally:
            kb.close()


class Progress:
    """A tqdm bar fed by ``(label, done, total)`` callbacks; silent when not on a terminal."""

    def __init__(self, desc: str) -> None:
        from tqdm import tqdm

        self._bar = tqdm(desc=desc, unit="doc", disable=not sys.stderr.isatty(), file=sys.stderr, leave=False)

    def __call__(self, label: str, done: int, total: int) -> None:
        self._bar.total = total
        self._bar.set_postfix_str(label[-30:], refresh=False)
        self._bar.n = done
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()


@contextmanager
def progress_bar(desc: str) -> Iterator[Progress]:
    """A :class:`Progress` on stderr when it is a terminal, closed however the work ends."""
    progress = Progress(desc)
    try:
        yield progress
    finally:
        progress.close()
