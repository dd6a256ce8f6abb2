"""The Valen decision model: wire protocol for both dialects, errors, HTTP client, replay cache."""

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
