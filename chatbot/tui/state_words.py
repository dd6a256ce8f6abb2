"""A conversation's state as a word for the person reading it, in their language."""

from __future__ import annotations

from chatbot.desk.models import State
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations

STATE_WORDS: dict[State, str] = {
    State.BOT: N_("bot"),
    State.WAITING: N_("waiting"),
    State.CLAIMED: N_("claimed"),
    State.RESOLVED: N_("resolved"),
}
"""Each state's word; in English the state's code itself, as the English screens showed it. A
Chinese agent read `对话 #9 · resolved` in a header that said `已等待 14s` while it waited."""


def state_word(state: State, *, locale: Locale = DEFAULT_LOCALE) -> str:
    """`state` as a word in `locale` (the conversation header's, a Find result's)."""
    return translations(locale).gettext(STATE_WORDS[state])
