from __future__ import annotations

import pytest

from zhiku.cleaners import (
    REFUSED_RULES,
    Cleaner,
    CleanerChain,
    build_cleaners,
    cleaners,
)
from zhiku.core.errors import ConfigError


def test_every_registered_cleaner_builds() -> None:
    built = build_cleaners(cleaners.names())
    assert len(built) == len(cleaners.names()) >= 11
    assert all(isinstance(c, Cleaner) for c in built)


def test_unknown_name_lists_known_ones() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown cleaners 'strip_everything'; installed: .*remove_extra_spaces"
    ):
        build_cleaners(["default", "strip_everything"])


@pytest.mark.parametrize("name", sorted(REFUSED_RULES))
def test_refused_rules_say_why(name: str) -> None:
    with pytest.raises(ConfigError, match=rf"{name}' is refused: "):
        build_cleaners([name])
    assert name not in cleaners.names()


def test_chain_runs_in_order() -> None:
    text = "标题\r\n\r\n\r\n\r\n\r\n正文  见 https://example.com \u200b完"
    chain = CleanerChain(build_cleaners(["default", "remove_urls_emails", "remove_extra_spaces"]))
    assert chain.clean(text) == "标题\n\n\n正文 见 完"
    spaces_first = CleanerChain(build_cleaners(["default", "remove_extra_spaces", "remove_urls_emails"]))
    assert spaces_first.clean(text) == "标题\n\n\n正文 见  完"
    assert CleanerChain([]).clean("原样") == "原样"
    assert isinstance(chain, Cleaner)


def test_importable_paths_are_not_plugins() -> None:
    """Names come from stored settings and requests: importing them would run arbitrary code."""
    for name in ("zhiku.cleaners.default:DefaultCleaner", "os.system:true", "os.getcwd"):
        with pytest.raises(ConfigError, match="unknown"):
            build_cleaners([name])
