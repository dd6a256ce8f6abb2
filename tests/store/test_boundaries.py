"""The store is core: it never imports Textual."""

from __future__ import annotations

import subprocess
import sys


def test_the_store_does_not_import_textual() -> None:
    code = (
        "import sys, chatbot.store, chatbot.store.store, chatbot.store.schema\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
