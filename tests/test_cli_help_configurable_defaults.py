"""No option's `--help` states as fixed a default that the settings file (or the environment) can
change: `--dialect` said "default: decisions" with `[valen] dialect = "systemone"` configured,
`--cache` "default: the recorded answers shipped with helpdesk" with `[valen] cache` set, and
`serve --port` "default 8000" with `[web] port = 9000`. Each names its setting and that setting's
built-in value, as `--threshold` does."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.cli.main import build_parser
from tests.cli_run import run_cli

# The options that set a setting (`settings_from`, `serve`'s web options), by their dest.
SETTING_OF = {
    "kb": "knowledge_base.path",
    "db": "store.db",
    "cache": "valen.cache",
    "replay": "valen.replay",
    "base_url": "valen.base_url",
    "dialect": "valen.dialect",
    "threshold": "engine.threshold",
    "k": "engine.k",
    "concurrency": "bot.concurrency",
    "locale": "ui.locale",
    "agent": "agent.name",
    "host": "web.host",
    "port": "web.port",
    "public_url": "web.public_url",
    "trust_proxy_headers": "web.trust_proxy_headers",
    "bots": "web.bots",
}


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, (*path, name))


def test_every_default_of_a_setting_is_said_to_be_the_setting() -> None:
    checked = 0
    for path, parser in parsers(build_parser()):
        for action in parser._actions:
            setting = SETTING_OF.get(action.dest)
            if setting is None or not action.help or "default" not in action.help:
                continue
            checked += 1
            # The agent's name says "the name saved in your settings file" in its own words.
            if setting == "agent.name":
                assert "settings file" in action.help, (path, action.help)
                continue
            if path == ("chat",) and setting == "ui.locale":
                continue  # A customer's chat starts in the one given or the terminal's: no setting.
            assert f"setting {setting}" in action.help, (path, action.dest, action.help)
    assert checked > 40  # The engine options and --db of many commands.


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["ask"], "(env VALEN_DIALECT; default: setting valen.dialect, decisions unless "
                  "configured)"),
        (["valen", "check"], "default: setting valen.dialect, decisions unless configured)"),
        (["ask"], "(env VALEN_CACHE; default: setting valen.cache, the recorded answers shipped "
                  "with helpdesk unless configured)"),
        (["eval"], "(env VALEN_REPLAY; default: setting valen.replay, on unless configured)"),
        (["serve"], "(default: setting web.host, 127.0.0.1 unless configured)"),
        (["serve"], "(default: setting web.port, 8000 unless configured)"),
        (["serve"], "(default: setting web.bots, 1 unless configured)"),
        (["bot"], "(setting store.db, env HELPDESK_DB; default: "),
        (["chat"], "(setting knowledge_base.path, env HELPDESK_KB; default: "),
    ],
)  # fmt: skip
def test_help_with_a_settings_file_names_the_settings(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    config = tmp_path / "config.toml"
    config.write_text(
        '[valen]\ndialect = "systemone"\nreplay = "off"\ncache = "/srv/cache.json"\n\n'
        '[web]\nhost = "0.0.0.0"\nport = 9000\nbots = 3\n'
    )
    monkeypatch.setenv("HELPDESK_CONFIG", str(config))
    monkeypatch.setenv("COLUMNS", "1000")  # One line per option: the words are not wrapped.
    code, out, _ = run_cli(capsys, *argv, "--help")
    assert code == 0 and said in out, out
    for fixed in ("default: decisions", "recorded answers only (default)", "default 127.0.0.1",
                  "default 8000", "default 1;", "default: the recorded answers"):  # fmt: skip
        assert fixed not in out, (fixed, out)
