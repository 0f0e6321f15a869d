"""``zhiku apikey``: create, list and revoke HTTP API keys.

Keys live in the metadata database alone, so these commands work while a server holds the
data directory's stores.
"""

from __future__ import annotations

import click

from zhiku.cli.common import user_errors


@click.group()
def apikey() -> None:
    """Create, list and revoke HTTP API keys."""


@apikey.command("create")
@click.option("--name", default="", help="A label to recognise the key by.")
@click.option(
    "--dataset", "datasets", multiple=True, help="Limit the key to this dataset (name or id; repeatable)."
)
@click.pass_context
def apikey_create(ctx: click.Context, name: str, datasets: tuple[str, ...]) -> None:
    """Create a key and print it once (only its hash is stored)."""
    from zhiku.api.keys import key_store

    with user_errors(ctx), key_store(ctx.obj["home"]) as keys:
        scope = keys.dataset_ids(datasets) if datasets else None
        key, secret = keys.create(name=name, datasets=scope)
    click.echo(secret)
    where = f"datasets {', '.join(scope)}" if scope else "all datasets"
    click.echo(f"key {key.id} ({key.prefix}...) for {where}; it is not shown again", err=True)


@apikey.command("list")
@click.pass_context
def apikey_list(ctx: click.Context) -> None:
    """List keys (prefix, scope, state); secrets are never shown."""
    from zhiku.api.keys import key_store

    with user_errors(ctx), key_store(ctx.obj["home"]) as keys:
        stored = keys.stored()
    for key in stored:
        scope = ",".join(key.datasets) if key.datasets is not None else "all"
        state = "revoked" if key.revoked_at else "active"
        click.echo(f"{key.id}\t{key.prefix}...\t{state}\t{scope}\t{key.name}")


@apikey.command("revoke")
@click.argument("key")
@click.pass_context
def apikey_revoke(ctx: click.Context, key: str) -> None:
    """Revoke a key by id or prefix."""
    from zhiku.api.keys import key_store

    with user_errors(ctx), key_store(ctx.obj["home"]) as keys:
        revoked = keys.revoke(key)
    click.echo(f"revoked {revoked.id} ({revoked.prefix}...)")
