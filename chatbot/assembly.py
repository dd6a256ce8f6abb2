"""Building the core objects from settings, shared by the CLI, the app and the tests."""

from __future__ import annotations

import httpx

from chatbot.config import Settings
from chatbot.engine.engine import Engine
from chatbot.knowledge_base.storage import load_knowledge_base
from chatbot.knowledge_base.synonyms import load_synonyms
from chatbot.retrieval.retrievers import BM25Retriever
from chatbot.valen.cache import ReplayCache
from chatbot.valen.client import RetryPolicy, ValenClient
from chatbot.valen.judge import PassageJudge
from chatbot.valen.transport import SlotTransport


def make_http_client(settings: Settings) -> httpx.AsyncClient:
    """The one HTTP client a process uses for Valen, with explicit timeouts and one connection
    slot per request allowed in flight (see `chatbot.valen.transport` for why slots)."""
    valen = settings.valen
    return httpx.AsyncClient(
        timeout=httpx.Timeout(
            valen.read_timeout_s, connect=valen.connect_timeout_s, pool=valen.budget_s
        ),
        transport=SlotTransport(slots=valen.max_in_flight),
    )


def make_valen_client(settings: Settings, http: httpx.AsyncClient) -> ValenClient:
    valen = settings.valen
    return ValenClient(
        http,
        base_url=valen.base_url,
        dialect=valen.dialect,
        api_key=valen.api_key,
        model=valen.model,
        max_in_flight=valen.max_in_flight,
        retry=RetryPolicy(
            max_attempts=valen.max_attempts,
            base_delay_s=valen.backoff_base_s,
            max_delay_s=valen.backoff_cap_s,
            max_wait_s=valen.max_retry_wait_s,
            retry_gateway_timeout=valen.retry_gateway_timeout,
        ),
        budget_s=valen.budget_s,
    )


def make_judge(settings: Settings, http: httpx.AsyncClient) -> PassageJudge:
    """Replay cache in front of the live client, as the replay mode says."""
    valen = settings.valen
    client = None if valen.replay == "on" else make_valen_client(settings, http)
    return PassageJudge(replay=valen.replay, cache=ReplayCache(valen.cache), client=client)


def build_engine(settings: Settings, http: httpx.AsyncClient) -> Engine:
    """The answer-or-escalate engine over the configured knowledge base."""
    passages = load_knowledge_base(settings.knowledge_base.path)
    synonyms = load_synonyms(settings.knowledge_base.path)
    return Engine(
        retriever=BM25Retriever(passages, synonyms=synonyms),
        judge=make_judge(settings, http),
        threshold=settings.engine.threshold,
        k=settings.engine.k,
    )
