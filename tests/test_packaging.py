"""The package as a user installs it: a wheel carries the shipped knowledge base and recorded
answers, and `helpdesk ask` works from any folder with nothing of the source tree around."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from tests.conftest import ROOT

Q1 = "I was charged twice for the same ride, can I get my money back?"


def pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_package_under_chatbot_is_listed_for_the_build() -> None:
    setuptools = pyproject()["tool"]["setuptools"]  # type: ignore[index]
    listed = set(setuptools["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "chatbot").rglob("__init__.py")}  # fmt: skip
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"


def test_rank_bm25_is_a_test_dependency_only() -> None:
    project = pyproject()["project"]
    assert not any(d.startswith("rank-bm25") for d in project["dependencies"])  # type: ignore[index]
    assert any(d.startswith("rank-bm25") for d in project["optional-dependencies"]["test"])  # type: ignore[index]


def build_wheel(tmp_path: Path) -> Path:
    """Build from a copy of the source (never writing build/ into the checkout), offline, with
    the setuptools already installed."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ["pyproject.toml", "README.md"]:
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns(".*", "__pycache__")
    for name in ["chatbot", "knowledge_base", "caches"]:
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--quiet", "--wheel-dir", str(dist), str(source)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    [wheel] = dist.glob("*.whl")
    return wheel


def test_a_wheel_installed_elsewhere_answers_from_its_own_data(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(archive.read(n) for n in names if n.endswith("METADATA")).decode()
    assert "chatbot/resources/knowledge_base/card-charged-twice.json" in names
    assert "chatbot/resources/caches/rerank.json" in names
    assert "chatbot/tui/screens/editor.tcss" in names
    assert "chatbot/locales/zh/LC_MESSAGES/helpdesk.po" in names  # Compiled when loaded.
    assert "chatbot/resources/knowledge_base/zh/helmet.json" in names
    assert not any("/." in name for name in names)  # No history, locks or temporary files.
    assert 'Requires-Dist: rank-bm25==0.2.2; extra == "test"' in metadata

    # A fresh virtual environment with the wheel installed; its dependencies come from this one's
    # site-packages (added as a plain path, so this checkout's editable install stays out).
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)  # fmt: skip
    python = venv / "bin" / "python"
    # Without PYTHONPATH: a checkout on it shows pip this project's egg-info, and pip then takes
    # the wheel for installed already and installs nothing.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--quiet", str(wheel)],
        check=True, capture_output=True, timeout=120, env=clean,
    )  # fmt: skip
    [purelib] = Path(venv / "lib").glob("python3*/site-packages")
    (purelib / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "HELPDESK", "VALEN"))}
    env |= {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(tmp_path / "config")}  # fmt: skip
    # rank_bm25 is importable here (the test extra) but must not be needed: block it.
    code = (
        "import sys; sys.modules['rank_bm25'] = None\n"
        "import chatbot\n"
        "from chatbot.cli.main import main\n"
        "print(chatbot.__file__, file=sys.stderr)\n"
        f"sys.exit(main(['ask', {Q1!r}, '--json']))\n"
    )
    result = subprocess.run([str(python), "-c", code], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert str(purelib / "chatbot" / "__init__.py") in result.stderr
    assert json.loads(result.stdout)["answer"]["id"] == "card-charged-twice"  # Recorded answer.
    # The user's knowledge base was seeded from the wheel's copy, its Chinese translation too.
    assert (tmp_path / "data" / "helpdesk" / "knowledge_base" / "helmet.json").is_file()
    assert (tmp_path / "data" / "helpdesk" / "knowledge_base" / "zh" / "helmet.json").is_file()
    # The Chinese catalog loads from the installed package.
    translated = subprocess.run(
        [str(python), "-c", "from chatbot.i18n import translations; "
         "print(translations('zh').gettext('Talk to a person'))"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert translated.returncode == 0, translated.stderr
    assert translated.stdout.strip() == "转人工"
    # The console script is there too.
    script = subprocess.run([str(venv / "bin" / "helpdesk"), "kb", "list"], cwd=elsewhere,
                            env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert script.returncode == 0 and len(script.stdout.splitlines()) == 10, script.stderr
