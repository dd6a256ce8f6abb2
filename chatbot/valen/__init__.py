"""The Valen decision model: wire protocol for both dialects, errors, HTTP client, replay cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatbot.lazy import lazy_exports

# Names are imported from their modules when first used (PEP 562), so importing one light
# submodule (errors, protocol, models) does not load numpy or httpx with the rest.
if TYPE_CHECKING:
    from chatbot.valen.cache import CacheEntry, ReplayCache
    from chatbot.valen.client import DEFAULT_BASE_URL, SYSTEMONE_BASE_URL, RetryPolicy, ValenClient
    from chatbot.valen.errors import ValenError
    from chatbot.valen.judge import PassageJudge, ReplayMode
    from chatbot.valen.protocol import PREDICATE, Dialect, Outcome, Question, input_text

__all__ = [
    "DEFAULT_BASE_URL",
    "PREDICATE",
    "SYSTEMONE_BASE_URL",
    "CacheEntry",
    "Dialect",
    "Outcome",
    "PassageJudge",
    "Question",
    "ReplayCache",
    "ReplayMode",
    "RetryPolicy",
    "ValenClient",
    "ValenError",
    "input_text",
]

_HOME = {
    "CacheEntry": "chatbot.valen.cache",
    "ReplayCache": "chatbot.valen.cache",
    "DEFAULT_BASE_URL": "chatbot.valen.client",
    "SYSTEMONE_BASE_URL": "chatbot.valen.client",
    "RetryPolicy": "chatbot.valen.client",
    "ValenClient": "chatbot.valen.client",
    "ValenError": "chatbot.valen.errors",
    "PassageJudge": "chatbot.valen.judge",
    "ReplayMode": "chatbot.valen.judge",
    "PREDICATE": "chatbot.valen.protocol",
    "Dialect": "chatbot.valen.protocol",
    "Outcome": "chatbot.valen.protocol",
    "Question": "chatbot.valen.protocol",
    "input_text": "chatbot.valen.protocol",
}


__getattr__ = lazy_exports(__name__, _HOME)
