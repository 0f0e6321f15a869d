"""Runs one page's ``python`` blocks in order in one namespace, in a process of its own.

Started by :mod:`tests.docs.page_runner` as ``python python_worker.py OUTPUT_LOG`` in the page's
directory. Each line on stdin is a block as JSON (``source``, ``filename``, ``line``, ``env``);
the answer is one JSON line (``ok``, ``error``) on the original stdout. Everything the blocks
print, at any level (C code and child processes too), goes to ``OUTPUT_LOG``; tracebacks name
the Markdown file and its line numbers.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any


def main() -> None:
    requests = os.fdopen(os.dup(0), encoding="utf-8")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    output = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # a block reading its input reads nothing
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115  (for the whole run)
    sys.path[0] = os.getcwd()  # as for ``python -c``: the page's directory, not this file's
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for request in requests:
        block = json.loads(request)
        answers.write(json.dumps(_run(block, namespace)) + "\n")
        answers.flush()


def _run(block: dict[str, Any], namespace: dict[str, Any]) -> dict[str, Any]:
    saved = {name: os.environ.get(name) for name in block["env"]}
    os.environ.update(block["env"])
    try:
        # blank lines before the code: tracebacks show the page's own line numbers
        code = compile("\n" * (block["line"] - 1) + block["source"], block["filename"], "exec")
        exec(code, namespace)
    except BaseException as exc:  # a block's SystemExit or KeyboardInterrupt fails it too
        frames = exc.__traceback__.tb_next if exc.__traceback__ else None  # from the block's own
        return {"ok": False, "error": "".join(traceback.format_exception(type(exc), exc, frames))}
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return {"ok": True, "error": ""}


if __name__ == "__main__":
    main()
