"""`helpdesk ask QUESTION`: run the loop once and show the answer or the escalation."""

from __future__ import annotations

import argparse
import asyncio
import json

from chatbot.assembly import build_engine, make_http_client
from chatbot.cli.options import add_engine_options, settings_from
from chatbot.engine.engine import check_question
from chatbot.engine.models import Decision
from chatbot.text import printable


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("ask", help="answer one question from the knowledge base")
    parser.add_argument("question", help="the customer's question")
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")
    add_engine_options(parser)
    parser.set_defaults(func=run)


async def _answer(args: argparse.Namespace) -> Decision:
    settings = settings_from(args)
    async with make_http_client(settings) as http:
        engine = build_engine(settings, http)
        return await engine.answer(args.question)


def render(decision: Decision) -> str:
    """The decision for a person: answer or escalation first, then every candidate."""
    lines = []
    if decision.answer is not None:
        answer = decision.answer
        lines.append(f"Answer from {answer.id} (probability {answer.probability:.3f}):")
        lines.append(f"  {printable(answer.text)}")
    else:
        top = decision.top_probability
        best = f", best probability {top:.3f}" if top is not None else ""
        assert decision.reason is not None
        lines.append(f"Escalated to a person: {decision.reason.value}{best}")
    lines.append("")
    lines.append(f"Candidates (threshold {decision.threshold:g}):")
    if not decision.candidates:
        lines.append("  none: no passage shares a word with the question")
    for c in decision.candidates:
        judged = f"p={c.probability:.3f}" if c.probability is not None else "not judged"
        error = f"  {printable(c.error)}" if c.error else ""
        lines.append(f"  {c.id:<28} bm25={c.bm25:7.3f}  {judged}{error}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    check_question(args.question)
    decision = asyncio.run(_answer(args))
    if args.json:
        print(json.dumps(decision.to_json(), indent=2, ensure_ascii=False))
    else:
        print(render(decision))
    return 0
