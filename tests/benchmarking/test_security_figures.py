"""The security-figures benchmark runs from a checkout against a real server and reports each
figure (no timing asserted: small sizes, only that every figure is measured)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.fixtures.make_files import make_noise_docx
from zhiku.api.local_server import LocalServer

ROOT = Path(__file__).resolve().parents[2]


def test_each_figure_is_measured(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import security_figures
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    docx = make_noise_docx(tmp_path / "noise.docx", 20_000)
    env = {"ZHIKU_INDEXING_WORKERS": "1", "ZHIKU_EMBEDDING_MODEL": "use"}
    with LocalServer(tmp_path / "home", env=env) as server:
        held = security_figures.held_connections(server, 3, 0.2, lambda _: None)
        cpu = security_figures.query_cpu(server, 1, lambda _: None)
        stops = security_figures.delete_to_stop(server, {"docx": docx}, lambda _: None)
    assert held["half_open_connections"] == 3 and held["calls_per_s_beside_them"] > 0
    assert cpu["longest_query_chars"] == 4000 and cpu["longest"]["cpu_ms_per_call"] >= 0
    assert stops["docx"]["deleted_while"] != "waiting" and stops["docx"]["seconds_to_stop"] >= 0
