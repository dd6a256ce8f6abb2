"""Two agents racing for one waiting conversation: exactly one wins, in threads and processes."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable
from multiprocessing.synchronize import Barrier as ProcessBarrier

from chatbot.desk.models import ChatEvent, Claimed, State
from tests import racers
from tests.backends import Backend


def make_waiting(backend: Backend, count: int) -> list[int]:
    desk = backend.service()
    try:
        ids = []
        for _ in range(count):
            conversation = desk.ask(None, "late fee?").conversation
            desk.talk_to_person(conversation.id)
            ids.append(conversation.id)
        return ids
    finally:
        desk.close()


def in_threads(agents: list[str], loop: Callable[[str], None], *, timeout: float) -> None:
    """Run `loop(agent)` for every agent at once, each in a thread of its own, and raise what
    any of them raised (a thread's own error is otherwise only printed)."""
    errors: list[BaseException] = []

    def run(agent: str) -> None:
        try:
            loop(agent)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=(agent,)) for agent in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads), "an agent is still at it"
    if errors:
        raise errors[0]


def test_threads_with_their_own_connections(backend: Backend) -> None:
    rounds = make_waiting(backend, 25)
    agents = ["ana", "ben"]
    barrier = threading.Barrier(len(agents))
    wins: dict[str, list[int]] = {agent: [] for agent in agents}

    def agent_loop(agent: str) -> None:
        desk = backend.service()  # Each thread its own connection, as a process would have.
        try:
            for conversation_id in rounds:
                barrier.wait()
                if desk.claim(conversation_id, agent=agent).won:
                    wins[agent].append(conversation_id)
        finally:
            desk.close()

    in_threads(agents, agent_loop, timeout=30)

    assert sorted(wins["ana"] + wins["ben"]) == rounds  # Every round has exactly one winner...
    assert not set(wins["ana"]) & set(wins["ben"])  # ...and never two.
    desk = backend.service()
    try:
        for conversation_id in rounds:
            conversation = desk.conversation(conversation_id)
            owner = "ana" if conversation_id in wins["ana"] else "ben"
            assert (conversation.state, conversation.agent) == (State.CLAIMED, owner)
            claims = [e for e in desk.entries(conversation_id)
                      if isinstance(e, ChatEvent) and isinstance(e.event, Claimed)]  # fmt: skip
            assert len(claims) == 1
    finally:
        desk.close()


def test_agents_taking_the_next_at_once_get_one_each(backend: Backend) -> None:
    """Three agents pressing "take next" until the queue is empty, each on its own connection:
    every conversation goes to exactly one of them, and each takes in the queue's order."""
    waiting = make_waiting(backend, 30)
    agents = ["ana", "ben", "cy"]
    barrier = threading.Barrier(len(agents))
    taken: dict[str, list[int]] = {agent: [] for agent in agents}
    spans: dict[str, tuple[float, float]] = {}

    def agent_loop(agent: str) -> None:
        desk = backend.service()
        try:
            ready = time.monotonic()
            barrier.wait()
            while (result := desk.take_next(agent=agent)) is not None:
                assert result.won and result.conversation.agent == agent
                taken[agent].append(result.conversation.id)
            spans[agent] = (ready, time.monotonic())
        finally:
            desk.close()

    in_threads(agents, agent_loop, timeout=60)

    # They raced: all were connected and ready before any had found the queue empty.
    assert max(ready for ready, _ in spans.values()) < min(end for _, end in spans.values())
    assert sorted(sum(taken.values(), [])) == waiting  # Each taken once, none left behind.
    assert all(ids == sorted(ids) for ids in taken.values())  # Oldest first, for each agent.


def _claim_in_process(
    backend: Backend,
    conversation_id: int,
    agent: str,
    barrier: ProcessBarrier,
    times: multiprocessing.Queue[tuple[str, float, float]],
) -> None:
    desk = backend.service()
    try:
        ready = time.monotonic()
        barrier.wait()
        won = desk.claim(conversation_id, agent=agent).won
        times.put((agent, ready, time.monotonic()))
    finally:
        desk.close()
    raise SystemExit(0 if won else 1)


def test_two_processes(backend: Backend) -> None:
    [conversation_id] = make_waiting(backend, 1)
    context = racers.context()
    barrier = context.Barrier(2)
    times: multiprocessing.Queue[tuple[str, float, float]] = context.Queue()
    processes = [
        racers.start(_claim_in_process, backend, conversation_id, agent, barrier, times)
        for agent in ("ana", "ben")
    ]
    spans = [times.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    codes = sorted(process.exitcode for process in processes if process.exitcode is not None)
    assert codes == [0, 1]
    # They raced: both were connected and ready before either had claimed (CLOCK_MONOTONIC is
    # one clock for every process on the machine).
    assert max(ready for _, ready, _ in spans) < min(claimed for _, _, claimed in spans), spans
    desk = backend.service()
    try:
        conversation = desk.conversation(conversation_id)
        assert conversation.state is State.CLAIMED
        winner = ["ana", "ben"][[p.exitcode for p in processes].index(0)]
        assert conversation.agent == winner
    finally:
        desk.close()
