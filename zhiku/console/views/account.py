"""Signing in (an API key or the console password), signing out, choosing the language."""

from __future__ import annotations

import unicodedata
from urllib.parse import unquote, urlsplit

from flask import g, redirect, render_template, request, session, url_for
from flask.typing import ResponseReturnValue

from zhiku.api.context import context
from zhiku.console.blueprint import console
from zhiku.console.forms import text
from zhiku.console.i18n import LANGUAGE_COOKIE, LANGUAGES, translator
from zhiku.console.signin import password_store, sign_in_with_key, sign_in_with_password, signed_in

#: A key is ``zk-`` and 43 characters; anything much longer is not one.
MAX_SECRET_CHARS = 1024
#: Longest page address to go back to after signing in.
MAX_NEXT_CHARS = 2048


def safe_next(target: str | None, default: str = "/") -> str:
    """A path on this site to go back to; anything else goes ``default``.

    A browser drops tabs and newlines from a URL and reads a backslash as a slash, so
    ``/\t/evil.example`` is ``//evil.example`` to it: another host. Accepted is a path starting
    with a single ``/``, without backslash, control character or whitespace — before or after
    percent-decoding — that names no scheme and no host.
    """
    if not target or len(target) > MAX_NEXT_CHARS:
        return default
    for form in (target, unquote(target)):
        if not form.startswith("/") or form.startswith("//") or "\\" in form:
            return default
        if any(char.isspace() or unicodedata.category(char)[0] == "C" for char in form):
            return default
        parts = urlsplit(form)
        if parts.scheme or parts.netloc:
            return default
    return target


@console.route("/signin", methods=["GET", "POST"])
def signin() -> ResponseReturnValue:
    has_password = password_store().stored() is not None
    if request.method == "GET":
        if signed_in() is not None:
            return redirect(safe_next(request.args.get("next")))
        return render_template("signin.html", has_password=has_password, error=None)
    method = request.form.get("method", "key")
    secret = text(request.form, "secret", max_chars=MAX_SECRET_CHARS, required=True)
    if method == "password":
        stored = password_store().verify(secret)
        if stored is not None:
            sign_in_with_password(stored)
            return redirect(safe_next(request.args.get("next")))
    else:
        key = context().keys.verify(secret)
        if key is not None:
            sign_in_with_key(key)
            return redirect(safe_next(request.args.get("next")))
    message = translator(g.lang)("Wrong API key or password.")
    return render_template("signin.html", has_password=has_password, error=message), 401


@console.route("/signout", methods=["POST"])
def signout() -> ResponseReturnValue:
    session.clear()
    return redirect(url_for("console.signin"))


@console.route("/language", methods=["POST"])
def language() -> ResponseReturnValue:
    chosen = request.form.get("lang", "")
    response = redirect(safe_next(request.form.get("next")))
    if chosen in LANGUAGES:
        response.set_cookie(LANGUAGE_COOKIE, chosen, max_age=365 * 86400, samesite="Lax", httponly=True)
    return response
