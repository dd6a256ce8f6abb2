"""Events in sentences, for the person reading them: the one place those sentences live.

The store keeps typed events with parameters, never text, so a history reads the same whatever
language its reader speaks, and analytics count events instead of parsing prose. Front ends (the
app, the command line) call `notice`; a translation replaces the sentences here and nowhere else.
"""

from __future__ import annotations

from typing import Literal

from chatbot.desk.models import (
    Claimed,
    Decided,
    Escalated,
    EventData,
    Feedback,
    FeedbackGiven,
    HandedBack,
    Note,
    PersonOffered,
    Rated,
    Released,
    Reopened,
    Resolved,
    State,
)
from chatbot.engine.models import Reason

Reader = Literal["customer", "agent"]

ESCALATED_NOTICE = "The bot could not answer this from the help center. A person will reply here."
ASKED_NOTICE = "A person will reply here."
REPEAT_NOTICE = (
    "You asked this before: the answer above is what the help center says. If it did not help, "
    "talk to a person (Ctrl+T) and they will reply here."
)

# Escalations the customer asked for, as opposed to ones the bot decided on.
_ASKED = frozenset({Reason.CUSTOMER_ASKED, Reason.NOT_HELPFUL})


def notice(event: EventData, *, reader: Reader) -> str | None:
    """The sentence `reader` sees for `event`, or None when it shows nothing to them."""
    match event:
        case Escalated(reason=reason):
            return ASKED_NOTICE if reason in _ASKED else ESCALATED_NOTICE
        case Claimed(agent=agent):
            return f"{agent} joined the conversation."
        case Released(agent=agent):
            if reader == "customer":
                return f"{agent} stepped away. Another person will reply here."
            return f"{agent} put the conversation back in the queue."
        case Resolved(agent=agent):
            return f"{agent} marked this resolved. Write again any time."
        case HandedBack(agent=agent):
            return f"{agent} handed the conversation back to the bot."
        case Reopened():
            return None if reader == "customer" else "The customer wrote again; the bot answers."
        case FeedbackGiven(value=value):
            if reader == "customer":
                return None  # Their answer's bubble shows it.
            verdict = "helpful" if value is Feedback.HELPFUL else "not helpful"
            return f"The customer marked the bot's answer {verdict}."
        case Decided():
            return None  # Bookkeeping: the answer or the escalation that follows says it.
        case Note(agent=agent, text=text):
            # Internal: whatever front end asks on a customer's behalf gets nothing.
            return None if reader == "customer" else f"{note_heading(agent)}: {text}"
        case PersonOffered():
            if reader == "customer":
                return REPEAT_NOTICE
            return "The customer asked the same question again; the bot offered a person."
        case Rated(rating=rating):
            if reader == "customer":
                return f"You rated this conversation {rating} out of 5. Thank you!"
            return f"The customer rated the conversation {rating} out of 5."
    return None


def rating_prompt(agent: str | None, *, keys: bool = False) -> str:
    """Asked of the customer once a person resolved their conversation; `keys` while the
    prompt has the keyboard."""
    who = agent or "the person who helped you"
    ask = f"How did {who} do? Rate it from 1 (poor) to 5 (excellent)"
    return f"{ask}: press a number." if keys else f"{ask}:"


def feedback_note(value: Feedback) -> str:
    """Under a bot answer the customer judged."""
    if value is Feedback.HELPFUL:
        return "You marked this helpful. Thanks!"
    return "You marked this not helpful; a person will take a look."


def status_line(state: State, agent: str | None) -> str:
    """Who is answering the customer's conversation, in their words."""
    if state is State.WAITING:
        return "Waiting for a person: they will reply here."
    if state is State.CLAIMED:
        return f"{agent or 'A person'} (support agent) is helping you."
    if state is State.RESOLVED:
        return "Resolved. Write again if you need anything else."
    return "You are talking to the help-desk bot."


# -- the agent console ----------------------------------------------------------------------------


def note_heading(agent: str) -> str:
    """Above an internal note in the agent's transcript."""
    return f"Note from {agent}, for agents only"


def waiting_for(duration: str, *, short: bool = False) -> str:
    """A queue row's status while nobody has it; `duration` like `3m 05s`. `short` is for a
    narrow column, under the heading `Wait`."""
    return duration if short else f"waiting {duration}"


def claimed_for(agent: str, duration: str, *, short: bool = False) -> str:
    """A queue row's status once claimed: who has it, and since how long."""
    return f"{agent} {duration}" if short else f"claimed by {agent} for {duration}"


def hand_back_question(count: int) -> str:
    """Asked before an agent holding claims quits."""
    if count == 1:
        held, them = "1 claimed conversation", "it"
    else:
        held, them = f"{count} claimed conversations", "them"
    return (
        f"You hold {held}. Hand {them} back to the queue so another agent can take {them}, or "
        f"keep {them} for when you return?"
    )
