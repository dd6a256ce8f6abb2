"""Answer-or-escalate: retrieve, judge with Valen, decide; for one question or a data set."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names are imported from their modules when first used (PEP 562), so importing one light
# submodule (errors, protocol, models) does not load numpy or httpx with the rest. `evaluate` is
# not among them: as a lazy name it would be shadowed by the submodule of the same name.
if TYPE_CHECKING:
    from chatbot.engine.engine import DEFAULT_K, Engine, check_question
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
]

_HOME = {
    "DEFAULT_K": "chatbot.engine.engine",
    "Engine": "chatbot.engine.engine",
    "check_question": "chatbot.engine.engine",
    "Answer": "chatbot.engine.models",
    "Candidate": "chatbot.engine.models",
    "Decision": "chatbot.engine.models",
    "Reason": "chatbot.engine.models",
    "DEFAULT_THRESHOLD": "chatbot.engine.policy",
    "decide": "chatbot.engine.policy",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value
