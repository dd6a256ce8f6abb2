"""Live mode in the app with an API key: the key reaches Valen and nothing else, the database
included, even when the server echoes it back in an error."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.tui import create_app
from tests.tui.conftest import Q1, SIZE
from tests.tui.helpers import ask
from tests.valen_server import Received, Reply, ValenTestServer, probability_reply

KEY = "live-key-" + "0123456789abcdef"


async def test_the_key_never_reaches_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, valen_server: ValenTestServer
) -> None:
    seen: list[str] = []

    def respond(received: Received, _: int) -> Reply:
        header = received.headers.get("authorization", "")
        seen.append(header)
        if "temporary hold" in received.body["input"]:
            return probability_reply(received, 0.2)
        # A careless gateway that quotes the credential back in its error message.
        return Reply(status=401, body={"error": {"message": f"bad credential {header}"}})

    valen_server.responder = respond
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    db = tmp_path / "helpdesk.sqlite3"
    settings = load_settings(
        store={"db": db},
        valen={"replay": "off", "base_url": valen_server.base_url, "cache": tmp_path / "c.json"},
    )
    async with httpx.AsyncClient() as http:
        app = create_app(settings, mode="chat", http=http, agent="ana", timings=False)
        async with app.run_test(size=SIZE) as pilot:
            await ask(pilot, Q1)
    assert seen and all(header == f"Bearer {KEY}" for header in seen)

    desk = open_service(settings)
    try:
        [stored] = desk.decisions(1)
        errors = [c.error for c in stored.decision.candidates if c.error]
    finally:
        desk.close()
    assert errors and all("auth" in e and "[redacted]" in e for e in errors)
    assert stored.decision.reason is not None and stored.decision.reason.value == "valen-error"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert KEY.encode() not in data and KEY[:12].encode() not in data, path
