"""Display names alike on screen are one name: conversations are claimed under an agent's display
name, so a second account named like the first would own its claims."""

from __future__ import annotations

from pathlib import Path

import pytest
from argon2 import PasswordHasher

from chatbot.accounts.models import Role, check_display_name
from chatbot.accounts.service import AccountService
from chatbot.errors import HelpdeskError
from chatbot.store.sqlite_users import SQLiteUserStore

FAST = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


@pytest.fixture
def service(tmp_path: Path) -> AccountService:
    return AccountService(SQLiteUserStore.open(tmp_path / "helpdesk.sqlite3"), hasher=FAST)


def add(service: AccountService, name: str, display: str) -> None:
    service.add(name, role=Role.AGENT, password="correct horse", display_name=display)


@pytest.mark.parametrize(
    "lookalike",
    [
        "BOB",
        "Ｂｏｂ",  # Fullwidth: NFKC folds it.
        "ｂｏｂ",
        "B\u200dob",  # A joiner is allowed in a name, and shows as nothing between two letters.
        "B\u200cob",
        " bob ",  # Spaces at the ends are dropped.
        "Bob\u200f",  # A bidi mark is allowed (RTL names need it), and shows as nothing here.
        "\u200eBob\u061c",
        "Bob\ufe0f",  # A variation selector after a Latin letter shows nothing.
        "B\U000e0100ob",
    ],
)
def test_a_name_alike_on_screen_is_refused(service: AccountService, lookalike: str) -> None:
    add(service, "bob", "Bob")
    with pytest.raises(HelpdeskError, match=r"is account 'bob''s already"):
        add(service, "bob2", lookalike)
    add(service, "bob2", "Bobby")
    with pytest.raises(HelpdeskError, match=r"is account 'bob''s already"):
        service.update("bob2", display_name=lookalike)
    assert [account.display_name for account in service.accounts()] == ["Bob", "Bobby"]


def test_compatibility_forms_and_spaces_fold(service: AccountService) -> None:
    add(service, "jeff", "Jeff  Lee")
    for lookalike in ("Je\ufb00 Lee", "JEFF\u00a0LEE", "jeff lee"):  # A ligature; a no-break space.
        with pytest.raises(HelpdeskError, match=r"is account 'jeff''s already"):
            add(service, "other", lookalike)


def test_a_name_stored_before_the_rule_is_compared_by_its_key(service: AccountService) -> None:
    # An account made before format characters were refused still holds its name.
    service.store.add_account(
        name="old", display_name="B\u200bob", role=Role.AGENT, password_hash=FAST.hash("x" * 8)
    )
    with pytest.raises(HelpdeskError, match=r"is account 'old''s already"):
        add(service, "bob", "Bob")


@pytest.mark.parametrize(
    ("display", "named"),
    [
        ("B\u200bob", "U+200B ZERO WIDTH SPACE"),
        ("\u202eboB", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("Bo\u00adb", "U+00AD SOFT HYPHEN"),
        ("Bob\ufeffx", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
        ("Bo\u2060b", "U+2060 WORD JOINER"),
        ("Bob\u2028Lee", "U+2028 LINE SEPARATOR"),
        ("Bob\udcff", "U+DCFF"),  # Undecodable bytes in a command line's argument.
    ],
)
def test_invisible_characters_are_refused(
    service: AccountService, display: str, named: str
) -> None:
    # A zero-width space in a name has no use but to pass for another name.
    with pytest.raises(HelpdeskError) as error:
        add(service, "bob", display)
    assert str(error.value) == (
        f"display name holds an invisible or formatting character ({named})"
    )
    assert service.accounts() == []


def test_joiners_are_kept_where_scripts_and_emoji_need_them(service: AccountService) -> None:
    for name, display in [("coder", "👩\u200d💻 Ana"), ("mina", "می\u200cنا")]:
        add(service, name, display)
    assert sorted(account.display_name for account in service.accounts()) == [
        "می\u200cنا",
        "👩\u200d💻 Ana",
    ]


def test_the_key_folds_what_the_eye_does_not_tell_apart() -> None:
    from chatbot.accounts.models import display_name_key

    assert {
        display_name_key(name) for name in ("Bob", "BOB", "Ｂｏｂ", "B\u200bob", "B\u200dob")
    } == {"bob"}
    assert display_name_key("Straße") == display_name_key("STRASSE")
    assert display_name_key("Bob") != display_name_key("Rob")
    assert check_display_name("  Ana \u3000 Lima ") == "Ana Lima"


@pytest.mark.parametrize(
    "blank",
    ["\u200d", "\u200c", "\u200d\ufe0f", "\u2800", "\u3164", "\u115f\u1160", "\uffa0 \u3164",
     "\u200f", "\U000e0100"],
)  # fmt: skip
def test_a_name_that_shows_nothing_is_refused(service: AccountService, blank: str) -> None:
    # A joiner alone, braille's blank pattern or a Hangul filler was taken, and shown as blank.
    with pytest.raises(HelpdeskError, match=r"^display name shows nothing: it needs a visible"):
        add(service, "blank", blank)
    add(service, "ana", "Ana")
    with pytest.raises(HelpdeskError, match=r"^display name shows nothing: it needs a visible"):
        service.update("ana", display_name=blank)
    assert [account.display_name for account in service.accounts()] == ["Ana"]


def test_bidi_marks_are_kept_where_right_to_left_names_need_them(service: AccountService) -> None:
    for name, display in [("mina", "\u200f\u0645\u06cc\u0646\u0627 (2)"), ("ana", "Ana\u200e"),
                          ("omar", "\u0639\u0645\u0631\u061c 3")]:  # fmt: skip
        add(service, name, display)
    assert {account.display_name for account in service.accounts()} == {
        "\u200f\u0645\u06cc\u0646\u0627 (2)", "Ana\u200e", "\u0639\u0645\u0631\u061c 3"
    }  # fmt: skip


def test_the_key_drops_variation_selectors_and_blanks_hangul_fillers() -> None:
    from chatbot.accounts.models import display_name_key

    assert display_name_key("Ana\ufe0f") == display_name_key("\u200fAna") == "ana"
    assert display_name_key("Ana\u3164Lee") == display_name_key("Ana\u2800 Lee") == "ana lee"
