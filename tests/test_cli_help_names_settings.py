"""`--help` never states a default the settings may have changed: `ask --help` said "(default
0.7)" and `stats --help` "the configured one, 0.7" with `[engine] threshold = 0.75` configured.
Help is built without loading the settings (it would cost ~0.2 s), so it names the setting and
its built-in value."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.cli.options import BUILT_IN
from chatbot.config import Settings
from chatbot.paths import shipped_cache
from tests.cli_run import run_cli


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["ask"], "(default: setting engine.threshold, 0.7 unless configured)"),
        (["ask"], "(default: setting engine.k, 5 unless configured)"),
        (["eval"], "(default: setting engine.threshold, 0.7 unless configured)"),
        (["stats"], "setting engine.threshold, 0.7 unless configured)"),
        (["bot"], "(default: setting bot.concurrency, 8 unless configured)"),
    ],
)
def test_help_names_the_setting_and_its_built_in_value(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    config = tmp_path / "config.toml"
    config.write_text("[engine]\nthreshold = 0.75\nk = 3\n\n[bot]\nconcurrency = 2\n")
    monkeypatch.setenv("HELPDESK_CONFIG", str(config))
    monkeypatch.setenv("COLUMNS", "1000")  # One line per option: the words are not wrapped.
    code, out, _ = run_cli(capsys, *argv, "--help")
    assert code == 0 and said in out
    assert "(default 0.7)" not in out and "(default 5)" not in out
    assert "the configured one, 0.7" not in out and "(default 8;" not in out


def test_the_built_in_values_named_are_the_settings_defaults() -> None:
    settings = Settings()
    assert BUILT_IN == {
        "engine.threshold": f"{settings.engine.threshold:g}",
        "engine.k": str(settings.engine.k),
        "bot.concurrency": str(settings.bot.concurrency),
        "valen.cache": "the recorded answers shipped with helpdesk",
        "valen.replay": settings.valen.replay,
        "valen.dialect": settings.valen.dialect,
        "web.host": settings.web.host,
        "web.port": str(settings.web.port),
        "web.bots": str(settings.web.bots),
    }
    assert settings.valen.cache == shipped_cache()  # What valen.cache's words name.
