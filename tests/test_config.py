"""Settings: defaults, then the TOML file, then the environment, then explicit overrides."""

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.config import load_settings
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.store import PassageStore
from tests.conftest import ROOT, SHIPPED_KB


def write_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    monkeypatch.setenv("HELPDESK_CONFIG", str(path))
    return path


def test_defaults_replay_offline() -> None:
    settings = load_settings()
    assert settings.valen.replay == "on"
    assert settings.engine.threshold == 0.7 and settings.engine.k == 5
    assert isinstance(settings.knowledge_base.path, Path)
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
    # Where the value came from is named: the variable, or the file.
    with pytest.raises(HelpdeskError, match=r"^invalid setting valen\.replay from VALEN_REPLAY: "):
        load_settings()
    monkeypatch.delenv("VALEN_REPLAY")
    monkeypatch.setenv("HELPDESK_ENGINE__THRESHOLD", "abc")
    with pytest.raises(HelpdeskError) as error:
        load_settings()
    assert str(error.value) == (
        "invalid setting engine.threshold from HELPDESK_ENGINE__THRESHOLD: Input should be a "
        "valid number, unable to parse string as a number"
    )
    monkeypatch.delenv("HELPDESK_ENGINE__THRESHOLD")
    path = write_config(tmp_path, monkeypatch, "[engine]\nthreshold = 2\n")
    with pytest.raises(HelpdeskError) as error:
        load_settings()
    assert str(error.value) == (
        f"invalid setting engine.threshold in {path}: Input should be less than or equal to 1"
    )
    # A value the caller gave (the command line names its own options) is not blamed on them.
    with pytest.raises(HelpdeskError) as error:
        load_settings(engine={"threshold": 3})
    assert str(error.value).startswith("invalid setting engine.threshold: ")
    write_config(tmp_path, monkeypatch, "[engine\n")
    with pytest.raises(HelpdeskError, match="cannot read configuration"):
        load_settings()


def refusal(monkeypatch: pytest.MonkeyPatch, url: str) -> str:
    """Why `VALEN_BASE_URL=url` is refused at start (the message after the setting's name); the
    variable is unset again."""
    monkeypatch.setenv("VALEN_BASE_URL", url)
    with pytest.raises(HelpdeskError) as error:
        load_settings()
    monkeypatch.delenv("VALEN_BASE_URL")
    prefix = "invalid setting valen.base_url from VALEN_BASE_URL: "
    assert str(error.value).startswith(prefix)
    return str(error.value).removeprefix(prefix)


@pytest.mark.parametrize(
    "url", ["ftp://valen.example", "api.example.com/v1", "http://", "https://[::1", "http://a:xx/"]
)
def test_a_base_url_that_is_not_http_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    # "ftp://host" used to be taken: each passage then failed four times (UnsupportedProtocol)
    # at the first question, and `valen check` asked whether the server was running.
    assert refusal(monkeypatch, url) == (
        f"{url!r} is not an http:// or https:// URL like https://api.example.com/v1"
    )
    for good in ("http://127.0.0.1:8080/v1", "HTTPS://[::1]:8443/v1", " https://a.example/v1 "):
        assert load_settings(valen={"base_url": good}).valen.base_url == good.strip()


@pytest.mark.parametrize(
    "url",
    [
        "http://bob:PWSECRET@127.0.0.1:8080/v1",
        "https://PWSECRET@api.example/v1",
        "http://:PWSECRET@[::1",
    ],
)
def test_a_base_url_with_credentials_is_refused_without_repeating_them(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    # httpx sent "user:password@" as Basic auth in place of the API key, and the password went,
    # base64-encoded, into `valen check`'s output and a bot's stored errors.
    refused = refusal(monkeypatch, url)
    assert refused == (
        "the URL holds a user name or password (before an @): give the API key as VALEN_API_KEY "
        "instead, and the URL without them"
    )
    assert "PWSECRET" not in refused
    # An @ after the host is a path or query, not credentials.
    for good in ("http://127.0.0.1:8080/v1/@team", "https://a.example/v1?by=a@b"):
        assert load_settings(valen={"base_url": good}).valen.base_url == good


def test_a_deeply_nested_or_hostile_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep_array = "x = " + "[" * 100_000 + "]" * 100_000
    deep_table = "x = " + "{a = " * 5_000 + "1" + "}" * 5_000
    for text in [deep_array, deep_table, "[engine]\nk = 1" + "0" * 10_000]:
        write_config(tmp_path, monkeypatch, text)
        with pytest.raises(HelpdeskError, match="^cannot read configuration ") as error:
            load_settings()
        assert "\n" not in str(error.value)
    (tmp_path / "config.toml").write_bytes(b"[engine]\nthreshold = 0.8 # caf\xe9\n")
    with pytest.raises(HelpdeskError, match="not UTF-8 text"):
        load_settings()


def test_a_fifo_as_the_config_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    env = os.environ | {"HELPDESK_CONFIG": str(fifo)}
    result = subprocess.run([sys.executable, "-m", "chatbot", "kb", "list"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=30)  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == (
        f"helpdesk: error: cannot read configuration {fifo}: not a regular file\n"
    )


def test_a_config_file_named_but_missing_is_warned_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A typo in HELPDESK_CONFIG left every default in force, and nothing said so.
    typo = tmp_path / "confg.toml"
    monkeypatch.setenv("HELPDESK_CONFIG", str(typo))
    with caplog.at_level(logging.WARNING):
        assert load_settings().engine.threshold == 0.7
        load_settings()
    assert [r.getMessage() for r in caplog.records] == [
        f"HELPDESK_CONFIG={typo}: no such file; settings from it not used"
    ]
    # The file at the XDG path is optional: none there is said nothing about.
    caplog.clear()
    monkeypatch.delenv("HELPDESK_CONFIG")
    with caplog.at_level(logging.WARNING):
        load_settings()
    assert caplog.records == []


def test_a_misspelled_key_or_variable_is_named_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    write_config(tmp_path, monkeypatch, "[engine]\ntreshold = 0.9\n[valen]\nreplay = 'off'\n")
    monkeypatch.setenv("HELPDESK_ENGINE__KK", "3")
    monkeypatch.setenv("HELPDESK_ENGINE__K", "4")  # Known: no warning.
    # A whole section as JSON is known, but a key inside it was not checked at all.
    monkeypatch.setenv("HELPDESK_VALEN", '{"model": "m", "read_timeout_sx": 3}')
    with caplog.at_level(logging.WARNING):
        settings = load_settings()
        load_settings()
    assert settings.engine.threshold == 0.7 and settings.engine.k == 4  # The typo had no effect.
    assert settings.valen.model == "m" and settings.valen.read_timeout_s == 15.0
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [
        "unknown environment variable HELPDESK_ENGINE__KK ignored "
        "(did you mean 'HELPDESK_ENGINE__K'?)",
        "HELPDESK_VALEN: unknown setting 'valen.read_timeout_sx' ignored "
        "(did you mean 'valen.read_timeout_s'?)",
        f"{tmp_path / 'config.toml'}: unknown setting 'engine.treshold' ignored "
        "(did you mean 'engine.threshold'?)",
    ]


def test_the_default_knowledge_base_is_the_users_copy_of_the_shipped_one(
    tmp_path: Path,
) -> None:
    settings = load_settings()
    path = settings.knowledge_base.path
    assert isinstance(path, Path)
    assert path == tmp_path / "data" / "helpdesk" / "knowledge_base"  # XDG_DATA_HOME, in tmp.
    shipped = {p.name: p.read_bytes() for p in SHIPPED_KB.glob("*.json")}
    assert {p.name: p.read_bytes() for p in path.glob("*.json")} == shipped
    assert (path / "README.md").is_file()
    PassageStore(path).delete("helmet")
    load_settings()  # Seeded once: a deleted passage stays deleted.
    assert not (path / "helmet.json").exists()
    assert (SHIPPED_KB / "helmet.json").is_file()


def test_kb_commands_from_the_repository_never_touch_the_shipped_files(tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in SHIPPED_KB.iterdir() if p.is_file()}
    env = os.environ | {"XDG_DATA_HOME": str(tmp_path / "data")}
    for argv in (["kb", "add", "--id", "mine", "--text", "Mine."], ["kb", "rm", "helmet"]):
        result = subprocess.run([sys.executable, "-m", "chatbot", *argv], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=60)  # fmt: skip
        assert result.returncode == 0, result.stderr
    assert {p.name: p.read_bytes() for p in SHIPPED_KB.iterdir() if p.is_file()} == before
    users = tmp_path / "data" / "helpdesk" / "knowledge_base"
    assert (users / "mine.json").is_file() and not (users / "helmet.json").exists()


def test_a_postgresql_knowledge_base_is_kept_as_its_url(monkeypatch: pytest.MonkeyPatch) -> None:
    # A Path would fold `//` and lose the scheme; a directory stays a Path.
    url = "postgresql://editor:secret@db.example:5432/helpdesk"
    monkeypatch.setenv("HELPDESK_KB", url)
    assert load_settings().knowledge_base.path == url
    assert load_settings(knowledge_base={"path": "kb/dir"}).knowledge_base.path == Path("kb/dir")
    assert load_settings(knowledge_base={"path": "POSTGRES://h/d"}).knowledge_base.path == (
        "POSTGRES://h/d"
    )


@pytest.mark.parametrize(
    ("variable", "name"),
    [
        ("HELPDESK_BOT__LEASE_S", "bot.lease_s"),
        ("HELPDESK_VALEN__READ_TIMEOUT_S", "valen.read_timeout_s"),
    ],
)
def test_an_infinite_number_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, variable: str, name: str
) -> None:
    # `inf` passed "greater than 0": the bot took it and failed with an OverflowError traceback
    # when it worked out when its lease would end.
    monkeypatch.setenv(variable, "inf")
    with pytest.raises(HelpdeskError) as error:
        load_settings()
    assert str(error.value) == (
        f"invalid setting {name} from {variable}: Input should be a finite number"
    )


@pytest.mark.parametrize(
    ("text", "name"),
    [("[engine]\nthreshold = true\n", "engine.threshold"), ("[engine]\nk = true\n", "engine.k"),
     ("[bot]\nconcurrency = false\n", "bot.concurrency")],
)  # fmt: skip
def test_true_or_false_is_no_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, name: str
) -> None:
    # `threshold = true` was taken as 1.0 (the bot then never answered), `k = true` as 1.
    path = write_config(tmp_path, monkeypatch, text)
    with pytest.raises(HelpdeskError) as error:
        load_settings()
    assert str(error.value) == (
        f"invalid setting {name} in {path}: expected a number, not true or false"
    )
