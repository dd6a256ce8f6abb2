"""The core never imports Textual, so it can be tested and reused without a UI."""

import subprocess
import sys
from pathlib import Path

CORE = [
    "chatbot.knowledge_base",
    "chatbot.retrieval",
    "chatbot.valen",
    "chatbot.engine",
    "chatbot.desk",
    "chatbot.store",
    "chatbot.notices",
    "chatbot.config",
    "chatbot.assembly",
    "chatbot.accounts",
]


def test_core_modules_do_not_import_textual() -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        f"for name in {CORE!r}:\n"
        "    module = importlib.import_module(name)\n"
        "    for info in pkgutil.walk_packages(getattr(module, '__path__', []), name + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_importing_the_package_creates_nothing(tmp_path: Path) -> None:
    code = "import chatbot.config, chatbot.cli.main; print('ok')"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"HOME": str(tmp_path)}
    )
    assert result.stdout.strip() == "ok", result.stderr
    assert list(tmp_path.iterdir()) == []
