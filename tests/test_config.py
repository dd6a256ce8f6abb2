"""Settings: defaults, then the TOML file, then the environment, then explicit overrides."""

from pathlib import Path

import pytest

from chatbot.config import load_settings
from chatbot.errors import HelpdeskError


def write_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    monkeypatch.setenv("HELPDESK_CONFIG", str(path))


def test_defaults_replay_offline() -> None:
    settings = load_settings()
    assert settings.valen.replay == "on"
    assert settings.engine.threshold == 0.7 and settings.engine.k == 5
    assert settings.knowledge_base.path.name == "knowledge_base"


def test_file_then_env_then_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(
        tmp_path,
        monkeypatch,
        '[engine]\nthreshold = 0.8\nk = 7\n[valen]\nbase_url = "http://file"\nmodel = "m1"\n',
    )
    settings = load_settings()
    assert (settings.engine.threshold, settings.engine.k) == (0.8, 7)
    assert settings.valen.base_url == "http://file"
    monkeypatch.setenv("HELPDESK_ENGINE__K", "3")
    monkeypatch.setenv("VALEN_BASE_URL", "http://env")
    settings = load_settings()
    assert settings.engine.k == 3 and settings.engine.threshold == 0.8
    assert settings.valen.base_url == "http://env" and settings.valen.model == "m1"
    assert load_settings(engine={"k": 9}).engine.k == 9


def test_short_env_names_win_over_long_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPDESK_VALEN__MODEL", "long")
    monkeypatch.setenv("VALEN_MODEL", "short")
    assert load_settings().valen.model == "short"


def test_api_key_is_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VALEN_API_KEY", "sk-do-not-print")
    settings = load_settings()
    assert settings.valen.api_key is not None
    assert settings.valen.api_key.get_secret_value() == "sk-do-not-print"
    assert "sk-do-not-print" not in repr(settings) and "sk-do-not-print" not in str(settings)


def test_bad_values_are_one_line_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VALEN_REPLAY", "sometimes")
    with pytest.raises(HelpdeskError, match=r"^invalid setting valen\.replay: ") as error:
        load_settings()
    assert "\n" not in str(error.value)
    monkeypatch.delenv("VALEN_REPLAY")
    write_config(tmp_path, monkeypatch, "[engine\n")
    with pytest.raises(HelpdeskError, match="cannot read configuration"):
        load_settings()
