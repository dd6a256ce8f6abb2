"""A customer process for the race tests: kept apart from the test modules, which import Textual
and the test helpers, because each racer (tests/racers.py) imports the module its target lives
in. Forked from a server that has imported the desk already, a customer costs only its questions
and leaves the two cores to the race."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier

from chatbot.assembly import open_service
from chatbot.config import load_settings

QUESTIONS = [
    "I was charged twice for the same ride, can I get my money back?",
    "How long does a refund take to reach my card?",
    "Do I have to wear a helmet on an e-bike?",
    "The station was full, will I pay a late fee?",
    "How do I report damage to a bike?",
]
CONVERSATIONS_EACH = 5


def ask_as_a_customer(db: str, barrier: Barrier, results: multiprocessing.Queue[list[int]]) -> None:
    """Five conversations of five questions each, asked as fast as they can be stored."""
    desk = open_service(load_settings(store={"db": db}))
    try:
        barrier.wait()
        asked = []
        for _ in range(CONVERSATIONS_EACH):
            conversation = None
            for question in QUESTIONS:
                result = desk.ask(conversation, question)
                conversation = result.conversation.id
                asked.append(result.message.id)
        results.put(asked)
    finally:
        desk.close()
