"""The web console: server-rendered pages over the same facade the HTTP API uses, at ``/``."""

from __future__ import annotations

from datetime import timedelta

from flask import Flask, Response
from flask.sessions import SecureCookieSessionInterface

from zhiku.api.limits import RateLimits
from zhiku.console import views
from zhiku.console.blueprint import console, csrf
from zhiku.console.secret_key import console_secret_key
from zhiku.core.config import Settings

#: Failed sign-ins per minute from one client address; past it, every sign-in from that address
#: is refused (429) until the minute's window moves on.
SIGNIN_PER_MINUTE = 20


class _SessionCookies(SecureCookieSessionInterface):
    """Session cookies marked ``Secure`` when the request came over https (a proxy that says so
    with ``X-Forwarded-Proto`` must be trusted by the WSGI server)."""

    def get_cookie_secure(self, app: Flask) -> bool:
        from flask import request

        return bool(request.is_secure) or super().get_cookie_secure(app)


def _failed(response: Response) -> bool:
    return response.status_code == 401


def register_console(app: Flask, settings: Settings, limits: RateLimits) -> None:
    """Serve the console on ``app``: its session cookie (HttpOnly, SameSite=Lax, signed with the
    key kept in the data directory), CSRF checks, and the limit on failed sign-ins per client
    address (:meth:`RateLimits.address_key`: never a header the client may vary)."""
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
    app.register_blueprint(console)
    # wraps this app's sign-in view (the blueprint is shared by every app of the process)
    signin_limit = limits.limiter.limit(
        f"{SIGNIN_PER_MINUTE}/minute",
        key_func=limits.address_key,
        scope="console-signin",
        methods=["POST"],
        deduct_when=_failed,
    )
    app.view_functions["console.signin"] = signin_limit(views.account.signin)
