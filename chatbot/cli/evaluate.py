"""`helpdesk eval DATA.json`: the cookbook's evaluation, on the data file's own passages."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from chatbot.assembly import make_http_client, make_judge
from chatbot.cli.options import add_engine_options, settings_from
from chatbot.engine.evaluate import evaluate


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "eval", help="evaluate retrieval and reranking on a labelled data file"
    )
    parser.add_argument(
        "data",
        type=Path,
        metavar="DATA.json",
        help="passages and labelled queries, shaped like rerank_data.json",
    )
    parser.add_argument(
        "--retriever",
        choices=["bm25", "overlap"],
        default="bm25",
        help="bm25 (default) or the cookbook's keyword-overlap stand-in",
    )
    parser.add_argument(
        "--predicate",
        action="append",
        metavar="TEXT",
        help="predicate wording; repeat to compare wordings (first one decides)",
    )
    add_engine_options(parser, knowledge_base=False)
    parser.set_defaults(func=run)  # fmt: skip


async def _evaluate(args: argparse.Namespace) -> dict[str, Any]:
    settings = settings_from(args)
    async with make_http_client(settings) as http:
        kwargs: dict[str, Any] = {}
        if args.predicate:
            kwargs["predicates"] = args.predicate
        return await evaluate(
            args.data,
            judge=make_judge(settings, http),
            retriever=args.retriever,
            k=settings.engine.k,
            threshold=settings.engine.threshold,
            **kwargs,
        )


def run(args: argparse.Namespace) -> int:
    print(json.dumps(asyncio.run(_evaluate(args)), indent=2, ensure_ascii=False))
    return 0
