"""Languages: which language a customer writes, and the catalogs every sentence they see comes
from (each one translated, placeholders kept, the template in step with the source)."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from chatbot.desk.models import (
    Claimed,
    Decided,
    Escalated,
    EventData,
    Feedback,
    FeedbackGiven,
    HandedBack,
    LocaleSet,
    Note,
    PersonOffered,
    Rated,
    Released,
    Reopened,
    Resolved,
    State,
)
from chatbot.engine.models import Reason
from chatbot.i18n import (
    LOCALES,
    accepted_locale,
    catalog_path,
    detect_locale,
    environment_locale,
    parse_locale,
    translations,
)
from chatbot.notices import (
    Reader,
    claimed_for,
    feedback_note,
    hand_back_question,
    note_heading,
    notice,
    rating_prompt,
    status_line,
    waiting_for,
)
from tests.conftest import ROOT

TEMPLATE = ROOT / "chatbot" / "locales" / "helpdesk.pot"
HAN = re.compile(r"[\u4e00-\u9fff]")


def read_catalog(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=locale)


def fields(text: str) -> set[str]:
    """The `{name}` placeholders of a format string."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


# -- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("同一次骑行被扣了两次钱，能把钱退给我吗？", "zh"),
        ("退款", "zh"),
        ("我的e-bike没电了", "zh"),  # A Latin brand word inside Chinese.
        ("我的车坏了 help", "zh"),
        ("I was charged twice for the same ride, can I get my money back?", "en"),
        ("Is the 北京 station open on Sundays?", "en"),  # A place name inside English.
        ("自転車のヘルメットはありますか", "en"),  # Japanese: kana, no Japanese catalog.
        ("안녕하세요", "en"),
        ("", "en"),
        ("12345 ???", "en"),
    ],
)
def test_the_language_a_customer_writes_is_detected(text: str, expected: str) -> None:
    assert detect_locale(text) == expected


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh"),
        ("en-US,en;q=0.9,zh-CN;q=0.8", "en"),
        ("fr, zh;q=0.5", "zh"),  # The first language we have.
        ("zh;q=0, en", "en"),  # q=0: not this one.
        ("en;q=0.2, zh-Hant;q=0.7", "zh"),
        ("ja, zh;q=nan, *", "en"),  # Nonsense counts as nothing; nothing means English.
        (";;,,q=1", "en"),
        (None, "en"),
    ],
)
def test_a_browsers_language_is_read_from_its_accept_language(
    header: str | None, expected: str
) -> None:
    assert accepted_locale(header) == expected


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_TW.Big5@stroke"}, "zh"),
        ({"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),  # LC_ALL comes first.
        ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
        ({"LANGUAGE": "fr:zh_CN", "LANG": "fr_FR.UTF-8"}, "zh"),  # A list, tried in order.
        ({"LANGUAGE": "fr", "LANG": "zh_CN.UTF-8"}, "en"),  # Set: gettext reads no further.
        ({"LANGUAGE": "", "LANG": "zh_CN.UTF-8"}, "zh"),  # Empty counts as not set.
        ({"LANG": "POSIX"}, "en"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
        ({"LANG": "???"}, "en"),
        ({}, "en"),
    ],
)
def test_a_terminals_language_is_read_as_gettext_reads_it(
    environ: dict[str, str], expected: str
) -> None:
    assert environment_locale(environ) == expected


def test_locale_names_are_read_loosely_and_unknown_ones_refused() -> None:
    assert [parse_locale(v) for v in ("zh", "zh_CN", "zh-Hans", "ZH", "en_GB", " en ")] == [
        "zh", "zh", "zh", "zh", "en", "en",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="unknown locale 'fr'"):
        parse_locale("fr")


# -- the catalogs -----------------------------------------------------------------------------


def test_the_template_holds_every_sentence_marked_in_the_source() -> None:
    """Run `make messages` when this fails: a marked sentence is missing from the catalogs."""
    marked = {
        message if isinstance(message, str) else message[0]
        for _, _, message, _, _ in extract_from_dir(str(ROOT / "chatbot"))
    }
    template = {m.id if isinstance(m.id, str) else m.id[0] for m in read_catalog(TEMPLATE) if m.id}
    assert marked == template


@pytest.mark.parametrize("locale", [locale for locale in LOCALES if locale != "en"])
def test_every_message_is_translated_with_its_placeholders(locale: str) -> None:
    template = read_catalog(TEMPLATE)
    catalog = read_catalog(ROOT / "chatbot" / "locales" / locale / "LC_MESSAGES" / "helpdesk.po")
    assert Path(str(catalog_path(locale))).is_file()  # type: ignore[arg-type]
    ids = {m.id if isinstance(m.id, str) else m.id[0] for m in template if m.id}
    assert len(ids) > 60
    checked = 0
    for message in catalog:
        if not message.id:
            continue
        assert not message.fuzzy, f"fuzzy: {message.id!r}"
        msgids = [message.id] if isinstance(message.id, str) else list(message.id)
        strings = (
            [message.string] if isinstance(message.string, str) else list(message.string or ())
        )
        assert all(strings), f"untranslated: {message.id!r}"
        # Words (not just a placeholder and punctuation) must come out in Chinese.
        has_words = re.search(r"[A-Za-z]", re.sub(r"\{\w+\}", "", msgids[0]))
        for text in strings:
            assert HAN.search(text) or not has_words, f"not Chinese: {text!r}"
            # Every placeholder of the English (any plural form) is kept, and no other.
            assert fields(text) <= set().union(*map(fields, msgids)), text
            assert fields(text) >= fields(msgids[-1]), text
        checked += 1
    assert checked == len(ids)
    # Compiled as the app compiles it: every id comes back translated.
    compiled = translations(locale)
    for msgid in ids:
        assert compiled.gettext(msgid) != msgid


EVENTS: list[EventData] = [
    *(Escalated(reason=reason) for reason in Reason),
    Claimed(agent="ana"),
    Released(agent="ana"),
    Resolved(agent="ana"),
    HandedBack(agent="ana"),
    Reopened(),
    FeedbackGiven(entry=1, value=Feedback.HELPFUL),
    FeedbackGiven(entry=1, value=Feedback.NOT_HELPFUL),
    Decided(decision=1, question_entry=1, outcome="answered"),
    Note(agent="ana", text="refund approved"),
    LocaleSet(locale="en", chosen_by_customer=True),
    LocaleSet(locale="zh", chosen_by_customer=True),
    PersonOffered(answer_entry=1),
    Rated(rating=4, resolved_entry=2, agent="ana"),
]


@pytest.mark.parametrize("reader", ["customer", "agent"])
def test_every_notice_is_said_in_both_languages(reader: Reader) -> None:
    shown = 0
    for event in EVENTS:
        english = notice(event, reader=reader, locale="en")
        chinese = notice(event, reader=reader, locale="zh")
        assert (english is None) == (chinese is None), event
        if english is None or chinese is None:
            continue
        shown += 1
        assert not HAN.search(english.replace("中文", "")), english
        assert HAN.search(chinese) and chinese != english, chinese
        assert "{" not in chinese and "{" not in english  # Every placeholder filled.
        if "ana" in english:
            assert "ana" in chinese  # The name is kept, as written.
    assert shown >= (8 if reader == "customer" else 14)


def test_agents_are_told_of_a_customers_language_only_when_it_is_not_theirs() -> None:
    detected = LocaleSet(locale="zh")
    assert notice(detected, reader="agent", locale="en") == (
        "The customer writes 中文; their chat is in it."
    )
    assert notice(detected, reader="agent", locale="zh") is None
    assert notice(LocaleSet(locale="en"), reader="agent", locale="en") is None
    assert notice(detected, reader="customer", locale="zh") is None


def test_a_replay_miss_is_explained_in_the_readers_language() -> None:
    missed = Escalated(reason=Reason.NOT_JUDGED)
    english = notice(missed, reader="customer", locale="en") or ""
    assert "some have no recorded judgment" in english
    assert "有些内容没有录制好的判断" in (notice(missed, reader="customer", locale="zh") or "")


def test_status_lines_and_notes_in_both_languages() -> None:
    for state in State:
        for agent in ("ana", None):
            english, chinese = (status_line(state, agent, locale=lo) for lo in ("en", "zh"))
            assert HAN.search(chinese) and not HAN.search(english)
            if agent and state is State.CLAIMED:
                assert "ana" in chinese
    for value in Feedback:
        assert HAN.search(feedback_note(value, locale="zh"))
    assert note_heading("ana", locale="zh") == "ana 的备注，仅客服人员可见"
    assert waiting_for("3m 05s", locale="zh") == "已等待 3m 05s"
    assert claimed_for("ana", "12m", locale="zh") == "由 ana 接手 12m"
    assert claimed_for("ana", "12m", short=True, locale="zh") == "ana 12m"
    assert hand_back_question(2, locale="zh").startswith("您手上有 2 个")
    assert rating_prompt("ana", keys=True, locale="zh") == (
        "ana 的表现如何？请打分，1 分（差）到 5 分（非常好）：请按数字键。"
    )
    assert rating_prompt(None, locale="en") == (
        "How did the person who helped you do? Rate it from 1 (poor) to 5 (excellent):"
    )
    assert hand_back_question(1, locale="en").startswith("You hold 1 claimed conversation.")
    assert hand_back_question(3, locale="en").startswith("You hold 3 claimed conversations.")
