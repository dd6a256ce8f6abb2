"""The pure state machine: every move from every state, allowed or refused, and who may make it."""

from __future__ import annotations

import itertools

import pytest

from chatbot.desk.models import State
from chatbot.desk.states import (
    OWNER_MOVES,
    ROLES,
    TRANSITIONS,
    Move,
    Refused,
    Role,
    bot_answers,
    bot_judges,
    next_state,
)

ALLOWED = {
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


def role_for(move: Move) -> Role:
    return sorted(ROLES[move])[0]


def test_the_table_is_the_one_documented() -> None:
    assert TRANSITIONS == ALLOWED


@pytest.mark.parametrize(("state", "move"), list(itertools.product(State, Move)))
def test_every_move_from_every_state(state: State, move: Move) -> None:
    owner = "ana" if state is State.CLAIMED else None
    if (state, move) in ALLOWED:
        agent = "ana" if move in OWNER_MOVES else None
        assert (
            next_state(state, move, role=role_for(move), agent=agent, owner=owner)
            is ALLOWED[(state, move)]
        )
    else:
        with pytest.raises(Refused) as refused:
            next_state(state, move, role=role_for(move), agent="ana", owner=owner)
        assert (refused.value.state, refused.value.move) == (state, move)
        assert "\n" not in str(refused.value)


@pytest.mark.parametrize(("move", "role"), list(itertools.product(Move, Role)))
def test_only_the_right_role_may_move(move: Move, role: Role) -> None:
    # From a state where the move is allowed, so only the role can refuse it.
    state = next(s for (s, m) in ALLOWED if m is move)
    if role in ROLES[move]:
        next_state(state, move, role=role, agent="ana", owner="ana")
    else:
        with pytest.raises(Refused, match=f"a {role.value} cannot {move.value}"):
            next_state(state, move, role=role, agent="ana", owner="ana")


@pytest.mark.parametrize("move", sorted(OWNER_MOVES))
def test_only_the_owner_moves_a_claimed_conversation(move: Move) -> None:
    with pytest.raises(Refused, match="conversation 7 is claimed by ana"):
        next_state(State.CLAIMED, move, role=Role.AGENT, agent="ben", owner="ana",
                   conversation_id=7)  # fmt: skip
    assert next_state(State.CLAIMED, move, role=Role.AGENT, agent="ana", owner="ana")


def test_refusals_say_why() -> None:
    def why(state: State, move: Move) -> str:
        with pytest.raises(Refused) as refused:
            next_state(state, move, role=role_for(move), agent="ben", owner="ana",
                       conversation_id=3)  # fmt: skip
        return str(refused.value)

    assert why(State.WAITING, Move.REPLY) == "conversation 3 is waiting; claim it first"
    assert why(State.CLAIMED, Move.CLAIM) == "conversation 3 is already claimed by ana"
    assert why(State.WAITING, Move.ESCALATE) == "a person already has conversation 3"
    assert why(State.BOT, Move.RESOLVE) == (
        "conversation 3 is with the bot; only a claimed conversation can be resolved"
    )
    assert why(State.BOT, Move.CLAIM) == "conversation 3 is with the bot: it cannot be claimed"
    assert why(State.WAITING, Move.ANSWER) == (
        "conversation 3 is waiting: it cannot be answered by the bot"
    )


def test_which_messages_the_bot_judges_and_when_it_may_speak() -> None:
    assert [s for s in State if bot_judges(s)] == [State.BOT, State.RESOLVED]
    assert [s for s in State if bot_answers(s)] == [State.BOT]
