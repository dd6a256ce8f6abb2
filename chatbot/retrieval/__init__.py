"""From a question to candidate passages: tokenizer, BM25 index, the cookbook's overlap ranker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatbot.lazy import lazy_exports

# Names are imported from their modules when first used (PEP 562), so importing one light
# submodule (errors, protocol, models) does not load numpy or httpx with the rest.
if TYPE_CHECKING:
    from chatbot.retrieval.bm25 import BM25Index
    from chatbot.retrieval.retrievers import (
        BM25Retriever,
        OverlapRetriever,
        QueryTrace,
        Retrieved,
        Retriever,
        RetrieverName,
        SynonymGroups,
        TermMatch,
        make_retriever,
    )
    from chatbot.retrieval.tokenizer import tokenize

__all__ = [
    "BM25Index",
    "BM25Retriever",
    "OverlapRetriever",
    "QueryTrace",
    "Retrieved",
    "Retriever",
    "RetrieverName",
    "SynonymGroups",
    "TermMatch",
    "make_retriever",
    "tokenize",
]

_HOME = {
    "BM25Index": "chatbot.retrieval.bm25",
    "BM25Retriever": "chatbot.retrieval.retrievers",
    "OverlapRetriever": "chatbot.retrieval.retrievers",
    "QueryTrace": "chatbot.retrieval.retrievers",
    "Retrieved": "chatbot.retrieval.retrievers",
    "Retriever": "chatbot.retrieval.retrievers",
    "RetrieverName": "chatbot.retrieval.retrievers",
    "SynonymGroups": "chatbot.retrieval.retrievers",
    "TermMatch": "chatbot.retrieval.retrievers",
    "make_retriever": "chatbot.retrieval.retrievers",
    "tokenize": "chatbot.retrieval.tokenizer",
}


__getattr__ = lazy_exports(__name__, _HOME)
