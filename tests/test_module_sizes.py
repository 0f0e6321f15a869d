"""Modules and classes stay small enough to read whole: no file under ``zhiku/`` over
:data:`MAX_FILE_LINES` lines, no class over :data:`MAX_CLASS_LINES`."""

from __future__ import annotations

import ast
from pathlib import Path

import zhiku

MAX_FILE_LINES = 500
MAX_CLASS_LINES = 300
PACKAGE = Path(zhiku.__file__).parent


def _sources() -> list[tuple[str, str]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def _oversized() -> dict[str, list[str]]:
    """Each file over a bound, with what is over it."""
    found: dict[str, list[str]] = {}
    for name, text in _sources():
        problems = []
        lines = len(text.splitlines())
        if lines > MAX_FILE_LINES:
            problems.append(f"{lines} lines")
        for node in ast.walk(ast.parse(text, filename=name)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                if length > MAX_CLASS_LINES:
                    problems.append(f"class {node.name}: {length} lines")
        if problems:
            found[name] = problems
    return found


def test_no_module_or_class_is_oversized() -> None:
    oversized = _oversized()
    assert not oversized, f"over {MAX_FILE_LINES} lines a file or {MAX_CLASS_LINES} a class: {oversized}"
