"""The console's blueprint: pages at ``/``, sign-in required, CSRF checked on every change.

Each request sets the API's principal (``g.zhiku_principal``) from the session, so the views use
the API's own helpers (``visible_dataset``, the document queue, the records of hits) unchanged:
a dataset-scoped key sees in the console exactly what it sees through the API.
"""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    Response,
    g,
    jsonify,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import HTTPException

from zhiku.api.errors import SERVER_SIDE_MESSAGES, STATUS_OF_CODE, ApiError, retry_after
from zhiku.console import values
from zhiku.console.error_kinds import error_kind
from zhiku.console.forms import FormError
from zhiku.console.i18n import choose_language, translator
from zhiku.console.labels import label_of
from zhiku.console.refusals import translated
from zhiku.console.signin import signed_in
from zhiku.core.errors import ZhikuError

console = Blueprint(
    "console", __name__, template_folder="templates", static_folder="static", static_url_path="/assets"
)
csrf = CSRFProtect()

#: Pages anyone may open: signing in, switching language, the stylesheet and script.
PUBLIC_ENDPOINTS = frozenset({"console.signin", "console.language", "console.static"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

#: What the console's pages may load: their own stylesheet and script, nothing inline, no frames.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def wants_json() -> bool:
    """A fetch from the console's script (it asks for JSON); a form post or a link wants HTML."""
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return best == "application/json" and not request.accept_mimetypes.accept_html


@console.before_request
def _guard() -> ResponseReturnValue | None:
    if request.method not in SAFE_METHODS:
        csrf.protect()
    g.lang = choose_language()
    if request.endpoint in PUBLIC_ENDPOINTS:
        return None
    principal = signed_in()
    if principal is None:
        if wants_json() or request.method not in SAFE_METHODS:
            raise ApiError(401, "unauthorized", "sign in to the console first")
        return redirect(url_for("console.signin", next=request.full_path.rstrip("?")))
    g.zhiku_principal = principal
    return None


@console.after_request
def _headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "same-origin"
    if request.endpoint != "console.static":
        response.headers["Cache-Control"] = "no-store"
    return response


@console.context_processor
def _template_globals() -> dict[str, Any]:
    lang = getattr(g, "lang", "en")
    translate = translator(lang)
    return {
        "_": translate,
        "lang": lang,
        "principal": getattr(g, "zhiku_principal", None),
        "typed": values.typed,
        "is_date": values.is_date,
        "moment": values.moment,
        "label": lambda identifier: translate(label_of(identifier).text),
        "hint": lambda identifier: translate(label_of(identifier).hint) if label_of(identifier).hint else "",
        "error_kind": lambda error: translate(error_kind(error)),
        # a form shown again after a refusal: what was typed, and the refusal (views set it)
        "entered": request.form if request.method == "POST" else MultiDict(),
        "error": None,
    }


def _error(status: int, code: str, message: str) -> ResponseReturnValue:
    if wants_json():
        response = jsonify({"code": code, "message": message, "status": status})
        response.status_code = status
        return response
    return render_template("error.html", status=status, code=code, message=message), status


@console.errorhandler(FormError)
def _form_error(exc: FormError) -> ResponseReturnValue:
    return _error(400, "invalid_param", f"{exc.field}: {translated(exc)}")


@console.errorhandler(CSRFError)
def _csrf_error(exc: CSRFError) -> ResponseReturnValue:
    return _error(400, "csrf_failed", f"the form's security token is missing or stale ({exc.description})")


@console.errorhandler(ApiError)
def _api_error(exc: ApiError) -> ResponseReturnValue:
    return _error(exc.status, exc.code, exc.message)


@console.errorhandler(ZhikuError)
def _zhiku_error(exc: ZhikuError) -> ResponseReturnValue:
    message = SERVER_SIDE_MESSAGES.get(exc.code) or str(exc)
    return _error(STATUS_OF_CODE.get(exc.code, 400), exc.code, message)


@console.errorhandler(HTTPException)
def _http_error(exc: HTTPException) -> ResponseReturnValue:
    status = exc.code or 500
    if status == 429:  # the sign-in limit: named as the API names its own, with Retry-After
        message = translator(getattr(g, "lang", "en"))("Too many failed sign-ins; try again later.")
        response = make_response(_error(429, "rate_limited", message))
        response.headers.update(retry_after(exc))
        return response
    return _error(status, (exc.name or "error").lower().replace(" ", "_"), exc.description or "")
