"""A browser customer's session whose suggested questions serve's one decider decides (see
`chatbot.engine.suggestions.SharedVerdicts`) builds no engine and does not read the knowledge
base: each one held the whole knowledge base again, its index and its passages (some 75 MB a
session at 2,000 passages of ~1.5 KB), for five questions. It shows the decider's verdicts,
follows them as they change, and, once the decider is gone, decides them itself as a terminal's
app does."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.drivers.headless_driver import HeadlessDriver

from chatbot.config import Settings
from chatbot.engine.suggestions import SharedVerdicts, Suggestion
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.app import prepare_app
from tests.tui.conftest import Q1, Q2, Q3, SIZE, FrozenClock, editor_settings
from tests.tui.helpers import wait_until
from tests.tui.suggestions_helpers import edit, shown

RECORDED = {Q1: True, Q2: True, Q3: False}
"""What the shipped recordings say, before any engine decides."""


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


@pytest.fixture(autouse=True)
def in_a_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's driver says it is a browser session's (`Driver.is_web`), as `serve`'s does: a
    chat with no bot of its own says which questions a person will reply to only there."""
    monkeypatch.setattr(HeadlessDriver, "is_web", property(lambda _driver: True))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every engine this process builds and every read of the knowledge base's passages."""
    import chatbot.assembly
    from chatbot.knowledge_base.store import PassageStore

    seen: list[str] = []
    build_engine, load, scan = chatbot.assembly.build_engine, PassageStore.load, PassageStore.scan

    def building(*args: object, **kwargs: object) -> object:
        seen.append("engine")
        return build_engine(*args, **kwargs)  # type: ignore[arg-type]

    def loading(store: PassageStore) -> object:
        seen.append("passages")
        return load(store)

    def scanning(store: PassageStore) -> object:
        seen.append("passages")
        return scan(store)

    monkeypatch.setattr(chatbot.assembly, "build_engine", building)
    monkeypatch.setattr(PassageStore, "load", loading)
    monkeypatch.setattr(PassageStore, "scan", scanning)
    return seen


class Decider:
    """The test's stand-in for serve's decider: it holds the lock and writes the file."""

    def __init__(self, path: Path) -> None:
        self.shared = SharedVerdicts(path)
        self.lock: int | None = self.shared.hold()

    def says(self, answered: dict[str, bool]) -> None:
        self.shared.write([Suggestion(q, answered=a) for q, a in answered.items()])

    def ends(self) -> None:
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


@pytest.fixture
def decider(tmp_path: Path) -> Iterator[Decider]:
    made = Decider(tmp_path / "suggestions.json")
    yield made
    made.ends()


def shows(app: HelpDeskApp, answered: dict[str, bool]) -> bool:
    """Whether the screen shows these marks (not yet while its rows and words differ)."""
    try:
        return shown(app) == answered
    except AssertionError:  # The rows changed; the screen is not drawn again yet.
        return False


def customer_session(settings: Settings, clock: FrozenClock, path: Path) -> HelpDeskApp:
    """The app as `chatbot.web.child` makes it for a customer's browser session."""
    prepared = prepare_app(
        settings,
        mode="chat",
        clock=clock,
        bot=False,
        editor=False,
        shared_suggestions=SharedVerdicts(path),
    )
    return create_app(
        prepared,
        mode="chat",
        clock=clock,
        bot=False,
        editor=False,
        fixed_conversation=True,
        timings=False,
    )


async def test_a_customer_session_shows_the_deciders_verdicts_and_builds_no_engine(
    settings: Settings, clock: FrozenClock, decider: Decider, reads: list[str]
) -> None:
    decider.says({Q1: False, Q2: True, Q3: False})  # Not what the recordings say of Q1.
    app = customer_session(settings, clock, decider.shared.path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: shows(app, {Q1: False, Q2: True, Q3: False}))
        decider.says(RECORDED)  # Decided again, on a knowledge base edited meanwhile.
        await wait_until(pilot, lambda: shows(app, RECORDED))
        assert not app.services.live.ready and app.kb_index is None
    assert reads == []


async def test_once_the_decider_is_gone_the_session_decides_for_itself(
    settings: Settings, clock: FrozenClock, decider: Decider, kb_copy: Path, reads: list[str]
) -> None:
    edit(kb_copy, "Write to support about double charges.")  # Q1 no longer answered.
    decider.says(RECORDED)  # Said before the edit; it ends without deciding again.
    app = customer_session(settings, clock, decider.shared.path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: shows(app, RECORDED))
        assert reads == []
        decider.ends()
        await app.services.live.wait_ready()
        await wait_until(pilot, lambda: shows(app, {Q1: False, Q2: True, Q3: False}))
        assert "engine" in reads
