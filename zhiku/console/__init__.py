"""The web console: server-rendered pages over the same facade the HTTP API uses, at ``/``."""

from __future__ import annotations

from datetime import timedelta

from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from flask_limiter import Limiter

from zhiku.console import views
from zhiku.console.blueprint import console, csrf
from zhiku.console.history import QueryHistory
from zhiku.console.secret_key import console_secret_key
from zhiku.core.config import Settings

#: Sign-in attempts per minute from one address.
SIGNIN_PER_MINUTE = 20
HISTORY_EXTENSION = "zhiku.console.history"


class _SessionCookies(SecureCookieSessionInterface):
    """Session cookies marked ``Secure`` when the request came over https (a proxy that says so
    with ``X-Forwarded-Proto`` must be trusted by the WSGI server)."""

    def get_cookie_secure(self, app: Flask) -> bool:
        from flask import request

        return bool(request.is_secure) or super().get_cookie_secure(app)


def register_console(app: Flask, settings: Settings, limiter: Limiter) -> None:
    """Serve the console on ``app``: its session cookie (HttpOnly, SameSite=Lax, signed with the
    key kept in the data directory), CSRF checks, and the sign-in limit per address."""
    app.secret_key = console_secret_key(settings.home)
    app.session_interface = _SessionCookies()
    app.config.update(
        SESSION_COOKIE_NAME="zhiku_console",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        PERMANENT_SESSION_LIFETIME=timedelta(hours=12),
        WTF_CSRF_CHECK_DEFAULT=False,  # the API's bearer-key requests need none; the console checks its own
        WTF_CSRF_TIME_LIMIT=None,  # a token lives as long as its session
    )
    csrf.init_app(app)
    limiter.limit(f"{SIGNIN_PER_MINUTE}/minute", methods=["POST"])(views.account.signin)
    app.extensions[HISTORY_EXTENSION] = QueryHistory()
    app.register_blueprint(console)
