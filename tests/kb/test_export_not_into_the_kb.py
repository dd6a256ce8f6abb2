"""`helpdesk kb export --output` into the knowledge-base folder it reads is refused in one line,
exit status 2, symlinks resolved: `--output kb/helmet.json` replaced the passage with the export
("exported 10 passages", exit 0), which no passage reads as, and kept no history of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import run_cli
from tests.kb.helpers import snapshot


def test_an_export_into_the_knowledge_base_is_refused(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "link"
    link.symlink_to(kb_copy, target_is_directory=True)
    outside = tmp_path / "out.json"
    outside.symlink_to(kb_copy / "student-pass.json")
    before = snapshot(kb_copy)
    cases = [
        (kb_copy / "helmet.json", kb_copy),  # A passage's file.
        (kb_copy / "new.json", kb_copy),  # Would be a passage file too.
        (kb_copy / "zh" / "export.json", kb_copy),  # A translation's folder is inside it.
        (link / "helmet.json", kb_copy),  # Through a link to the folder.
        (kb_copy / "helmet.json", link),  # The knowledge base named through one.
        (outside, kb_copy),  # A link from outside to a passage file.
    ]
    for output, kb in cases:
        code, out, err = run_cli(capsys, "kb", "export", "--output", str(output), "--kb", str(kb))
        assert (code, out) == (2, ""), output
        assert err == (
            f"helpdesk: error: {output}: inside the knowledge base {kb}; write the export "
            "outside it\n"
        )
    assert snapshot(kb_copy) == before
    assert outside.is_symlink()

    # Beside it is fine.
    code, _, err = run_cli(capsys, "kb", "export", "--output", str(tmp_path / "kb.json"),
                           "--kb", str(kb_copy))  # fmt: skip
    assert code == 0 and "exported 10 passages" in err
