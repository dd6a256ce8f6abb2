"""`helpdesk kb export --output`: a folder or an empty name is one line and exit status 2, never
a traceback; `-` is standard output, never a file named `-`; a file is written as before."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path

import pytest

from chatbot.knowledge_base import load_knowledge_base
from tests.cli_run import run_cli
from tests.conftest import SEED_DATA


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "here"
    (folder / "sub").mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("output", [".", "/", "..", "sub", "sub/"])
def test_a_folder_is_refused_in_one_line(
    here: Path, kb_copy: Path, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    code, out, err = run_cli(capsys, "kb", "export", "--output", output, "--kb", str(kb_copy))
    shown = output.rstrip("/") or "/"
    assert (code, out) == (2, "")
    assert err == f"helpdesk: error: {shown}: is a directory, expected a file to write\n"
    assert sorted(p.name for p in here.rglob("*")) == ["sub"]


def test_an_empty_name_is_refused(
    here: Path, kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for option in ("--output", "-o"):
        code, out, err = run_cli(capsys, "kb", "export", option, "", "--kb", str(kb_copy))
        assert (code, out) == (2, "")
        assert err == "helpdesk kb export: error: argument --output/-o: is empty\n"
    assert sorted(p.name for p in here.rglob("*")) == ["sub"]


def test_the_help_says_standard_output_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "kb", "export", "--help")
    assert code == 0
    assert "file to write, or '-' for standard output (the default)" in " ".join(out.split())


def test_standard_output_and_a_file_hold_the_same_export(
    here: Path, kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, printed, err = run_cli(capsys, "kb", "export", "--kb", str(kb_copy))
    assert code == 0, err
    for option in ("--output", "-o"):  # `-`: standard output, as without --output.
        assert run_cli(capsys, "kb", "export", option, "-", "--kb", str(kb_copy)) == (
            0,
            printed,
            "",
        )
    assert sorted(p.name for p in here.rglob("*")) == ["sub"]
    code, _, err = run_cli(capsys, "kb", "export", "-o", "./-", "--kb", str(kb_copy))
    assert code == 0, err
    assert (here / "-").read_text(encoding="utf-8") == printed
    exported = json.loads(printed)["passages"]
    assert len(exported) == len(load_knowledge_base(kb_copy))


def test_an_export_never_replaces_a_device_a_fifo_or_a_link(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`--output /dev/null` turned the device into a plain file (as root); a FIFO a reader waited
    on, and a symlink, each became a file of their own. A device is written to as it is, a FIFO
    nothing reads refused (see test_export_to_standard_output.py for one that is read)."""
    kb = tmp_path / "kb"
    assert run_cli(capsys, "kb", "import", str(SEED_DATA), "--kb", str(kb))[0] == 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    specials = [(fifo, 2, "a FIFO (named pipe) nothing reads: start its reader first")]
    # A null device of the test's own (root may make one): never the system's /dev/null, which a
    # regression would turn into a plain file for everything on the machine.
    device = tmp_path / "null"
    with contextlib.suppress(PermissionError):
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        specials.append((device, 0, f"exported 10 passages to {device}"))
    for path, status, said in specials:
        before = path.stat().st_mode
        code, out, err = run_cli(capsys, "kb", "export", "--output", str(path), "--kb", str(kb))
        assert (code, out) == (status, "")
        assert said in err
        assert path.stat().st_mode == before
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    target.write_text("old", encoding="utf-8")
    link.symlink_to(target)
    assert run_cli(capsys, "kb", "export", "--output", str(link), "--kb", str(kb))[0] == 0
    assert link.is_symlink() and json.loads(target.read_text(encoding="utf-8"))["passages"]
