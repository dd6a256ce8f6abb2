"""`helpdesk kb import` of a source that holds no passages at all (a folder that is no knowledge
base, such as /etc; an empty folder, even one named dir.json; `[]`; `{"passages": []}`) is
refused with one line, exit status 2, and makes nothing: it used to make a new, empty knowledge
base (a folder holding only `.lock`, or PostgreSQL's kb_* tables) that handed every question to
a person."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.cli_run import run_cli
from tests.kb.backends import pg_url

__all__ = ["pg_url"]

IN_A_FOLDER = "no passages there (a knowledge-base folder holds a NAME.json file for each)"
IN_A_FILE = "its list of passages is empty"


def sources(tmp_path: Path) -> list[tuple[Path, str]]:
    """Each source with no passages, and what the refusal says of it."""
    empty = tmp_path / "dir.json"
    empty.mkdir()
    listed = tmp_path / "list.json"
    listed.write_text("[]\n")
    wrapped = tmp_path / "export.json"
    wrapped.write_text('{"passages": []}\n')
    no_kb = tmp_path / "no-kb"  # Like /etc: files, and not one passage among them.
    no_kb.mkdir()
    (no_kb / "hosts").write_text("127.0.0.1 localhost\n")
    return [(empty, IN_A_FOLDER), (listed, IN_A_FILE), (wrapped, IN_A_FILE),
            (no_kb, IN_A_FOLDER)]  # fmt: skip


def test_importing_nothing_into_a_folder_is_refused_and_makes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "x" / "kb"
    for source, said in sources(tmp_path):
        code, out, err = run_cli(capsys, "kb", "import", str(source), "--kb", str(target))
        assert (code, out) == (2, "")
        assert err == f"helpdesk: error: {source}: {said}; nothing was imported\n"
        assert not (tmp_path / "x").exists()
    code, _, err = run_cli(capsys, "kb", "import", "/etc", "--kb", str(target))
    assert code == 2 and err.endswith(f": {IN_A_FOLDER}; nothing was imported\n"), err
    assert not (tmp_path / "x").exists()


def test_importing_nothing_into_postgresql_makes_no_tables(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for source, said in sources(tmp_path):
        code, out, err = run_cli(capsys, "kb", "import", str(source), "--kb", pg_url)
        assert (code, out) == (2, "")
        assert err == f"helpdesk: error: {source}: {said}; nothing was imported\n"
    with psycopg.connect(pg_url) as conn:
        tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        assert tables.fetchone() == (0,)
    # Still no knowledge base there, as the other commands say.
    code, _, err = run_cli(capsys, "kb", "list", "--kb", pg_url)
    assert code == 2 and "no knowledge base there" in err, err


def test_a_source_with_passages_still_imports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = tmp_path / "one.json"
    one.write_text('[{"id": "hello", "text": "Hello there."}]\n')
    code, out, err = run_cli(capsys, "kb", "import", str(one), "--kb", str(tmp_path / "kb"))
    assert (code, err) == (0, "")
    assert out == f"imported {one}: 1 added, 0 replaced, 0 unchanged\n"
