"""``zhiku plugins``: every plug-in registry and the names it resolves."""

from __future__ import annotations

import textwrap

import click

from zhiku.cli.common import user_errors
from zhiku.cli.output import json_option, print_json


@click.command()
@json_option
@click.pass_context
def plugins(ctx: click.Context, as_json: bool) -> None:
    """List each plug-in registry with its names: those registered in code and those installed
    as entry points (group zhiku.plugins, name KIND.NAME), usable by name in settings."""
    from zhiku.plugins import plugin_registries, unclaimed_entry_points

    with user_errors(ctx):
        found = plugin_registries()
        unclaimed = unclaimed_entry_points()
    if as_json:
        print_json(
            {
                "registries": [
                    {
                        "kind": registry.kind,
                        "purpose": registry.purpose,
                        "names": registry.names,
                        "registered": registry.registered,
                        "entry_points": registry.entry_points,
                    }
                    for registry in found
                ],
                "unclaimed_entry_points": unclaimed,
            }
        )
        return
    for registry in found:
        installed = set(registry.entry_points)
        names = [f"{name} (entry point)" if name in installed else name for name in registry.names]
        click.echo(f"{registry.kind} — {registry.purpose}")
        click.echo(textwrap.fill(", ".join(names), width=100, initial_indent="  ", subsequent_indent="  "))
    if unclaimed:
        click.echo(f"entry points naming no registry (never loaded): {', '.join(unclaimed)}")
