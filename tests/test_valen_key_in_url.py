"""The API key written into the base URL (a gateway's path segment, a bare query) is never shown:
not by `valen check` (text or JSON), a bot's start line, nor an error about the URL."""

from __future__ import annotations

import json

import pytest

from chatbot.cli.bot import valen_mode
from chatbot.config import load_settings
from chatbot.valen.redact import REDACTED, display_url, url_secrets
from tests.valen_faults import helpdesk
from tests.valen_server import ValenTestServer

KEY = "sk-qa-SECRET-abc123"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"http://h:1/v1/{KEY}", f"http://h:1/v1/{REDACTED}"),
        (f"http://h:1/v1?{KEY}", f"http://h:1/v1?{REDACTED}"),
        (f"http://h:1/{KEY}/v1?region=eu", f"http://h:1/{REDACTED}/v1?region={REDACTED}"),
        ("http://h:1/v1/sk-qa%2FSECRET", f"http://h:1/v1/{REDACTED}"),  # As a URL spells "/".
    ],
)
def test_the_key_is_hidden_wherever_the_url_holds_it(url: str, shown: str) -> None:
    key = "sk-qa/SECRET" if "%2F" in url else KEY
    assert display_url(url, key=key) == shown


def test_a_query_item_without_a_value_is_hidden_even_with_no_key_known() -> None:
    # `?token` alone is a value as much as a name: it could be any gateway's credential.
    assert display_url("http://h:1/v1?tok-0123456789") == f"http://h:1/v1?{REDACTED}"
    assert "tok-0123456789" in url_secrets("http://h:1/v1?tok-0123456789")


@pytest.mark.parametrize("where", ["path", "query"])
def test_valen_check_never_shows_the_key(where: str, valen_server: ValenTestServer) -> None:
    base = valen_server.base_url
    url = f"{base}/{KEY}" if where == "path" else f"{base}?{KEY}"
    env = {"VALEN_API_KEY": KEY}
    text = helpdesk("valen", "check", "--base-url", url, env=env)
    as_json = helpdesk("valen", "check", "--base-url", url, "--json", env=env)
    for result in (text, as_json):
        # The test server knows only /v1/decisions: with the key in the path it says 404.
        assert result.returncode == (1 if where == "path" else 0), result.stderr
        assert KEY not in result.stdout + result.stderr
    report = json.loads(as_json.stdout)
    assert REDACTED in report["url"] and REDACTED in report["base_url"]
    assert f"POST {report['url']}" in text.stdout


def test_a_bot_start_line_never_shows_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    settings = load_settings(valen={"replay": "off", "base_url": f"http://h:1/v1/{KEY}?{KEY}"})
    assert valen_mode(settings) == f"live, http://h:1/v1/{REDACTED}?{REDACTED}"


def test_a_refused_base_url_is_echoed_without_the_key() -> None:
    result = helpdesk("ask", "hi", "--replay", "off", "--base-url", f"http://h:99999/{KEY}",
                      env={"VALEN_API_KEY": KEY})  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == (
        f"helpdesk: error: invalid option --base-url: 'http://h:99999/{REDACTED}' has an invalid "
        "port, 99999: a port is a number from 1 to 65535\n"
    )
