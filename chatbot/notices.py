"""Events in sentences, for the person reading them: the one place those sentences live.

The store keeps typed events with parameters, never text, so a history reads the same whatever
language its reader speaks, and analytics count events instead of parsing prose. Front ends (the
app, the command line) call `notice`; a translation replaces the sentences here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from chatbot.desk.models import (
    ChatEvent,
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
    StoredDecision,
    Thanked,
)
from chatbot.engine.models import Decision, QueryTerm, Reason
from chatbot.i18n import DEFAULT_LOCALE, LANGUAGE_NAMES, N_, Locale, translations

Reader = Literal["customer", "agent"]

ESCALATED_NOTICE = N_(
    "The bot could not answer this from the help center. A person will reply here."
)
"""The bot judged the passages it found and none was good enough, or it found none."""
NOT_CHECKED_NOTICE = N_(
    "The bot could not check the help center just now. A person will reply here."
)
"""Valen failed (`valen-error`), or the bot itself did (`bot-failed`): the help center was not
checked, and the customer must not read that it has no answer."""
ASKED_NOTICE = N_("A person will reply here.")
NOT_JUDGED_NOTICE = N_(
    "The bot could not check every help-center passage for this question. A person will reply here."
)
"""Some passages went unjudged (Valen declined to judge them, say) and none judged was good
enough: "every passage", as one unjudged passage is enough (it might have answered) even when
the others were judged. Nothing of replay mode: a live bot's customer was told of a replay miss
when Valen had refused."""
REPLAY_MISS_NOTICE = N_(
    "The bot could not check every help-center passage for this question (replay mode, no "
    "network: some have no recorded judgment). A person will reply here."
)
"""A replay miss, said as one: in replay mode a passage without a recorded answer is never
judged, and the customer deserves to know that is why a person is coming. Said only when every
passage left unjudged was a replay miss (`not_judged_notice`)."""
# Agents' own words for the same escalations (their transcript, `conversations show`): "A person
# will reply here" is said to the customer, and told an agent nothing of why it came to them.
ASKED_FOR_AGENTS = N_("The customer asked for a person.")
NOT_HELPFUL_FOR_AGENTS = N_("The answer did not help: the customer asked for a person.")
ESCALATED_FOR_AGENTS = N_("The bot could not answer this from the help center.")
NOT_CHECKED_FOR_AGENTS = N_("The bot could not check the help center just now.")
NOT_JUDGED_FOR_AGENTS = N_("The bot could not check every help-center passage for this question.")
REPLAY_MISS_FOR_AGENTS = N_(
    "The bot could not check every help-center passage for this question (replay mode, no "
    "network: some have no recorded judgment)."
)
_FOR_AGENTS = {
    ESCALATED_NOTICE: ESCALATED_FOR_AGENTS,
    NOT_CHECKED_NOTICE: NOT_CHECKED_FOR_AGENTS,
    NOT_JUDGED_NOTICE: NOT_JUDGED_FOR_AGENTS,
    REPLAY_MISS_NOTICE: REPLAY_MISS_FOR_AGENTS,
}
"""Each escalation's sentence for the customer, and the one for agents."""
REPEAT_NOTICE = N_(
    "You asked this before: the answer above is what the help center says. If it did not help, "
    "talk to a person (Ctrl+T) and they will reply here."
)
REPEAT_NOTICE_IN_A_BROWSER = N_(
    "You asked this before: the answer above is what the help center says. If it did not help, "
    "press “Talk to a person” below and someone will reply here."
)
"""In a browser, which keeps Ctrl+T for a new tab and never passes it to the page."""
REPEAT_NOT_HELPFUL_NOTICE = N_(
    "You asked this before, and said the answer did not help: talk to a person (Ctrl+T) and "
    "they will reply here."
)
REPEAT_NOT_HELPFUL_NOTICE_IN_A_BROWSER = N_(
    "You asked this before, and said the answer did not help: press “Talk to a person” below and "
    "someone will reply here."
)
"""Asked again after marking the answer "Not helpful" (`PersonOffered.not_helpful`): a person
has written since, so the answer is not "above", and the customer has said it did not help."""
THANKED_NOTICE = N_("You're welcome. Ask anything else here, or ask for a person.")
"""The desk's word back to a customer who only thanked, acknowledged or said goodbye: no
question for the bot, which judged nothing (see `chatbot.desk.service.says_thanks`)."""
THANKED_FOR_AGENTS = N_(
    "The customer only said thanks, okay or goodbye: not a question, so the bot judged nothing."
)
THANKED_AFTER_RESOLUTION_FOR_AGENTS = N_(
    "The customer only said thanks, okay or goodbye after the resolution: it stays resolved."
)
"""A thank-you written in a resolved conversation: not reopened, in nobody's queue."""

# Escalations the customer asked for, as opposed to ones the bot decided on.
_ASKED = frozenset({Reason.CUSTOMER_ASKED, Reason.NOT_HELPFUL})
# Escalations where the bot could not look at all.
_NOT_CHECKED = frozenset({Reason.VALEN_ERROR, Reason.BOT_FAILED})


def needs_decisions(entries: Iterable[object]) -> bool:
    """Whether saying `entries` needs the conversation's decisions (`notice(decisions=...)`): a
    `not-judged` escalation is among them. Front ends read the decisions only then."""
    return any(
        isinstance(entry, ChatEvent)
        and isinstance(entry.event, Escalated)
        and entry.event.reason is Reason.NOT_JUDGED
        for entry in entries
    )


def by_question(stored: Iterable[StoredDecision]) -> dict[int, Decision]:
    """Stored decisions as `notice` takes them: by the id of the question each decided."""
    return {decision.message_id: decision.decision for decision in stored}


def not_judged_notice(decision: Decision | None) -> str:
    """Which sentence (untranslated) says a `not-judged` escalation: the replay one only when
    every passage `decision` left unjudged was a replay miss; the plain one when any was not
    (Valen refused, say). With no decision at hand, the replay one, as before there was a
    choice: pass the decision wherever it is known."""
    if decision is None:
        return REPLAY_MISS_NOTICE
    kinds = {c.error_kind for c in decision.candidates if c.probability is None}
    return REPLAY_MISS_NOTICE if kinds == {"replay-miss"} else NOT_JUDGED_NOTICE


def notice(
    event: EventData,
    *,
    reader: Reader,
    locale: Locale = DEFAULT_LOCALE,
    decisions: Mapping[int, Decision] | None = None,
    browser: bool = False,
    switched: bool = False,
) -> str | None:
    """The sentence `reader` sees for `event` in `locale`, or None when it shows nothing to
    them. `decisions`: the conversation's decisions by the id of the question each decided (its
    `StoredDecision.message_id`), which a `not-judged` escalation is said from; see
    `not_judged_notice`. `browser`: the reader is in a browser, which keeps some keys (Ctrl+T).
    `switched`: a `locale-set` event that changes the conversation's language after it began,
    said to an agent even in their own language (the line above the transcript had told them
    the language it began in)."""
    t = translations(locale)
    match event:
        case Escalated(reason=reason, question_entry=question):
            if reason in _ASKED:
                if reader == "customer":
                    return t.gettext(ASKED_NOTICE)
                if reason is Reason.NOT_HELPFUL:
                    return t.gettext(NOT_HELPFUL_FOR_AGENTS)
                return t.gettext(ASKED_FOR_AGENTS)
            if reason is Reason.NOT_JUDGED:
                decision = None
                if decisions is not None and question is not None:
                    decision = decisions.get(question)
                said = not_judged_notice(decision)
            elif reason in _NOT_CHECKED:
                said = NOT_CHECKED_NOTICE
            else:
                said = ESCALATED_NOTICE
            if reader == "agent":
                said = _FOR_AGENTS[said]
            return t.gettext(said)
        case Claimed(agent=agent):
            return t.gettext("{agent} joined the conversation.").format(agent=agent)
        case Released(agent=agent, by=by, away=away):
            if reader == "customer":
                return t.gettext("{agent} stepped away. Another person will reply here.").format(
                    agent=agent
                )
            if away:
                return t.gettext(
                    "{agent} was away too long: the conversation went back to the queue."
                ).format(agent=agent)
            if by is not None:
                return t.gettext("{by} put {agent}'s claim back in the queue.").format(
                    by=by, agent=agent
                )
            return t.gettext("{agent} put the conversation back in the queue.").format(agent=agent)
        case Resolved(agent=agent):
            if reader == "customer":
                return t.gettext("{agent} marked this resolved. Write again any time.").format(
                    agent=agent
                )
            return t.gettext("{agent} marked the conversation resolved.").format(agent=agent)
        case HandedBack(agent=agent):
            return t.gettext("{agent} handed the conversation back to the bot.").format(agent=agent)
        case Reopened():
            if reader == "customer":
                return None
            return t.gettext("The customer wrote again; the bot answers.")
        case FeedbackGiven(value=value):
            if reader == "customer":
                return None  # Their answer's bubble shows it.
            if value is Feedback.HELPFUL:
                return t.gettext("The customer marked the bot's answer helpful.")
            return t.gettext("The customer marked the bot's answer not helpful.")
        case LocaleSet(locale=chosen, chosen_by_customer=by_customer):
            if reader == "customer":
                return None  # The chat itself changes language.
            if not by_customer and chosen == locale and not switched:
                return None  # They write the reader's own language: nothing to point out.
            language = LANGUAGE_NAMES[chosen]
            if by_customer:
                return t.gettext("The customer switched the chat to {language}.").format(
                    language=language
                )
            return t.gettext("The customer writes {language}; their chat is in it.").format(
                language=language
            )
        case Decided():
            return None  # Bookkeeping: the answer or the escalation that follows says it.
        case Note(agent=agent, text=text):
            # Internal: whatever front end asks on a customer's behalf gets nothing.
            if reader == "customer":
                return None
            return f"{note_heading(agent, locale=locale)}: {text}"
        case PersonOffered(not_helpful=not_helpful):
            if reader == "customer" and not_helpful:
                return t.gettext(
                    REPEAT_NOT_HELPFUL_NOTICE_IN_A_BROWSER if browser else REPEAT_NOT_HELPFUL_NOTICE
                )
            if reader == "customer":
                return t.gettext(REPEAT_NOTICE_IN_A_BROWSER if browser else REPEAT_NOTICE)
            return t.gettext(
                "The customer asked the same question again; the bot offered a person."
            )
        case Thanked(resolved=resolved):
            if reader == "customer":
                return t.gettext(THANKED_NOTICE)
            if resolved:
                return t.gettext(THANKED_AFTER_RESOLUTION_FOR_AGENTS)
            return t.gettext(THANKED_FOR_AGENTS)
        case Rated(rating=rating):
            if reader == "customer":
                return t.gettext(
                    "You rated this conversation {rating} out of 5. Thank you!"
                ).format(rating=rating)
            return t.gettext("The customer rated the conversation {rating} out of 5.").format(
                rating=rating
            )
    return None


def opening_notice(first: object, *, locale: Locale = DEFAULT_LOCALE) -> str | None:
    """The sentence an agent reading `locale` sees above a conversation whose log begins with
    `first`, or None. A conversation in another language than English begins with its
    `locale-set` event, which says so (`notice`); English, the default, stores none, so one that
    begins otherwise is in English, and an agent who reads another language is told that as the
    event would tell them ("The customer writes English; their chat is in it.")."""
    if isinstance(first, ChatEvent) and isinstance(first.event, LocaleSet):
        return None
    return notice(LocaleSet(locale=DEFAULT_LOCALE), reader="agent", locale=locale)


def rating_prompt(agent: str | None, *, keys: bool = False, locale: Locale = DEFAULT_LOCALE) -> str:
    """Asked of the customer once a person resolved their conversation; `keys` while the
    prompt has the keyboard."""
    t = translations(locale)
    if agent is None:
        ask = t.gettext(
            "How did the person who helped you do? Rate it from 1 (poor) to 5 (excellent)"
        )
    else:
        ask = t.gettext("How did {agent} do? Rate it from 1 (poor) to 5 (excellent)").format(
            agent=agent
        )
    if keys:
        return t.gettext("{question}: press a number.").format(question=ask)
    return t.gettext("{question}:").format(question=ask)


def feedback_note(value: Feedback, *, locale: Locale = DEFAULT_LOCALE) -> str:
    """Under a bot answer the customer judged."""
    t = translations(locale)
    if value is Feedback.HELPFUL:
        return t.gettext("You marked this helpful. Thanks!")
    return t.gettext("You marked this not helpful; a person will take a look.")


def status_line(
    state: State, agent: str | None, *, ahead: int | None = None, locale: Locale = DEFAULT_LOCALE
) -> str:
    """Who is answering the customer's conversation, in their words; while they wait, how many
    customers wait ahead of them (`ahead`, when known), first, as a narrow chat cuts the end."""
    t = translations(locale)
    if state is State.WAITING:
        if ahead is None:
            return t.gettext("Waiting for a person: they will reply here.")
        if ahead == 0:
            return t.gettext("You are next: a person will reply here.")
        return t.gettext("{count} ahead of you: a person will reply here.").format(count=ahead)
    if state is State.CLAIMED:
        if agent is None:
            return t.gettext("A person (support agent) is helping you.")
        return t.gettext("{agent} (support agent) is helping you.").format(agent=agent)
    if state is State.RESOLVED:
        return t.gettext("Resolved. Write again if you need anything else.")
    return t.gettext("You are talking to the bot.")


# -- the agent console ----------------------------------------------------------------------------


def note_heading(agent: str, *, locale: Locale = DEFAULT_LOCALE) -> str:
    """Above an internal note in the agent's transcript."""
    return translations(locale).gettext("Note from {agent}, for agents only").format(agent=agent)


def waiting_for(duration: str, *, short: bool = False, locale: Locale = DEFAULT_LOCALE) -> str:
    """A queue row's status while nobody has it; `duration` like `3m 05s`. `short` is for a
    narrow column, under the heading `Wait`."""
    if short:
        return duration
    return translations(locale).gettext("waiting {duration}").format(duration=duration)


def bots_stalled(
    count: int, duration: str, *, held: int = 0, locale: Locale = DEFAULT_LOCALE
) -> str:
    """The queue's warning that questions wait for a bot longer than a bot takes: customers are
    waiting where no agent sees them, and someone should start one; or, when bots hold `held`
    others now (a live worker renews its leases), that the bots are busy, as `helpdesk doctor`
    says it."""
    t = translations(locale)
    if held:
        return t.ngettext(
            "{count} question has waited {duration} for a bot: the bots are busy with {held} (a"
            " slow Valen, or more concurrency needed)",
            "{count} questions have waited up to {duration} for a bot: the bots are busy with"
            " {held} (a slow Valen, or more concurrency needed)",
            count,
        ).format(count=f"{count:,}", duration=duration, held=f"{held:,}")
    return t.ngettext(
        "{count} question has waited {duration} for a bot: is one running?",
        "{count} questions have waited up to {duration} for a bot: is one running?",
        count,
    ).format(count=f"{count:,}", duration=duration)


def claimed_for(
    agent: str,
    duration: str,
    *,
    short: bool = False,
    locale: Locale = DEFAULT_LOCALE,
    away: str | None = None,
) -> str:
    """A queue row's status once claimed: who has it, and since how long; or, for an agent who
    is `away` (none of their consoles seen for a while), for how long they have been gone."""
    t = translations(locale)
    if away is not None:
        if short:
            return t.gettext("{agent} away {duration}").format(agent=agent, duration=away)
        return t.gettext("claimed by {agent} · away {duration}").format(agent=agent, duration=away)
    if short:
        return f"{agent} {duration}"
    return t.gettext("claimed by {agent} for {duration}").format(agent=agent, duration=duration)


def hand_back_question(count: int, *, locale: Locale = DEFAULT_LOCALE) -> str:
    """Asked before an agent holding claims quits."""
    return (
        translations(locale)
        .ngettext(
            "You hold 1 claimed conversation. Hand it back to the queue so another agent can "
            "take it, or keep it for when you return?",
            "You hold {count} claimed conversations. Hand them back to the queue so another "
            "agent can take them, or keep them for when you return?",
            count,
        )
        .format(count=count)
    )


def why_no_passages(decision: Decision, *, locale: Locale = DEFAULT_LOCALE) -> str:
    """Why nothing was retrieved for the question, naming the customer's words, as truthfully
    as the retriever can tell (the overlap retriever keeps no trace: it can say only that)."""
    t = translations(locale)
    trace = decision.retrieval
    if trace is None:
        return t.gettext("No passage shares a word with the question.")
    own = [term for term in trace.terms if not term.synonym]
    if not own and not any(character.isalnum() for character in decision.question):
        # "???" or "-": nothing was dropped as too common, there was nothing to search for.
        return t.gettext("No passage retrieved: the question has no words to search for.")
    if not own:
        return t.gettext(
            "No passage retrieved: every word of the question is too common to search for."
        )
    # A Chinese word becomes several terms (its character pairs): name each word once, and say it
    # is in no passage only when none of its terms is.
    common: list[QueryTerm] = []
    for term in own:
        if trace.common(term) and all(term.word != other.word for other in common):
            common.append(term)
    found = {term.word for term in trace.terms if term.passages}
    missing = list(dict.fromkeys(term.word for term in trace.terms if term.word not in found))
    parts = []
    if len(common) == 1:
        parts.append(
            t.gettext(
                "“{word}” is in {count} of {total} passages, too common to pick one on its own"
            ).format(word=common[0].word, count=common[0].passages, total=trace.passages)
        )
    elif common:
        counts = t.gettext(", ").join(
            t.gettext("“{word}” ({count})").format(word=term.word, count=term.passages)
            for term in common
        )
        parts.append(
            t.gettext(
                "{words} are each in half or more of the {total} passages, too common to pick "
                "one on their own"
            ).format(words=counts, total=trace.passages)
        )
    if missing:
        words = t.gettext(", ").join(f"“{word}”" for word in missing)
        parts.append(
            t.ngettext(
                "{words} is in no passage", "{words} are in no passage", len(missing)
            ).format(words=words)
        )
    if not parts:
        return t.gettext("No passage shares a word with the question.")
    # A separator of its own: Chinese joins clauses with a full-width semicolon.
    reasons = t.gettext("; ").join(parts)
    searched = next((name for code, name in LANGUAGE_NAMES.items() if code == trace.locale), None)
    if searched is not None:
        # A translation's engine searched only its own language's passages: "in no passage"
        # alone named words other passages have ("bike" asked in a Chinese conversation). Said
        # of the passages, not the conversation: `helpdesk ask` has none.
        return t.gettext(
            "No passage retrieved (only the {language} passages were searched): {reasons}."
        ).format(language=searched, reasons=reasons)
    return t.gettext("No passage retrieved: {reasons}.").format(reasons=reasons)
