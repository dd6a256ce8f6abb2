"""What the app's follower of a PostgreSQL knowledge base says to an editor in an outage.

A tester found: while the knowledge base's database could not be reached, the follower's failed
rebuild popped the driver's line, in English whatever the editor's language ("Knowledge base not
reloaded: postgresql://postgres@…/x: cannot connect to the knowledge base: connection failed: …
FATAL: database "x" is not currently accepting connections"). Now it says one plain sentence in
the editor's language, once per outage; nothing once it is back (the editor's own lines say that
of a write it could not make). The outage is made as in `test_editor_outage_writes`.
"""

from __future__ import annotations

import logging

import pytest
from textual.pilot import Pilot

from chatbot.engine.engine import Engine
from chatbot.tui import HelpDeskApp
from tests.kb.backends import pg_url
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.editor_helpers import open_editor
from tests.tui.helpers import wait_until

# The same knowledge base in PostgreSQL, editor languages and settings as the editor's own
# outage tests.
from tests.tui.postgres_helpers import Outage, kb_url, locale, outage, settings

__all__ = ["kb_url", "locale", "outage", "pg_url", "settings"]

AWAY = {
    "en": "The knowledge base cannot be reached just now: the bot answers from the passages it "
    "had. Nothing is lost.",
    "zh": "暂时无法连接知识库：机器人按已有的段落回答。没有丢失任何内容。",
}


class Watched:
    """Every notification the app makes (a toast may be gone from the screen before it is
    looked for), and how often the follower has compared stamps and put a new engine in."""

    def __init__(self, app: HelpDeskApp) -> None:
        self.said: list[str] = []
        self.checks = 0
        self.rebuilt = 0
        notify = app.notify

        def noted(message: str, *args: object, **kwargs: object) -> None:
            self.said.append(message)
            notify(message, *args, **kwargs)  # type: ignore[arg-type]

        app.notify = noted  # type: ignore[method-assign]
        self._app = app

    def follow(self) -> None:
        """Once the follower is there (the engine built)."""
        index = self._app.kb_index
        assert index is not None
        live = index.live
        changed, on_rebuilt = live.changed, live.on_rebuilt
        assert on_rebuilt is not None

        def counted() -> bool:
            self.checks += 1
            return changed()

        def rebuilt(engine: Engine) -> None:
            self.rebuilt += 1
            on_rebuilt(engine)

        live.changed = counted  # type: ignore[method-assign]
        live.on_rebuilt = rebuilt

    async def checked(self, pilot: Pilot[None], times: int) -> None:
        """Let the follower compare stamps `times` more times."""
        target = self.checks + times
        await wait_until(pilot, lambda: self.checks >= target, timeout=15)

    async def rebuilt_since(self, pilot: Pilot[None], rebuilt: int) -> None:
        """Wait for a new engine after the `rebuilt`th."""
        await wait_until(pilot, lambda: self.rebuilt > rebuilt, timeout=15)


async def test_an_outage_is_said_plainly_once_in_the_editors_language(
    make_app: MakeApp,
    kb_url: str,
    outage: Outage,
    locale: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="chatbot.tui.kb_index")
    app = make_app("agent")
    watched = Watched(app)
    async with app.run_test(size=SIZE) as pilot:
        await open_editor(pilot)
        watched.follow()
        for _ in range(2):  # Told again for a second outage, once.
            before = len(watched.said)
            outage.start()
            await wait_until(pilot, lambda: AWAY[locale] in watched.said, timeout=15)
            await watched.checked(pilot, 4)  # Four seconds on: not said at every poll.
            assert watched.said[before:] == [AWAY[locale]]

            rebuilt = watched.rebuilt
            outage.end()
            await watched.rebuilt_since(pilot, rebuilt)
            await watched.checked(pilot, 2)
            assert watched.said[before:] == [AWAY[locale]]  # Nothing more once it is back.

    for raw in ("FATAL", "postgresql://", "not reloaded", kb_url):
        assert not any(raw in line for line in watched.said), watched.said
    # The log keeps the detail, for whoever runs the desk.
    logged = [r.getMessage() for r in caplog.records if r.name == "chatbot.tui.kb_index"]
    assert any("cannot connect to the knowledge base" in line for line in logged), logged
