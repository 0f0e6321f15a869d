"""The command-line reference: every command and group under ``zhiku``, walked through click
itself (the lazy group imports each command's module to describe it)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import click

from .markdown import anchor, cell, code, escape_text


@dataclass(frozen=True)
class Command:
    """One command as invoked: ``path`` is ``("zhiku", "dataset", "create")``."""

    path: tuple[str, ...]
    command: click.Command
    context: click.Context

    @property
    def name(self) -> str:
        return " ".join(self.path)


def walk(root: click.Command, name: str = "zhiku") -> Iterator[Command]:
    """``root`` and every command below it, depth first, in the order ``--help`` lists them."""
    yield from _walk(root, click.Context(root, info_name=name), (name,))


def _walk(command: click.Command, context: click.Context, path: tuple[str, ...]) -> Iterator[Command]:
    yield Command(path, command, context)
    for sub_name, sub in _subcommands(command, context):
        yield from _walk(sub, click.Context(sub, info_name=sub_name, parent=context), (*path, sub_name))


def _subcommands(command: click.Command, context: click.Context) -> list[tuple[str, click.Command]]:
    """A group's visible commands by the names it lists them under; none for a command."""
    if not isinstance(command, click.Group):
        return []
    found = [(name, command.get_command(context, name)) for name in command.list_commands(context)]
    return [(name, sub) for name, sub in found if sub is not None and not sub.hidden]


def render(root: click.Command, name: str = "zhiku") -> str:
    """Markdown: a section per command, with its usage, help, arguments and options."""
    return "\n".join(_section(entry) for entry in walk(root, name))


def _section(entry: Command) -> str:
    command, context = entry.command, entry.context
    level = "#" * min(len(entry.path) + 1, 4)
    lines = [f"{level} {code(entry.name)} {{ #{anchor(entry.name)} }}", ""]
    usage = " ".join(command.collect_usage_pieces(context))
    lines += ["```text", f"Usage: {context.command_path} {usage}".rstrip(), "```", ""]
    if command.help:
        lines += [_help(command.help), ""]
    subs = _subcommands(command, context)
    if subs:
        lines += ["| Command | Summary |", "| --- | --- |"]
        lines += [
            f"| [{code(sub_name)}](#{anchor(f'{entry.name} {sub_name}')}) | "
            f"{cell(sub.get_short_help_str(limit=200))} |"
            for sub_name, sub in subs
        ]
        lines.append("")
    lines += _params(command, context)
    return "\n".join(lines)


def _help(text: str) -> str:
    """click's help: paragraphs; a ``\\b`` paragraph keeps its line breaks."""
    paragraphs = []
    for paragraph in text.split("\n\n"):
        if paragraph.lstrip().startswith("\b"):
            kept = paragraph.lstrip().removeprefix("\b").strip("\n").splitlines()
            paragraphs.append("<br>\n".join(escape_text(line.strip()) for line in kept))
        else:
            paragraphs.append(escape_text(" ".join(paragraph.split())))
    return "\n\n".join(paragraphs)


def _params(command: click.Command, context: click.Context) -> list[str]:
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    options = [p for p in command.get_params(context) if isinstance(p, click.Option) and not p.hidden]
    lines: list[str] = []
    if arguments:
        lines += ["| Argument | Type | Required |", "| --- | --- | --- |"]
        lines += [
            f"| {code(argument.make_metavar(context))} | {cell(argument.type.name)} | "
            f"{'yes' if argument.required else 'no'} |"
            for argument in arguments
        ]
        lines.append("")
    if options:
        lines += ["| Option | Description |", "| --- | --- |"]
        for option in options:
            record = option.get_help_record(context)
            if record is not None:
                lines.append(f"| {code(record[0])} | {cell(record[1])} |")
        lines.append("")
    return lines
