"""Routes declared once: the same declaration registers the Flask view, validates its input with
pydantic models, checks the API key, and describes the operation in the OpenAPI document.

A view receives its path parameters plus, as declared, ``body`` (a validated JSON body),
``query`` (validated query parameters), ``data`` and ``upload`` (the JSON ``data`` field and the
``file`` of a multipart form).
"""

from __future__ import annotations

import functools
import json
import re
import types
import typing
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, g, request
from flask.typing import ResponseReturnValue
from pydantic import BaseModel, ValidationError
from werkzeug.datastructures import FileStorage

from zhiku.api.auth import TRUSTED, authenticate
from zhiku.api.context import context
from zhiku.api.errors import ApiError
from zhiku.api.limits import RateLimits
from zhiku.api.schemas import MAX_JSON_DEPTH, Choices, unsafe_input

View = Callable[..., ResponseReturnValue]


@dataclass(frozen=True)
class Upload:
    """A file sent as the ``file`` part of a multipart form."""

    name: str
    data: bytes


@dataclass(frozen=True)
class Operation:
    """One endpoint as OpenAPI describes it."""

    method: str
    path: str
    summary: str
    tag: str
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    form: type[BaseModel] | None = None
    file: bool = False
    public: bool = False
    description: str = ""
    response: type[BaseModel] | None = None
    status: int = 200
    path_schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass
class Routes:
    """The endpoints of one group (datasets, documents, ...), registered on a blueprint later."""

    tag: str
    operations: list[Operation] = field(default_factory=list)
    _views: list[tuple[Operation, str, View]] = field(default_factory=list)

    def route(
        self,
        method: str,
        *paths: str,
        summary: str,
        body: type[BaseModel] | None = None,
        query: type[BaseModel] | None = None,
        form: type[BaseModel] | None = None,
        file: bool = False,
        public: bool = False,
        description: str = "",
        response: type[BaseModel] | None = None,
        status: int = 200,
        path_schemas: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Callable[[View], View]:
        """Declare ``method`` on ``paths`` (OpenAPI style, ``/datasets/{dataset_id}``; several
        paths are aliases of one operation). ``response`` describes the success body, answered
        with ``status``; ``path_schemas`` the path parameters that are not any string (the view
        checks them)."""

        def decorate(view: View) -> View:
            endpoint = _endpoint(view, body, query, form, file, public)
            for path in paths:
                operation = Operation(
                    method,
                    path,
                    summary,
                    self.tag,
                    body=body,
                    query=query,
                    form=form,
                    file=file,
                    public=public,
                    description=description,
                    response=response,
                    status=status,
                    path_schemas=dict(path_schemas or {}),
                )
                self.operations.append(operation)
                self._views.append((operation, view.__name__, endpoint))
            return view

        return decorate

    def register(self, blueprint: Blueprint, limits: RateLimits | None = None) -> None:
        """Add the views to ``blueprint``, each counted against its rate limits (per key for its
        route class, per client address)."""
        limited: dict[str, View] = {}  # aliases share one endpoint, so one limited view
        for operation, name, endpoint in self._views:
            view = endpoint
            if limits is not None:
                if name not in limited:
                    limited[name] = limits.apply(endpoint, operation.method, operation.path, operation.public)
                view = limited[name]
            blueprint.add_url_rule(
                _flask_path(operation.path), endpoint=name, view_func=view, methods=[operation.method]
            )


def _flask_path(path: str) -> str:
    return re.sub(r"\{(\w+)\}", r"<\1>", path)


def _endpoint(
    view: View,
    body: type[BaseModel] | None,
    query: type[BaseModel] | None,
    form: type[BaseModel] | None,
    file: bool,
    public: bool,
) -> View:
    @functools.wraps(view)
    def endpoint(**path_args: Any) -> ResponseReturnValue:
        ctx = context()
        g.zhiku_principal = authenticate(ctx.keys, ctx.local_token) if ctx.auth and not public else TRUSTED
        kwargs = dict(path_args)
        if query is not None:
            kwargs["query"] = _validate(query, _query_args(query))
        if body is not None:
            kwargs["body"] = _validate(body, _json_body())
        if form is not None:
            kwargs["data"] = _validate(form, _form_data())
        if file:
            kwargs["upload"] = _upload()
        return view(**kwargs)

    return endpoint


def _validate(model: type[BaseModel], payload: Any) -> BaseModel:
    """``payload`` checked for what no field may hold (see :func:`unsafe_input`), then by the
    model, with the operator's configured choices as the validation context."""
    problem = unsafe_input(payload)
    if problem is not None:
        loc, reason = problem
        raise ApiError(
            400,
            "invalid_param",
            f"invalid parameters: {loc}: {reason}",
            details=[{"loc": loc, "msg": reason, "type": "unsafe_input"}],
        )
    try:
        return model.model_validate(payload, context={"choices": Choices.from_settings(context().settings)})
    except ValidationError as exc:
        raise invalid_param(exc) from None


def invalid_param(exc: ValidationError, prefix: tuple[str | int, ...] = ()) -> ApiError:
    """400 ``invalid_param`` naming each invalid field (``loc`` as a dotted path)."""
    details = [
        {
            "loc": ".".join(str(part) for part in (*prefix, *error["loc"])) or "body",
            "msg": error["msg"],
            "type": error["type"],
        }
        for error in exc.errors(include_url=False, include_context=False, include_input=False)
    ]
    summary = "; ".join(f"{d['loc']}: {d['msg']}" for d in details[:5])
    return ApiError(400, "invalid_param", f"invalid parameters: {summary}", details=details)


def _json_body() -> Any:
    raw = request.get_data(cache=True)
    if not raw.strip():
        return {}
    return _parse_json(raw, "the request body")


def _parse_json(raw: str | bytes, what: str) -> Any:
    """Decoded JSON; 400 ``invalid_json`` for bad JSON and for nesting too deep to decode (a body
    nested 50,000 deep exhausts the decoder's recursion, which must not become a 500)."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ApiError(
            400, "invalid_json", f"{what} is nested too deeply (at most {MAX_JSON_DEPTH} levels)"
        ) from None
    except ValueError as exc:
        raise ApiError(400, "invalid_json", f"{what} is not valid JSON: {exc}") from None


def _is_list(annotation: Any) -> bool:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_is_list(arg) for arg in typing.get_args(annotation))
    return typing.get_origin(annotation) is list


def _query_args(model: type[BaseModel]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        key = info.alias or name
        if key in request.args:
            values[key] = request.args.getlist(key) if _is_list(info.annotation) else request.args[key]
    return values


def _require_multipart() -> None:
    if not request.mimetype.startswith("multipart/form-data"):
        raise ApiError(
            400, "invalid_param", "send multipart/form-data with a 'file' part and a JSON 'data' part"
        )


def _form_data() -> Any:
    _require_multipart()
    raw = request.form.get("data", "")
    if not raw.strip():
        return {}
    return _parse_json(raw, "the 'data' form field")


def _upload() -> Upload:
    _require_multipart()
    files: list[FileStorage] = request.files.getlist("file")
    if not files:
        raise ApiError(400, "no_file_uploaded", "upload the file as the 'file' part of the form")
    if len(files) > 1 or len(request.files) > 1:
        raise ApiError(400, "too_many_files", "upload one file per request")
    limit = context().settings.upload_max_mb
    data = files[0].read(int(limit * 1024 * 1024) + 1)
    if len(data) > limit * 1024 * 1024:
        raise ApiError(413, "file_too_large", f"the file is larger than {limit:g} MB")
    return Upload(name=upload_name(files[0].filename), data=data)


def upload_name(filename: str | None) -> str:
    """A multipart file name without control characters (NUL, escapes, line breaks): it becomes
    the document's name, shown in lists and logs, and PostgreSQL refuses NUL in text."""
    name = "".join(char for char in filename or "" if unicodedata.category(char) != "Cc").strip()
    return name or "upload"
