"""History's diff of a Chinese passage showed
the whole passage removed and added for one sentence appended, as Chinese has no spaces between
words; a Chinese question shortened in the Content gaps table read `还车的时候 …`; and the Synonyms
tab's Save was its label row alone, with no frame, sitting on the footer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Button, DataTable, TextArea

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.knowledge_base.store import PassageStore
from chatbot.text import cells, clip
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import EditorScreen
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.gap_list import GapList
from chatbot.tui.widgets.passage_history import diff_tokens, word_diff
from chatbot.tui.widgets.synonyms_panel import SynonymsPanel
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_follows_helpers import open_editor, open_passage
from tests.tui.helpers import screen_text, wait_until

SIZES = [(80, 24), (100, 30)]
IDS = ["80x24", "100x30"]

# The shipped zh/station-full passage, and a sentence an editor appends to it.
STATION_FULL = (
    "如果还车站已满，请打开应用，点击“结束骑行”并选择“车站已满”。应用会显示最近的有空车位的车站，"
    "并为您增加 15 分钟免费时间。"
)
APPENDED = "如果应用无法使用，请致电客服。"
HELMET = (
    "Helmets are not included with standard bikes. E-bikes in Lisbon and Porto come with a "
    "helmet in the front basket; please return it with the bike."
)


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def squashed(app: HelpDeskApp, selector: str) -> str:
    """What a widget shows, without whitespace: a wide (Chinese) character takes two cells, and
    the diff wraps, neither of which matters to the words."""
    return "".join(screen_text(app, app.screen.query_one(selector)).split())


# 1. The diff takes each CJK character as a word --------------------------------------------------


def test_each_cjk_character_is_a_token_and_latin_words_stay_words() -> None:
    text = "退款ABC 会在3个工作日内到账。Hello, world! 「ありがとう」한국어，好"
    assert diff_tokens(text) == [
        "退", "款", "ABC", " ", "会", "在", "3", "个", "工", "作", "日", "内", "到", "账", "。",
        "Hello,", " ", "world!", " ", "「", "あ", "り", "が", "と", "う", "」", "한", "국", "어",
        "，", "好",
    ]  # fmt: skip
    assert "".join(diff_tokens(text)) == text
    # English is cut as before: runs of whitespace and the words between them.
    english = HELMET + "\n\n  Ask staff."
    assert diff_tokens(english) == re.findall(r"\s+|\S+", english)


def test_a_sentence_appended_to_a_chinese_passage_is_all_the_diff_shows() -> None:
    # Restoring the version before the sentence takes it away, and the other way round; either
    # way the rest of the passage is unchanged, shown only by the few characters before it.
    assert word_diff(STATION_FULL + APPENDED, STATION_FULL).plain == (
        f"… 15 分钟免费时间。[-{APPENDED}-]"
    )
    assert word_diff(STATION_FULL, STATION_FULL + APPENDED).plain == (
        f"… 15 分钟免费时间。{{+{APPENDED}+}}"
    )
    # A phrase rewritten inside a sentence is one change, not one around each shared character.
    assert word_diff("我们的单车很好。", "我们的电动车非常好。").plain == (
        "我们的[-单车很-]{+电动车非常+}好。"
    )


def test_english_diffs_keep_their_words() -> None:
    shown = word_diff(HELMET, HELMET.replace("Lisbon", "Braga")).plain
    assert "E-bikes in [-Lisbon-]{+Braga+} and Porto" in shown
    # An appended sentence: the words it follows stay in sight, not a bare "…".
    assert word_diff(HELMET, HELMET + " Ask staff for one.").plain == (
        "… return it with the bike.{+ Ask staff for one.+}"
    )


async def test_history_shows_only_the_sentence_appended_to_a_chinese_passage(
    make_app: MakeApp, kb_copy: Path
) -> None:
    store = PassageStore(kb_copy)
    seen = store.get("station-full")
    store.save(seen.passage.model_copy(update={"text": STATION_FULL}), based_on=seen.revision)
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "station-full")
        box = editor.query_one("#form-text", TextArea)
        await wait_until(pilot, lambda: box.text == STATION_FULL)
        box.focus()
        box.move_cursor(box.document.end)
        box.insert(APPENDED)  # As a paste or an input method puts it in.
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: store.get("station-full").passage.text.endswith(APPENDED))
        await wait_until(pilot, lambda: "Restoringv2" in squashed(app, "#history-diff"))
        shown = squashed(app, "#history-diff")
        assert shown == f"Restoringv2wouldchangethetext:…15分钟免费时间。[-{APPENDED}-]", shown


# 2. A shortened Chinese question ends with … right after its last character -------------------


def test_clip_puts_the_ellipsis_right_after_the_last_character_kept() -> None:
    assert clip("还车的时候 站点没有空位", 12) == "还车的时候…"
    assert clip("There were no free docks", 14) == "There were no…"
    assert clip("还车的时候如果", 10) == "还车的时…"  # A wide character that does not fit: no pad.


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_a_shortened_chinese_question_has_no_space_before_its_ellipsis(
    make_app: MakeApp, other: DeskService, size: tuple[int, int]
) -> None:
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        first = other.ask(None, "还车的时候").conversation.id
        await wait_until(pilot, lambda: other.conversation(first).pending == 0)
        editor = await open_editor(pilot)
        await pilot.press("ctrl+g")
        gaps = editor.query_one(GapList)
        table = gaps.query_one("#gap-table", DataTable)
        await wait_until(pilot, lambda: len(gaps.gaps) == 1)
        room = list(table.columns.values())[-1].width
        # Questions cut where the room ends: inside a wide character (either parity), and just
        # after a space.
        odd = "a" * ((room - 2) % 2)
        spaced = odd + "还" * ((room - 2) // 2) + " " + "车" * room
        questions = ["还" * room, "a" + "还" * room, spaced]
        asked = [other.ask(None, q).conversation.id for q in questions]
        await wait_until(pilot, lambda: all(other.conversation(c).pending == 0 for c in asked))
        await wait_until(pilot, lambda: len(gaps.gaps) == 4, timeout=15)
        await pilot.pause()
        lines = [line for line in screen_text(app, table).splitlines()[1:] if line.strip()]
        assert len(lines) == 4, lines
        cut = [line for line in lines if line.endswith("…")]
        assert len(cut) == 3, lines
        for line in cut:
            assert not re.search(r"\s…$", line), line
        expected = [clip(q, room) for q in questions]
        assert [cells(e) for e in expected] == [room - 1, room, room - 1]
        for question in expected:
            assert any(line.endswith(question) for line in cut), (question, lines)
        assert any(line.endswith("还车的时候") for line in lines)  # Short: whole.


# 3. The Synonyms tab's Save is a whole button above the footer ---------------------------------


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_synonyms_save_button_is_whole_above_the_footer(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        editor = await open_editor(pilot)
        assert isinstance(editor, EditorScreen)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: bool(editor.query(SynonymsPanel)))
        await pilot.pause()
        panel = editor.query_one(SynonymsPanel)
        save = panel.query_one("#synonyms-save", Button)
        footer = editor.query_one(Footer)
        # Its frame, its label and its frame again, inside the panel and above the footer.
        assert save.region.height == 3, save.region
        assert panel.region.contains_region(save.region), (panel.region, save.region)
        assert save.region.bottom <= footer.region.y, (save.region, footer.region)
        rows = screen_text(app).splitlines()
        top, label, bottom = (rows[y][save.region.x : save.region.right] for y in range(
            save.region.y, save.region.bottom))  # fmt: skip
        assert set(top) == {"▔"} and set(bottom) == {"▁"}, (top, bottom)
        assert label.strip() == "Save"
        # And it saves: pressed with the keyboard, as the tester did.
        box = panel.query_one("#synonyms-text", TextArea)
        box.insert("helmet = headgear\n")
        save.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: not panel.dirty)
