"""``zhiku console-password``: set (or remove) the password that signs in to the web console.

The console also accepts any API key; the password is for the operator of ``zhiku serve``, who
then sees every dataset. Only an scrypt hash is stored, in the data directory (mode 0600).
"""

from __future__ import annotations

import sys

import click

from zhiku.cli.common import user_errors


@click.command("console-password")
@click.option("--clear", is_flag=True, help="Remove the password: sign in with API keys only.")
@click.option(
    "--password-stdin", is_flag=True, help="Read the password from standard input (for scripts)."
)
@click.pass_context
def console_password(ctx: click.Context, clear: bool, password_stdin: bool) -> None:
    """Set the web console's password (asked twice, not echoed); signs out every console session."""
    from zhiku.console.password import ConsolePassword
    from zhiku.core.config import Settings

    with user_errors(ctx):
        store = ConsolePassword(Settings.load(ctx.obj["home"]).home)
        if clear:
            click.echo("console password removed" if store.clear() else "no console password was set")
            return
        if password_stdin:
            password = sys.stdin.readline().rstrip("\r\n")
        else:
            password = click.prompt("Console password", hide_input=True, confirmation_prompt=True)
        store.set(password)
    click.echo(f"console password set ({store.path.name} in the data directory)")
