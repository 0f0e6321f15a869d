"""The settings reference: every field of :class:`zhiku.core.config.Settings` with its
environment variable, type, default, bounds and meaning.

The meaning is the ``#:`` comment block right above the field in ``config.py``; a plain ``#``
block above that starts a section (its first line the title, the rest an introduction).
"""

from __future__ import annotations

import ast
import inspect
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo

from .markdown import cell, code, escape_text


@dataclass(frozen=True)
class Setting:
    name: str
    annotation: str  # as written in config.py
    meaning: str
    section: str
    introduction: str


def settings() -> list[Setting]:
    """The fields of ``Settings`` in the order ``config.py`` declares them, with their comments."""
    from zhiku.core import config

    source = Path(inspect.getfile(config)).read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    model = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Settings")
    found: list[Setting] = []
    section, introduction = "", ""
    for node in model.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        meaning, heading = _comments_above(lines, node.lineno - 1)
        if heading:
            section, introduction = heading[0], " ".join(heading[1:])
        found.append(Setting(node.target.id, ast.unparse(node.annotation), meaning, section, introduction))
    return found


def _comments_above(lines: list[str], index: int) -> tuple[str, list[str]]:
    """The ``#:`` block ending just above line ``index`` (0-based), and the ``#`` block above it."""
    documented: list[str] = []
    plain: list[str] = []
    index -= 1
    while index >= 0 and lines[index].strip().startswith("#:"):
        documented.insert(0, lines[index].strip().removeprefix("#:").strip())
        index -= 1
    while index >= 0 and lines[index].strip().startswith("#") and not lines[index].strip().startswith("#:"):
        plain.insert(0, lines[index].strip().removeprefix("#").strip())
        index -= 1
    return " ".join(documented), plain


def environment_variable(name: str) -> str:
    from zhiku.core.config import ENV_PREFIX

    return ENV_PREFIX + name.upper()


def takes_json(name: str) -> bool:
    """Whether the environment variable holds JSON (the table and list settings)."""
    from zhiku.core.config import JSON_FIELDS

    return name in JSON_FIELDS


def render() -> str:
    """Markdown: where settings come from, then a table per section of ``config.py``."""
    from zhiku.core import config
    from zhiku.core.config import Settings

    # the module's docstring past its summary line: the precedence of the sources
    precedence = inspect.cleandoc(config.__doc__ or "").split("\n\n", 1)[-1]
    lines = [escape_text(precedence), "", _ENVIRONMENT, ""]
    fields = Settings.model_fields
    current = None
    for setting in settings():
        if setting.section != current:
            current = setting.section
            lines += ["", f"## {escape_text(current)}", ""]
            if setting.introduction:
                lines += [escape_text(setting.introduction), ""]
            lines += ["| Setting | Type | Default | Meaning |", "| --- | --- | --- | --- |"]
        info = fields[setting.name]
        variable = code(environment_variable(setting.name)) + (" (JSON)" if takes_json(setting.name) else "")
        lines.append(
            f"| {code(setting.name)}<br>{variable} | {_type(setting.annotation, info)} | "
            f"{_default(setting.name, info)} | {cell(setting.meaning)} |"
        )
    return "\n".join(lines)


_ENVIRONMENT = (
    "Each setting is a key of `zhiku.toml` and an environment variable `ZHIKU_<NAME>`; the "
    "variables of table and list settings hold JSON "
    "(`ZHIKU_TRUSTED_PROXIES='[\"10.0.0.0/8\"]'`). A key (`Secret`) is a string or, in "
    '`zhiku.toml`, a reference to another variable read when the key is used: '
    '`llm_api_key = { env = "DEEPSEEK_API_KEY" }`. The data directory itself comes from '
    "`--home`, else `ZHIKU_HOME`, else `~/.zhiku`."
)


def _type(annotation: str, info: FieldInfo) -> str:
    if annotation.startswith("Literal["):
        shown = " \\| ".join(code(str(value)) for value in typing.get_args(info.annotation))
    else:
        shown = code(annotation)
    bounds = [_bound(item) for item in info.metadata]
    return shown + "".join(f"<br>{bound}" for bound in bounds if bound)


_BOUNDS = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<", "max_length": "at most"}


def _bound(constraint: Any) -> str:
    for attribute, sign in _BOUNDS.items():
        value = getattr(constraint, attribute, None)
        if value is not None:
            return f"{sign} {value:,}" if attribute != "max_length" else f"{sign} {value:,} items"
    return ""


def _default(name: str, info: FieldInfo) -> str:
    if name == "home":
        return "`~/.zhiku`"
    value = info.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, str):
        return code(f'"{value}"')
    if isinstance(value, bool):
        return code(str(value).lower())
    if isinstance(value, float):
        return code(f"{value:g}")
    if isinstance(value, dict | list):
        return code("{}" if isinstance(value, dict) else "[]")
    return code(str(value))
