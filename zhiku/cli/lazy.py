"""A click group whose commands are imported when one is run, not when ``zhiku`` starts.

Each command module pulls in what its command needs (the database, the stores, models, servers);
importing them all would make every invocation, ``zhiku --help`` included, pay for all of them.
The command list in ``--help`` comes from each command's summary given here (a test checks it
against the command's own help), so listing the commands imports none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

import click


@dataclass(frozen=True)
class LazyCommand:
    """Where a command is defined, and the first paragraph of its help (what ``--help`` lists)."""

    module: str
    attribute: str
    summary: str


class LazyGroup(click.Group):
    def __init__(self, *args: object, lazy: dict[str, LazyCommand], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            entry = self.lazy[cmd_name]
            command = getattr(import_module(entry.module), entry.attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{entry.module}.{entry.attribute} is not a click command")
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click lists them (first sentence, cut to the width), from the summaries."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name) or click.Command(name, help=self.lazy[name].summary)
            if not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)
