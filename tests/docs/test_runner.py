"""The example runner itself, on the sample pages in ``pages/``: what runs, what fails and how
a failure is reported."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.blocks import read_blocks
from tests.docs.page_runner import ExampleFailed, Page
from zhiku import KnowledgeBase

PAGES = Path(__file__).parent / "pages"


def shown(name: str) -> Path:
    """How a failure names a sample page (relative to the working directory)."""
    path = PAGES / name
    return path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path


def run(name: str, workdir: Path, **options: float) -> Page:
    with Page(PAGES / name, workdir, **options) as page:
        page.run()
    return page


def failure(name: str, workdir: Path, **options: float) -> str:
    with pytest.raises(ExampleFailed) as raised:
        run(name, workdir, **options)
    return str(raised.value)


def test_a_page_whose_blocks_pass(tmp_path: Path) -> None:
    page = run("passing.md", tmp_path)
    assert "first block ran" in (tmp_path / "python-output.log").read_text()
    assert [block.language for block in page.blocks if block.runs] == ["python", "python", "bash", "toml"]


def test_blocks_are_read_with_their_lines_and_markers() -> None:
    blocks = read_blocks(PAGES / "passing.md")
    listed = next(block for block in blocks if "greeting ==" in block.text)
    assert listed.text.startswith("assert greeting")  # the list's indentation is gone
    skipped = blocks[-1]
    assert skipped.markers == {"skip"}
    assert skipped.skip_reason == "it would fail, which is why it is skipped"
    lines = (PAGES / "passing.md").read_text().splitlines()
    assert all(lines[block.line - 1].lstrip().startswith("```") for block in blocks)


def test_a_failing_python_block_names_its_line_and_shows_its_output(tmp_path: Path) -> None:
    message = failure("failing_python.md", tmp_path)
    assert message.startswith(f"{shown('failing_python.md')}:9: python block raised")
    assert "before the failure" in message
    assert "value is not 2" in message
    # the traceback points into the page, at the assertion's own line
    assert re.search(r'File ".*failing_python\.md", line 11', message)
    assert "a block after a failure ran" not in message


def test_a_failing_bash_block_stops_at_the_failing_command(tmp_path: Path) -> None:
    message = failure("failing_bash.md", tmp_path)
    assert message.startswith(f"{shown('failing_bash.md')}:3: bash block exited with 1")
    assert "about to fail" in message
    assert "after the failure" not in message


def test_a_failure_inside_a_pipeline_fails_the_block(tmp_path: Path) -> None:
    message = failure("failing_pipe.md", tmp_path)
    assert "bash block exited with 2" in message
    assert "no-such-command" in message


def test_a_toml_block_must_be_valid_settings(tmp_path: Path) -> None:
    message = failure("bad_toml.md", tmp_path)
    assert "bad_toml.md:3: toml block is not a valid zhiku.toml" in message
    assert "no_such_setting" in message


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("skip_without_reason.md", "`skip` needs a reason"),
        ("unknown_marker.md", "unknown example marker 'serve'"),
    ],
)
def test_a_marker_must_be_one_the_runner_knows(tmp_path: Path, name: str, problem: str) -> None:
    message = failure(name, tmp_path)
    assert message.startswith(f"{shown(name)}:4: ")
    assert problem in message


def test_a_block_that_does_not_end_is_stopped(tmp_path: Path) -> None:
    message = failure("slow.md", tmp_path, timeout_s=2)
    assert "slow.md:3: python block did not finish in 2 s" in message


def test_server_blocks_reach_a_server_on_the_pages_home(tmp_path: Path) -> None:
    run("server.md", tmp_path)
    assert not (tmp_path / "home" / "server.json").exists()  # stopped with the page
    with KnowledgeBase.open(tmp_path / "home") as kb:  # what the bash block made through the server
        assert [dataset.name for dataset in kb.datasets()] == ["tea"]


def test_chat_model_blocks_get_a_model_answering_from_its_sources(tmp_path: Path) -> None:
    run("chat_model.md", tmp_path)


def test_chat_model_blocks_answer_from_a_knowledge_base(tmp_path: Path) -> None:
    run("ask.md", tmp_path)
    assert "[1]" in (tmp_path / "python-output.log").read_text()


def test_a_failing_server_block_shows_the_servers_log(tmp_path: Path) -> None:
    message = failure("server_error.md", tmp_path)
    assert "server_error.md:4: python block raised" in message
    assert "zhiku API on http://127.0.0.1:" in message.split("the end of zhiku serve's log")[1]
