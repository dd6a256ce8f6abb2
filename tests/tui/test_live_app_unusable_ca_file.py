"""The app asking Valen live at an `https://` base URL, with `SSL_CERT_FILE` naming no file,
ends at its start with one line (said once the terminal is back), and a question typed meanwhile
stays pending for a bot that can ask Valen. It used to run on, its bot sending every question to
a person as `valen-error` ("unexpected FileNotFoundError while asking Valen")."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.config import load_settings
from chatbot.desk.service import DeskService
from chatbot.tui import create_app
from tests.tui.conftest import SIZE, FrozenClock
from tests.tui.helpers import GatedLoader, wait_until


async def test_the_app_ends_with_one_line_and_the_question_waits(
    db_path: Path, clock: FrozenClock, other: DeskService, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    missing = tmp_path / "nope.pem"
    monkeypatch.setenv("SSL_CERT_FILE", str(missing))
    monkeypatch.setenv("VALEN_API_KEY", "sk-trust-test")
    settings = load_settings(
        store={"db": db_path}, valen={"replay": "off", "base_url": "https://127.0.0.1:9/v1"}
    )
    load = GatedLoader(settings)
    # No `http`: the app makes its own client, as `helpdesk` does.
    app = create_app(load, mode="chat", clock=clock, timings=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        await pilot.press(*"helmet", "enter")
        load.opened.set()
        await wait_until(pilot, lambda: app.startup_error is not None, timeout=20)
    assert app.return_code == 2
    assert app.startup_error == (
        f"SSL_CERT_FILE={missing}: no such file (it names the CA certificates Valen's TLS trusts)"
    )
    [conversation] = other.conversations()
    assert [m.text for m in other.messages(conversation.id)] == ["helmet"]
    assert other.conversation(conversation.id).pending == 1  # Not sent to a person.
