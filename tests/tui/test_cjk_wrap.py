"""Chinese text breaks between characters, never before closing punctuation nor after opening
punctuation, and a space inside it no longer pushes the rest of the sentence to the next line.

Rich and Textual wrapped only at spaces: the agent saw "…退还到您的银行卡，3 到" and then
"5 个工作日到账。" alone, and the quit dialog "您手上有 1" above the rest of its sentence and
"？" on a line of its own. `chatbot.tui.cjk_wrap` replaces the two libraries' word patterns
when an app is made; these tests fail if either library stops reading them."""

from __future__ import annotations

import random
import re
import string

import rich._wrap
import textual._wrap
from textual.app import ComposeResult
from textual.content import Content
from textual.geometry import Region
from textual.widgets import Static, TextArea

from chatbot.tui import cjk_wrap
from chatbot.tui.base_app import SafeApp

REPLY = (
    "非常抱歉给您带来不便。刹车问题我们已经记录，"
    "本次骑行费用将全额退还到您的银行卡，3 到 5 个工作日到账。"
)
QUESTION = "您手上有 1 个已接手的对话。要把它们交还给队列由其他客服接手，还是保留到您回来？"
CLOSING = "，。、；：？！）」』】》…"
OPENING = "（「『【《“"
SHIPPED_RICH, SHIPPED_TEXTUAL = re.compile(r"\s*\S+\s*"), re.compile(r"\S+\s*|\s+")


class Shown(SafeApp):
    def compose(self) -> ComposeResult:
        yield Static(QUESTION, id="static")
        yield TextArea(REPLY, soft_wrap=True, show_line_numbers=False, id="area")

    CSS = "#static, #area { width: 32; height: 6; border: none; padding: 0; }"


def _rows(static: Static) -> list[str]:
    strips = static.render_lines(Region(0, 0, static.size.width, static.size.height))
    return [strip.text.rstrip() for strip in strips if strip.text.strip()]


async def test_a_chinese_sentence_fills_its_lines_in_the_app() -> None:
    # As shipped (another test may have made an app in this process): making the app is what
    # puts the patterns in place.
    rich._wrap.re_word, textual._wrap.re_chunk = SHIPPED_RICH, SHIPPED_TEXTUAL
    app = Shown()
    async with app.run_test(size=(40, 14)) as pilot:
        await pilot.pause()
        rows = _rows(app.query_one("#static", Static))
        # The "1" no longer ends a line of its own, and the lines are full (31 or 32 columns).
        assert rows[0].startswith("您手上有 1 个已接手"), rows
        assert len(rows) == 3, rows
        assert all(row[0] not in CLOSING for row in rows), rows
        area = app.query_one("#area", TextArea)
        wrapped = [
            section
            for line in range(area.document.line_count)
            for section in area.wrapped_document.get_sections(line)
        ]
        assert "".join(wrapped) == REPLY
        assert len(wrapped) == 4, wrapped  # Full lines: 16 characters of 2 columns each.
        assert all(not row[:1] or row[0] not in CLOSING for row in wrapped), wrapped


def test_no_line_starts_with_closing_or_ends_with_opening_punctuation() -> None:
    cjk_wrap.install()
    text = "一二三四五六七八九十，一二「三四」五六（七八）九十。" * 3
    for width in range(6, 40):
        lines = [line.plain.rstrip() for line in Content(text).wrap(width)]
        assert "".join(lines) == text
        for line in lines:
            assert line[0] not in CLOSING and line[-1] not in OPENING, (width, lines)


def test_english_breaks_exactly_as_the_libraries_ship() -> None:
    """Every word with no CJK character in it is one word, as before."""
    cjk_wrap.install()
    pick = random.Random(7)
    alphabet = string.ascii_letters + string.digits + string.punctuation + "      \t"
    for _ in range(300):
        text = "".join(pick.choice(alphabet) for _ in range(pick.randrange(1, 120)))
        width = pick.randrange(1, 40)
        ours = (
            rich._wrap.divide_line(text, width),
            textual._wrap.compute_wrap_offsets(text, width, 4),
        )
        rich._wrap.re_word, textual._wrap.re_chunk = SHIPPED_RICH, SHIPPED_TEXTUAL
        try:
            theirs = (
                rich._wrap.divide_line(text, width),
                textual._wrap.compute_wrap_offsets(text, width, 4),
            )
        finally:
            cjk_wrap.install()
        assert ours == theirs, (text, width)
