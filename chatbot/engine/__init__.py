"""Answer-or-escalate: retrieve, judge with Valen, decide; for one question or a data set."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatbot.lazy import lazy_exports

# Names are imported from their modules when first used (PEP 562), so importing one light
# submodule (errors, protocol, models) does not load numpy or httpx with the rest. `evaluate` is
# not among them: as a lazy name it would be shadowed by the submodule of the same name.
if TYPE_CHECKING:
    from chatbot.engine.engine import DEFAULT_K, Engine
    from chatbot.engine.models import Answer, Candidate, Decision, Reason
    from chatbot.engine.policy import DEFAULT_THRESHOLD, decide
    from chatbot.engine.question import check_question

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
    "check_question": "chatbot.engine.question",
    "Answer": "chatbot.engine.models",
    "Candidate": "chatbot.engine.models",
    "Decision": "chatbot.engine.models",
    "Reason": "chatbot.engine.models",
    "DEFAULT_THRESHOLD": "chatbot.engine.policy",
    "decide": "chatbot.engine.policy",
}


__getattr__ = lazy_exports(__name__, _HOME)
