"""The generated reference pages list every CLI command, HTTP route and setting: each page is
rendered by the site's build hook, then compared with what the code has."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace

import click
import pytest
from flask import Flask

from zhiku.api.app import create_app
from zhiku.cli import main
from zhiku.core.config import Settings

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "scripts" / "docs_hooks.py"


@pytest.fixture(scope="module")
def hook() -> Iterator[ModuleType]:
    """``scripts/docs_hooks.py`` loaded as MkDocs loads it (its directory on the path meanwhile)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(HOOK.parent))
        spec = importlib.util.spec_from_file_location("docs_hooks", HOOK)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module


def rendered(hook: ModuleType, name: str) -> str:
    source = ROOT / "docs" / "reference" / name
    page = SimpleNamespace(file=SimpleNamespace(src_path=f"reference/{name}"))
    markdown: str = hook.on_page_markdown(source.read_text(encoding="utf-8"), page=page)
    assert "<!-- reference:" not in markdown
    return markdown


def headings(markdown: str) -> set[str]:
    """The code-span headings of a page (`` ### `zhiku dataset create` ``)."""
    return set(re.findall(r"^#{2,6} `([^`]+)`", markdown, re.M))


# -- the command line -------------------------------------------------------------------------


def commands(command: click.Command, context: click.Context) -> Iterator[tuple[str, click.Command]]:
    """Every command path under ``zhiku``, as click resolves them."""
    yield context.command_path, command
    if isinstance(command, click.Group):
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            assert sub is not None, f"{context.command_path} lists {name!r} but cannot load it"
            yield from commands(sub, click.Context(sub, info_name=name, parent=context))


def test_the_cli_reference_has_every_command_and_option(hook: ModuleType) -> None:
    page = rendered(hook, "cli.md")
    found = dict(commands(main, click.Context(main, info_name="zhiku")))
    assert len(found) > 40
    assert set(found) == headings(page)
    sections = re.split(r"^#{2,6} (?=`zhiku)", page, flags=re.M)[1:]
    by_command = {section[1 : section.index("`", 1)]: section for section in sections}
    for path, command in found.items():
        for option in (p for p in command.params if isinstance(p, click.Option) and not p.hidden):
            for flag in option.opts:
                assert flag in by_command[path], f"{path}: {flag} is not in the reference"


# -- the HTTP API ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    home = tmp_path_factory.mktemp("reference-home")
    application = create_app(Settings.load(home, embedding_model="use"), workers=False)
    yield application
    application.extensions["zhiku"].close()


def served_routes(app: Flask) -> set[str]:
    """``METHOD /v1/path`` of every API rule Flask routes (OpenAPI's ``{name}`` for ``<name>``)."""
    routes: set[str] = set()
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/v1/"):
            path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
            methods = (rule.methods or set()) - {"HEAD", "OPTIONS"}
            routes.update(f"{method} {path}" for method in methods)
    return routes


def test_the_http_reference_has_every_route(hook: ModuleType, app: Flask) -> None:
    page = rendered(hook, "http-api.md")
    documented = {heading for heading in headings(page) if re.match(r"[A-Z]+ /", heading)}
    routes = served_routes(app)
    assert len(routes) > 40
    assert routes == documented


def test_the_http_reference_is_made_from_the_served_document(hook: ModuleType, app: Flask) -> None:
    served = app.test_client().get("/v1/openapi.json").get_json()
    http_api = hook.http_api
    assert http_api.render(served) == http_api.render(http_api.openapi())
    page = rendered(hook, "http-api.md")
    for method, path, operation in http_api.operations(served):
        assert f"`{method} {path}`" in page
        assert operation["summary"]


# -- settings ----------------------------------------------------------------------------------


def test_the_settings_reference_has_every_setting(hook: ModuleType) -> None:
    page = rendered(hook, "settings.md")
    rows = {
        match.group(1): match.group(0)
        for match in re.finditer(r"^\| `(\w+)`<br>`ZHIKU_\w+`.*\|$", page, re.M)
    }
    assert set(rows) == set(Settings.model_fields)
    for name, row in rows.items():
        assert f"`ZHIKU_{name.upper()}`" in row
        meaning = row.rstrip("|").rsplit("|", 1)[1].strip()
        assert meaning, f"setting {name} has no #: comment in zhiku/core/config.py"
    assert "zhiku.toml" in page and "Precedence" in page
