"""What the page says is kept when a session ends, per area. It said "Everything you sent is
saved." to agents and editors too, where what their session keeps is their unsent work (a reply
or note not sent, a passage not saved), which comes back when they open it again."""

from __future__ import annotations

import html
import re

import pytest

from chatbot.accounts.models import Area
from chatbot.i18n import Locale
from chatbot.web.pages import app_page


def saved_line(area: Area | None, locale: Locale = "en") -> str:
    page = app_page(area=area, path="/", websocket_url="ws://127.0.0.1:1/ws", locale=locale)
    match = re.search(r'<p class="saved">(.*?)</p>', page)
    assert match is not None
    return html.unescape(match.group(1))


@pytest.mark.parametrize(
    ("area", "said"),
    [
        (None, "Everything you sent is saved."),
        (
            Area.AGENT,
            "Everything you sent is saved. A reply or note you had not sent is back when you "
            "open its conversation again.",
        ),
        (
            Area.EDITOR,
            "Everything you saved is kept. A passage you had not saved is back, unsaved, when "
            "you open the editor again.",
        ),
    ],
    ids=["customer", "agent", "editor"],
)
def test_the_ended_page_says_what_each_area_keeps(area: Area | None, said: str) -> None:
    assert saved_line(area) == said


def test_the_ended_page_says_it_in_the_browsers_language() -> None:
    assert "尚未发送的回复或备注" in saved_line(Area.AGENT, "zh")
    assert "尚未保存的段落" in saved_line(Area.EDITOR, "zh")
