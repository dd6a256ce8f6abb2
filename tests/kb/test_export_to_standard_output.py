"""`helpdesk kb export` to standard output by name, or into a pipe or device: written to as it is.

`helpdesk kb export -o /dev/stdout | cat` failed with "/proc/26180/fd/pipe:[279161]: cannot
write: No such file or directory": the export wrote a temporary file beside the link's target
and renamed it over it, and a pipe has no folder to write beside. `-o -` was refused, a FIFO
with a reader and a device too. Now `-o -` is standard output, a descriptor of ours
(/dev/stdout, /dev/fd/N) is written as the shell opened it (`>>` appends), and a FIFO or a device
is written to, never replaced; a FIFO nothing reads is refused at once, not waited on."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import run_cli
from tests.conftest import ROOT


def helpdesk(*args: str, **popen: Any) -> subprocess.CompletedProcess[str]:
    """`helpdesk ARGS` in a process of its own, as a shell runs it (`popen`: its stdout, the
    descriptors it keeps), without the variables that would choose another knowledge base."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HELPDESK_", "VALEN_"))}
    popen.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "chatbot", *args], cwd=ROOT, stderr=subprocess.PIPE, text=True,
        timeout=60, env={**clean, "PYTHONPATH": str(ROOT)}, check=False, **popen,
    )  # fmt: skip


def exported(kb: Path) -> str:
    """The export as `kb export` prints it with no --output."""
    done = helpdesk("kb", "export", "--kb", str(kb))
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert '"passages": [' in done.stdout
    return done.stdout


@pytest.mark.parametrize("output", ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_standard_output_by_name_into_a_pipe(kb_copy: Path, output: str) -> None:
    done = helpdesk("kb", "export", "-o", output, "--kb", str(kb_copy))
    assert done.returncode == 0, done.stderr
    assert done.stdout == exported(kb_copy)
    assert done.stderr == ""  # Standard output, as without --output: nothing to say of where.


def test_dev_stdout_appended_to_a_file_keeps_what_was_there(kb_copy: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("kept\n", encoding="utf-8")
    with log.open("a", encoding="utf-8") as appended:
        done = helpdesk("kb", "export", "-o", "/dev/stdout", "--kb", str(kb_copy), stdout=appended)
    assert done.returncode == 0, done.stderr
    assert log.read_text(encoding="utf-8") == "kept\n" + exported(kb_copy)


def test_a_descriptor_the_shell_opened_is_written_to(kb_copy: Path) -> None:
    """`-o >(gzip > kb.json.gz)`: the shell hands the command a pipe as /dev/fd/63."""
    reading, writing = os.pipe()
    got: list[str] = []
    with os.fdopen(reading, encoding="utf-8") as pipe:
        reader = threading.Thread(target=lambda: got.append(pipe.read()))
        reader.start()
        try:
            done = helpdesk("kb", "export", "-o", f"/dev/fd/{writing}", "--kb", str(kb_copy),
                            pass_fds=(writing,))  # fmt: skip
        finally:
            os.close(writing)
            reader.join(30)
    assert done.returncode == 0, done.stderr
    assert got == [exported(kb_copy)]
    assert done.stderr == f"exported 10 passages to /dev/fd/{writing}\n"


def _read_all(fifo: Path, got: list[str]) -> None:
    with fifo.open(encoding="utf-8") as reading:
        got.append(reading.read())


def test_a_fifo_is_written_to_when_read_and_refused_at_once_when_not(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # Nothing reads it: said at once (a wait would hang the test until its timeout).
    code, out, err = run_cli(capsys, "kb", "export", "-o", str(fifo), "--kb", str(kb_copy))
    assert (code, out) == (2, "")
    assert (
        err
        == f"helpdesk: error: {fifo}: a FIFO (named pipe) nothing reads: start its reader first\n"
    )
    got: list[str] = []
    reader = threading.Thread(target=_read_all, args=(fifo, got))
    reader.start()
    try:
        done = helpdesk("kb", "export", "-o", str(fifo), "--kb", str(kb_copy))
    finally:
        with contextlib.suppress(OSError):  # A reader still waiting (the export failed): freed.
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(30)
    assert done.returncode == 0, done.stderr
    assert got == [exported(kb_copy)]
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # Still a FIFO, not a file renamed over it.


def test_a_device_is_written_to_and_stays_a_device(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A null device of the test's own: never the system's /dev/null, which a regression would
    # turn into a plain file for everything on the machine.
    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device needs root")
    code, out, err = run_cli(capsys, "kb", "export", "-o", str(device), "--kb", str(kb_copy))
    assert (code, out) == (0, "")
    assert err == f"exported 10 passages to {device}\n"
    assert stat.S_ISCHR(device.stat().st_mode)
