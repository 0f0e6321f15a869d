"""``/openapi.json``: the API described from the same models that validate its requests."""

from __future__ import annotations

from flask import Response, current_app, jsonify

from zhiku.api.routing import Routes

routes = Routes("meta")

#: Where the app keeps its OpenAPI document (built once, when the app is created).
OPENAPI_EXTENSION = "zhiku.openapi"


@routes.route(
    "GET", "/openapi.json", summary="This API as an OpenAPI 3.1 document (no key needed)", public=True
)
def openapi() -> Response:
    return jsonify(current_app.extensions[OPENAPI_EXTENSION])
