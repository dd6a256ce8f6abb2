"""Answer-or-escalate: retrieve, judge with Valen, decide; for one question or a data set."""

from chatbot.engine.engine import DEFAULT_K, Engine, check_question
from chatbot.engine.evaluate import evaluate
from chatbot.engine.models import Answer, Candidate, Decision, Reason
from chatbot.engine.policy import DEFAULT_THRESHOLD, decide

__all__ = [
    "DEFAULT_K",
    "DEFAULT_THRESHOLD",
    "Answer",
    "Candidate",
    "Decision",
    "Engine",
    "Reason",
    "check_question",
    "decide",
    "evaluate",
]
