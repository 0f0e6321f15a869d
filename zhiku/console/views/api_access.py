"""API access: the API's address and its OpenAPI document, the keys (name, scope, created, last
used; never a secret after it was shown once), a new key optionally limited to datasets, and
revoking one, which ends its use at once.

Only a sign-in valid for every dataset manages keys: a dataset-scoped key could otherwise make
itself a key without limits.
"""

from __future__ import annotations

from flask import redirect, render_template, request, session, url_for
from flask.typing import ResponseReturnValue

from zhiku.api.auth import require_unscoped
from zhiku.api.context import context
from zhiku.api.openapi import PREFIX
from zhiku.api.schemas import MAX_NAME_CHARS
from zhiku.console import forms
from zhiku.console.blueprint import console, wants_json
from zhiku.console.refusals import Refusal, refusal
from zhiku.core.errors import NotFound

#: Datasets offered as a new key's scope (and named in the list of keys).
MAX_DATASET_CHOICES = 500


def _page(error: Refusal | None = None, secret: str | None = None) -> str:
    ctx = context()
    ids, _ = ctx.catalog.dataset_ids(offset=0, limit=MAX_DATASET_CHOICES)
    datasets = ctx.catalog.datasets(ids)
    # the keys in use first, the newest first
    keys = sorted(
        ctx.keys.stored(), key=lambda key: (key.revoked_at is not None, -key.created_at.timestamp())
    )
    return render_template(
        "api_access.html",
        base_url=request.host_url.rstrip("/") + PREFIX,
        openapi_url=request.host_url.rstrip("/") + PREFIX + "/openapi.json",
        keys=keys,
        dataset_names={summary.id: summary.name for summary in datasets},
        datasets=datasets,
        own_key=session.get("key_id"),
        secret=secret,
        revoked=request.args.get("revoked") == "1",
        error=error,
    )


@console.route("/api-access")
def api_access() -> ResponseReturnValue:
    require_unscoped("manage API keys")
    return _page()


@console.route("/api-access/keys", methods=["POST"])
def create_key() -> ResponseReturnValue:
    """A new key; its secret is in this one answer (never in a URL, never stored)."""
    require_unscoped("manage API keys")
    ctx = context()
    ids, _ = ctx.catalog.dataset_ids(offset=0, limit=MAX_DATASET_CHOICES)
    try:
        name = forms.text(request.form, "name", max_chars=MAX_NAME_CHARS, required=True)
        scope = forms.choices(request.form, "datasets", ids)
    except forms.FormError as exc:
        if wants_json():
            raise
        return _page(refusal("new-key", exc)), 400
    _, secret = ctx.keys.create(name=name, datasets=scope or None)
    return _page(secret=secret)


@console.route("/api-access/keys/<key_id>/revoke", methods=["POST"])
def revoke_key(key_id: str) -> ResponseReturnValue:
    """Revoke a key by its id (never by a prefix): the API refuses it from the next request."""
    require_unscoped("manage API keys")
    keys = context().keys
    if key_id not in {key.id for key in keys.stored()}:
        raise NotFound(f"no API key {key_id!r}")
    keys.revoke(key_id)
    return redirect(url_for("console.api_access", revoked=1))
