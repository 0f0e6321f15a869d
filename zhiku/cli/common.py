"""What the commands share: the knowledge base they open, how errors reach the user, progress bars."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click
from pydantic import ValidationError

from zhiku.cli.lookup import AmbiguousName
from zhiku.core.errors import ZhikuError
from zhiku.knowledge_base import KnowledgeBase

if TYPE_CHECKING:
    from zhiku.evaluation.sets import EvalSet

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


def foreign_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--foreign DIR`` (repeatable) and ``--foreign-questions N``: the questions of other sets an
    evaluation also asks, none of which the set can answer (default: the sets beside it)."""
    from zhiku.evaluation.sets import FOREIGN_QUESTIONS

    count = click.option(
        "--foreign-questions",
        type=click.IntRange(0, 100_000),
        default=FOREIGN_QUESTIONS,
        show_default=True,
        help="How many questions of other sets to ask (0: none).",
    )
    sets = click.option(
        "--foreign",
        "foreign_dirs",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="A set whose questions are also asked (repeatable; default: the other sets beside SETDIR).",
    )
    return sets(count(command))


def foreign_sets(setdir: Path, dirs: Sequence[Path], count: int) -> list[EvalSet]:
    """The sets whose questions are asked beside ``setdir``'s: ``dirs``, else its siblings; none
    when ``count`` is 0."""
    from zhiku.evaluation.sets import load_eval_set, sibling_sets

    return [load_eval_set(path) for path in dirs or sibling_sets(setdir)] if count else []
