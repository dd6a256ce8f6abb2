"""Two agents racing for one waiting conversation: exactly one wins, in threads and processes."""

from __future__ import annotations

import multiprocessing
import threading
from multiprocessing.synchronize import Barrier as ProcessBarrier
from pathlib import Path

from chatbot.store import State, Store
from tests.store.conftest import escalated


def make_waiting(path: Path, count: int) -> list[int]:
    with Store.open(path) as store:
        ids = []
        for _ in range(count):
            conversation = store.start_conversation()
            message = store.add_customer_message(conversation.id, "late fee?")
            store.record_decision(conversation.id, message_id=message.id, decision=escalated())
            ids.append(conversation.id)
        return ids


def test_threads_with_their_own_connections(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    rounds = make_waiting(path, 25)
    agents = ["ana", "ben"]
    barrier = threading.Barrier(len(agents))
    wins: dict[str, list[int]] = {agent: [] for agent in agents}

    def agent_loop(agent: str) -> None:
        with Store.open(path) as store:  # Each thread opens its own connection, as a process would.
            for conversation_id in rounds:
                barrier.wait()
                if store.claim(conversation_id, agent=agent).won:
                    wins[agent].append(conversation_id)

    threads = [threading.Thread(target=agent_loop, args=(agent,)) for agent in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(wins["ana"] + wins["ben"]) == rounds  # Every round has exactly one winner...
    assert not set(wins["ana"]) & set(wins["ben"])  # ...and never two.
    with Store.open(path) as store:
        for conversation_id in rounds:
            conversation = store.conversation(conversation_id)
            owner = "ana" if conversation_id in wins["ana"] else "ben"
            assert (conversation.state, conversation.agent) == (State.CLAIMED, owner)
            joined = [m for m in store.messages(conversation_id) if "joined" in m.text]
            assert len(joined) == 1


def _claim_in_process(path: str, conversation_id: int, agent: str, barrier: ProcessBarrier) -> None:
    with Store.open(Path(path)) as store:
        barrier.wait()
        won = store.claim(conversation_id, agent=agent).won
    raise SystemExit(0 if won else 1)


def test_two_processes(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    [conversation_id] = make_waiting(path, 1)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    processes = [
        context.Process(target=_claim_in_process, args=(str(path), conversation_id, agent, barrier))
        for agent in ("ana", "ben")
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    codes = sorted(process.exitcode for process in processes if process.exitcode is not None)
    assert codes == [0, 1]
    with Store.open(path) as store:
        conversation = store.conversation(conversation_id)
        assert conversation.state is State.CLAIMED
        winner = ["ana", "ben"][[p.exitcode for p in processes].index(0)]
        assert conversation.agent == winner
