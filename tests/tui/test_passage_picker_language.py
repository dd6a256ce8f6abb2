"""The passage picker (Ctrl+O) offers the passages the conversation is answered from, and
typing narrows it.

A Chinese conversation's picker listed the main (English) knowledge base: the `zh/` passages the
bot had considered (its candidates, shown with their scores) were not there, nor a passage made
in `zh/`, and English text was offered for a Chinese customer. It now lists what the bot answers
that conversation from: the `zh/` folder with the main folder's passages written in Chinese (a
`zh/` passage of the same id winning); an English conversation keeps the main knowledge base.
And typing in the picker did nothing: it now filters the list by id, title and text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.engine.models import Candidate, Decision, Reason
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.passage_picker import PassagePicker, PickerItem
from tests.tui.conftest import Q2, FrozenClock, editor_settings
from tests.tui.helpers import (
    agent_app,
    claim_and_pick,
    open_passage_picker,
    squashed,
    type_text,
    wait_until,
)

QUESTION = "头盔丢了要赔多少钱？"
SHIPPED = {
    "card-charged-twice", "damage-fee", "damage-report", "e-bike-battery", "helmet",
    "late-return", "refund-request", "refund-time", "station-full", "student-pass",
}  # fmt: skip
HELMET_FEE_ZH = "头盔丢失或损坏需赔偿 25 欧元，从押金中扣除。"
HELMET_FEE_MAIN = "旧规定：头盔丢失赔偿 40 欧元。请联系客服处理押金问题。"
BRAKES_ZH = "出发前请先捏一下刹车；刹车不灵请换一辆车，并在应用里报告。"
LOST_PROPERTY = "Items left in a basket are kept at the station office for 30 days."


@pytest.fixture
def kb(kb_copy: Path) -> Path:
    """The shipped knowledge base, with what editors added since: `helmet-fee` made in `zh/`
    (and an older Chinese one of that id in the main folder), a Chinese passage and an English
    one in the main folder."""
    PassageStore(kb_copy / "zh").add(Passage(id="helmet-fee", title="头盔赔偿", text=HELMET_FEE_ZH))
    main = PassageStore(kb_copy)
    main.add(Passage(id="helmet-fee", title="头盔赔偿（旧）", text=HELMET_FEE_MAIN))
    main.add(Passage(id="brake-check", title="刹车检查", text=BRAKES_ZH))
    main.add(Passage(id="lost-property", title="Lost property", text=LOST_PROPERTY))
    return kb_copy


def decided(desk: DeskService, question: str, candidates: tuple[Candidate, ...]) -> int:
    """A conversation whose question the bot judged and escalated, with these candidates."""
    conversation = desk.ask(None, question).conversation.id
    [pending] = desk.lease("bot-1", limit=1, lease_s=60)
    decision = Decision(question=question, answer=None, reason=Reason.LOW_SCORE,
                        candidates=candidates, threshold=0.7)  # fmt: skip
    desk.record_decision("bot-1", pending, decision)
    return conversation


async def open_picker(pilot: Pilot[None], app: HelpDeskApp, conversation: int) -> PassagePicker:
    """Open the conversation, claim it (Ctrl+L) and press Ctrl+O, as the agent does."""
    await app.services.live.wait_ready()
    view = await app.open_conversation(conversation)
    await wait_until(pilot, lambda: view.conversation is not None)
    return await claim_and_pick(pilot, view)


def ids(items: Sequence[PickerItem]) -> list[str]:
    return [item.passage.id for item in items]


def listed(app: HelpDeskApp) -> str:
    """The screen's words, the picker's list among them (`squashed`: wide characters leave
    gaps, and a line wraps where the width says)."""
    return squashed(app)


async def clear(pilot: Pilot[None], picker: PassagePicker) -> None:
    """Empty the filter box as a person does: Ctrl+U deletes everything left of the cursor."""
    await pilot.press("ctrl+u")
    await wait_until(pilot, lambda: picker.words == "")


@pytest.fixture
def zh_settings(db_path: Path, kb: Path) -> Settings:
    return editor_settings(db_path, kb, ui={"locale": "zh"})


async def test_a_chinese_conversations_picker_lists_its_chinese_passages_and_filters(
    zh_settings: Settings, http: object, clock: FrozenClock
) -> None:
    from chatbot.assembly import open_service

    desk = open_service(zh_settings, clock=clock)
    try:
        conversation = decided(desk, QUESTION, (
            Candidate(id="helmet-fee", title="头盔赔偿", text=HELMET_FEE_ZH, bm25=4.0,
                      probability=0.62),
            Candidate(id="helmet", title="头盔", text="普通单车不配头盔。", bm25=3.0,
                      probability=0.55),
        ))  # fmt: skip
        assert desk.conversation(conversation).locale == "zh"
        app = agent_app(zh_settings, http, clock)
        async with app.run_test(size=(100, 30)) as pilot:
            picker = await open_picker(pilot, app, conversation)
            # The bot's candidates first, with their scores; then the rest of what the bot
            # answers this conversation from, and nothing else.
            assert ids(picker.items)[:2] == ["helmet-fee", "helmet"]
            assert set(ids(picker.items)) == SHIPPED | {"helmet-fee", "brake-check"}
            assert len(picker.items) == len(SHIPPED) + 2
            passages = {item.passage.id: item.passage for item in picker.items}
            assert passages["helmet"].title == "头盔"  # The translation, not "Helmets".
            assert passages["helmet-fee"].text == HELMET_FEE_ZH  # zh/ wins over the main one.
            assert [item.probability for item in picker.items[:2]] == [0.62, 0.55]
            await wait_until(pilot, lambda: "0.62helmet-fee头盔赔偿" in listed(app))
            assert "Helmets" not in listed(app) and "Lostproperty" not in listed(app)

            # The filter box has the focus: typing Chinese narrows the list.
            filter_box = picker.query_one("#picker-filter", Input)
            assert app.focused is filter_box
            await type_text(pilot, "刹车")
            # The translated damage-fee passage speaks of brakes too; no English one is offered.
            await wait_until(pilot, lambda: ids(picker.shown) == ["damage-fee", "brake-check"])
            await wait_until(pilot, lambda: "helmet-fee" not in listed(app))
            assert "brake-check刹车检查" in listed(app)

            # By id, in any case; the candidates stay first, with their scores.
            await clear(pilot, picker)
            await wait_until(pilot, lambda: len(picker.shown) == len(picker.items))
            await type_text(pilot, "HELMET")
            await wait_until(pilot, lambda: ids(picker.shown) == ["helmet-fee", "helmet"])
            await wait_until(pilot, lambda: "brake-check" not in listed(app))
            assert "0.62helmet-fee" in listed(app) and "0.55helmet头盔" in listed(app)

            # Nothing matches: a line says so, the words shown as typed; Enter picks nothing.
            await clear(pilot, picker)
            await type_text(pilot, "[b]没有这个词[/b]")
            await wait_until(pilot, lambda: not picker.shown)
            said = "没有哪个段落的id、标题或正文含有“[b]没有这个词[/b]”。"
            await wait_until(pilot, lambda: said in listed(app))
            assert not picker.query_one("#passages", OptionList).display
            await pilot.press("enter")
            assert app.screen is picker

            # Escape still cancels: nothing in the reply box.
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, PassagePicker))
            assert app.screen.query_one("#reply", Input).value == ""

            # Enter picks the first passage shown: the Chinese one, into the reply box.
            picker = await open_passage_picker(pilot)
            await type_text(pilot, "赔偿")
            await wait_until(pilot, lambda: ids(picker.shown)[:1] == ["helmet-fee"])
            await pilot.press("enter")
            await wait_until(pilot, lambda: not isinstance(app.screen, PassagePicker))
            await wait_until(
                pilot, lambda: app.screen.query_one("#reply", Input).value == HELMET_FEE_ZH
            )
    finally:
        desk.close()


async def test_an_english_conversations_picker_lists_the_main_knowledge_base_and_filters(
    db_path: Path, kb: Path, http: object, clock: FrozenClock
) -> None:
    from chatbot.assembly import open_service

    settings = editor_settings(db_path, kb)
    desk = open_service(settings, clock=clock)
    try:
        conversation = decided(desk, Q2, (
            Candidate(id="damage-fee", title="Damage fees", text="...", bm25=4.0,
                      probability=0.48),
        ))  # fmt: skip
        app = agent_app(settings, http, clock)
        async with app.run_test(size=(80, 24)) as pilot:
            picker = await open_picker(pilot, app, conversation)
            # The main knowledge base, as before: every passage of the main folder (Chinese ones
            # too, as the English engine searches them), none of the zh/ folder's.
            main = {p.id: p for p in PassageStore(kb).passages()}
            assert ids(picker.items)[0] == "damage-fee" and picker.items[0].probability == 0.48
            assert {item.passage.id: item.passage for item in picker.items} == main
            assert {item.passage.id: item.passage for item in picker.items}["helmet"].title == (
                "Helmets"
            )

            # Case-insensitive: every passage with "brake" in its id, title or text.
            await type_text(pilot, "BRAKE")
            braking = [
                item.passage.id
                for item in picker.items
                if "brake" in f"{item.passage.id} {item.passage.title} {item.passage.text}".lower()
            ]
            assert braking == ["damage-fee", "brake-check"]  # By its text; by its id.
            await wait_until(pilot, lambda: ids(picker.shown) == braking)

            # A character typed with the list focused goes to the filter too.
            await clear(pilot, picker)
            picker.query_one("#passages", OptionList).focus()
            await type_text(pilot, "lost")
            await wait_until(pilot, lambda: ids(picker.shown) == ["lost-property"])
            assert picker.words == "lost"
            assert app.focused is picker.query_one("#picker-filter", Input)

            # None: said in the agent's language, the words as typed (never markup).
            await type_text(pilot, " [red]zz")
            await wait_until(pilot, lambda: not picker.shown)
            await wait_until(
                pilot,
                lambda: "Nopassagehas“lost[red]zz”initsid,titleortext." in listed(app),
            )

            # Down from the box moves in the list; Enter picks the passage highlighted.
            await clear(pilot, picker)
            await type_text(pilot, "refund")
            await wait_until(pilot, lambda: len(picker.shown) >= 2)
            second = picker.shown[1].passage
            await pilot.press("down")
            assert app.focused is picker.query_one("#picker-filter", Input)
            await pilot.press("enter")
            await wait_until(pilot, lambda: not isinstance(app.screen, PassagePicker))
            reply = app.screen.query_one("#reply", Input)
            await wait_until(pilot, lambda: reply.value == " ".join(second.text.split()))
    finally:
        desk.close()
