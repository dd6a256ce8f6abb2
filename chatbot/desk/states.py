"""The conversation state machine: which move takes a conversation from which state to which,
and who may make it. Pure: no storage, no clock, no I/O.

```
bot ──escalate──► waiting ──claim──► claimed ──resolve──► resolved ──write──► bot
 ▲                  ▲                 │ │ ▲                  │  │
 └────hand back─────┼─────────────────┘ │ └──────reopen──────┘  └──thank──► resolved
                    └───release─────────┘   (an agent, as owner)
```

A customer may always write: in `bot` the bot judges the message, in `waiting` and `claimed` a
person reads it, and in `resolved` it hands the conversation back to the bot. A message that
only thanks, acknowledges or says goodbye (`thank`) moves nothing: a resolved conversation stays
resolved, its rating still to give.
"""

from __future__ import annotations

from enum import StrEnum

from chatbot.desk.models import State
from chatbot.errors import HelpdeskError


class Move(StrEnum):
    """Something someone does to a conversation."""

    WRITE = "write"
    """The customer writes a message."""
    THANK = "thank"
    """The customer writes a message that only thanks, acknowledges or says goodbye: no question,
    so it moves nothing (a thank-you for a resolution leaves the conversation resolved)."""
    ANSWER = "answer"
    """The bot answers a question."""
    ESCALATE = "escalate"
    """The conversation goes to the queue: the bot could not answer, or the customer asked."""
    CLAIM = "claim"
    REPLY = "reply"
    RESOLVE = "resolve"
    HAND_BACK = "hand-back"
    RELEASE = "release"
    """The owner puts a claimed conversation back in the queue (e.g. at the end of a shift)."""
    REOPEN = "reopen"
    """An agent takes a resolved conversation up again, as its owner (a follow-up)."""


class Role(StrEnum):
    """Who makes a move."""

    CUSTOMER = "customer"
    BOT = "bot"
    AGENT = "agent"


TRANSITIONS: dict[tuple[State, Move], State] = {
    (State.BOT, Move.WRITE): State.BOT,
    (State.WAITING, Move.WRITE): State.WAITING,
    (State.CLAIMED, Move.WRITE): State.CLAIMED,
    (State.RESOLVED, Move.WRITE): State.BOT,
    (State.BOT, Move.THANK): State.BOT,
    (State.WAITING, Move.THANK): State.WAITING,
    (State.CLAIMED, Move.THANK): State.CLAIMED,
    (State.RESOLVED, Move.THANK): State.RESOLVED,
    (State.BOT, Move.ANSWER): State.BOT,
    (State.BOT, Move.ESCALATE): State.WAITING,
    (State.RESOLVED, Move.ESCALATE): State.WAITING,
    (State.WAITING, Move.CLAIM): State.CLAIMED,
    (State.CLAIMED, Move.REPLY): State.CLAIMED,
    (State.CLAIMED, Move.RESOLVE): State.RESOLVED,
    (State.CLAIMED, Move.HAND_BACK): State.BOT,
    (State.CLAIMED, Move.RELEASE): State.WAITING,
    (State.RESOLVED, Move.REOPEN): State.CLAIMED,
}
"""Every allowed (state, move) and the state it leads to; anything else is refused."""

ROLES: dict[Move, frozenset[Role]] = {
    Move.WRITE: frozenset({Role.CUSTOMER}),
    Move.THANK: frozenset({Role.CUSTOMER}),
    Move.ANSWER: frozenset({Role.BOT}),
    Move.ESCALATE: frozenset({Role.CUSTOMER, Role.BOT}),
    Move.CLAIM: frozenset({Role.AGENT}),
    Move.REPLY: frozenset({Role.AGENT}),
    Move.RESOLVE: frozenset({Role.AGENT}),
    Move.HAND_BACK: frozenset({Role.AGENT}),
    Move.RELEASE: frozenset({Role.AGENT}),
    Move.REOPEN: frozenset({Role.AGENT}),
}
"""Who may make each move."""

OWNER_MOVES = frozenset({Move.REPLY, Move.RESOLVE, Move.HAND_BACK, Move.RELEASE})
"""Moves only the agent who claimed the conversation may make."""


class Refused(HelpdeskError):
    """The move is not allowed in the conversation's state, or not to whoever tried it."""

    def __init__(self, message: str, *, state: State, move: Move) -> None:
        super().__init__(message)
        self.state = state
        self.move = move


def next_state(
    state: State,
    move: Move,
    *,
    role: Role,
    agent: str | None = None,
    owner: str | None = None,
    conversation_id: int | None = None,
) -> State:
    """The state `move` leads to from `state`, or `Refused` with a sentence saying why not.

    `agent` is who makes an agent's move, `owner` the agent who holds the claim.
    """
    name = "the conversation" if conversation_id is None else f"conversation {conversation_id}"
    if role not in ROLES[move]:
        raise Refused(f"a {role.value} cannot {move.value} {name}", state=state, move=move)
    target = TRANSITIONS.get((state, move))
    if target is None:
        raise Refused(_why(state, move, name, owner), state=state, move=move)
    if move in OWNER_MOVES and agent != owner:
        raise Refused(f"{name} is claimed by {owner}", state=state, move=move)
    return target


def _why(state: State, move: Move, name: str, owner: str | None) -> str:
    if move is Move.CLAIM and state is State.CLAIMED:
        return f"{name} is already claimed by {owner}"
    if move is Move.ESCALATE:
        return f"a person already has {name}"
    if move in OWNER_MOVES and state is State.WAITING:
        return f"{name} is waiting; claim it first"
    if move in OWNER_MOVES:
        return f"{name} is {_IS[state]}; only a claimed conversation can be {_done(move)}"
    return f"{name} is {_IS[state]}: it cannot be {_done(move)}"


_IS = {
    State.BOT: "with the bot",
    State.WAITING: "waiting",
    State.CLAIMED: "claimed",
    State.RESOLVED: "resolved",
}
"""Each state in a sentence ("conversation 1 is bot" named the state, not what it means)."""


def _done(move: Move) -> str:
    return {
        Move.ANSWER: "answered by the bot",
        Move.CLAIM: "claimed",
        Move.REPLY: "replied to",
        Move.RESOLVE: "resolved",
        Move.HAND_BACK: "handed back",
        Move.RELEASE: "released",
        Move.REOPEN: "reopened",
    }.get(move, move.value)


def bot_judges(state: State) -> bool:
    """Whether a customer message written in `state` is a question for the bot."""
    return TRANSITIONS[(state, Move.WRITE)] is State.BOT


def bot_answers(state: State) -> bool:
    """Whether a decision made now may speak to the customer (else it is kept for the agent)."""
    return (state, Move.ANSWER) in TRANSITIONS
