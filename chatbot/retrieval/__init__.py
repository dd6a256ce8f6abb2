"""From a question to candidate passages: tokenizer, BM25 index, the cookbook's overlap ranker."""

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
