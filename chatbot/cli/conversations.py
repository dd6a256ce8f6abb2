"""`helpdesk conversations list|show|export`: the desk for operators and scripts.

Reads through the desk service like every front end. `--json` output (and every line of
`export`) has the shapes documented in the README; times are ISO 8601 in UTC. The text output
says UTC beside its times, as `helpdesk stats` and `helpdesk kb history` do: a terminal's reader
could not tell them from local times otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from chatbot.cli.options import (
    add_db_option,
    positive_int,
    row_id,
    settings_from,
    terminal_width,
)
from chatbot.desk.state import State
from chatbot.text import cells, counted, fit, printable, wrap, wrap_lines

# The desk's models and service (pydantic, the engine) are imported where they are used, so that
# registering these commands costs `helpdesk --help` nothing.
if TYPE_CHECKING:
    from chatbot.desk.models import ChatEvent, ChatMessage, Conversation, StoredDecision
    from chatbot.desk.service import DeskService

PAGE = 500


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # With no command it prints its help and exits 2, as every command group does (`main`).
    parser = commands.add_parser("conversations", help="list, show or export conversations")
    sub = parser.add_subparsers(title="conversations commands", metavar="COMMAND",
                                parser_class=type(parser))  # fmt: skip
    common = argparse.ArgumentParser(add_help=False)
    add_db_option(common)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        # `help` is the description of its own --help too, as for the `kb` and `users` commands.
        return sub.add_parser(name, help=help, description=help, parents=[common])

    p = command("list", "one line per conversation, oldest first")
    p.add_argument("--state", choices=[s.value for s in State], help="only those in this state")
    p.add_argument("--limit", type=positive_int, metavar="N", help="at most N conversations")
    p.add_argument("--json", action="store_true", help="a JSON array of conversations")
    p.set_defaults(func=run_list)

    p = command("show", "one conversation: messages, events, decisions")
    p.add_argument("id", type=row_id, metavar="ID",
                   help="the conversation's number, as `list` and the queue show it")  # fmt: skip
    p.add_argument("--json", action="store_true", help="the conversation as one JSON object")
    p.set_defaults(func=run_show)

    p = command("export", "every conversation as JSON lines, as `show --json` has it")
    p.add_argument("--state", choices=[s.value for s in State], help="only those in this state")
    p.set_defaults(func=run_export)


def _service(args: argparse.Namespace) -> DeskService:
    from chatbot.assembly import open_service, require_database

    settings = settings_from(args, knowledge_base=False)
    require_database(settings)
    return open_service(settings, migrate=False)  # These only read: an older schema is refused.


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def conversation_json(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.id,
        "state": conversation.state.value,
        "agent": conversation.agent,
        "reason": None if conversation.reason is None else conversation.reason.value,
        "top_probability": conversation.top_probability,
        "pending_questions": conversation.pending,
        "created_at": _time(conversation.created_at),
        "updated_at": _time(conversation.updated_at),
        "waiting_since": _time(conversation.waiting_since),
        "claimed_at": _time(conversation.claimed_at),
        # The customer's language; null: English, never set (see the README's Languages).
        "locale": conversation.locale,
    }


def message_json(message: ChatMessage) -> dict[str, Any]:
    return {
        "id": message.id,
        "at": _time(message.created_at),
        "author": message.author.value,
        "agent": message.agent,
        "text": message.text,
        "passage_id": message.passage_id,
        "feedback": None if message.feedback is None else message.feedback.value,
        "pending": message.pending,
        "decision_id": message.decision_id,
    }


def event_json(event: ChatEvent) -> dict[str, Any]:
    from chatbot.desk.models import PersonOffered

    data = {"id": event.id, "at": _time(event.created_at), **event.event.model_dump(mode="json")}
    if isinstance(event.event, PersonOffered):
        # Stored without `not_helpful` unless it is true; a script reads the key on every offer.
        data["not_helpful"] = event.event.not_helpful
    return data


def note_json(entry: ChatEvent) -> dict[str, Any]:
    """An internal note: agents' only, kept apart from messages and events so that nothing
    reading `messages` for the customer's side can pick one up."""
    from chatbot.desk.models import Note

    assert isinstance(entry.event, Note)
    return {"id": entry.id, "at": _time(entry.created_at), "agent": entry.event.agent,
            "text": entry.event.text, "internal": True}  # fmt: skip


def _is_note(entry: ChatMessage | ChatEvent) -> bool:
    from chatbot.desk.models import ChatEvent, Note

    return isinstance(entry, ChatEvent) and isinstance(entry.event, Note)


def decision_json(stored: StoredDecision) -> dict[str, Any]:
    return {
        "id": stored.id,
        "message_id": stored.message_id,
        "at": _time(stored.created_at),
        "worker": stored.worker,
        **stored.decision.model_dump(mode="json"),
    }


def full_json(desk: DeskService, conversation: Conversation) -> dict[str, Any]:
    """A conversation with its log (messages, events and agents' internal notes, each with the id
    that orders them) and every decision the bot made in it, candidates included."""
    return _full(conversation, desk.entries(conversation.id), desk.decisions(conversation.id))


def _full(
    conversation: Conversation,
    entries: list[ChatMessage | ChatEvent],
    decisions: list[StoredDecision],
) -> dict[str, Any]:
    from chatbot.desk.models import ChatEvent, ChatMessage

    return {
        **conversation_json(conversation),
        "messages": [message_json(e) for e in entries if isinstance(e, ChatMessage)],
        "events": [event_json(e) for e in entries if isinstance(e, ChatEvent) and not _is_note(e)],
        "notes": [note_json(e) for e in entries if isinstance(e, ChatEvent) and _is_note(e)],
        "decisions": [decision_json(d) for d in decisions],
    }


def _pages(
    desk: DeskService, state: State | None, limit: int | None = None, upto: int | None = None
) -> Iterator[list[Conversation]]:
    """Keyset pages, so a database of any size streams in constant memory. Only conversations
    anything was written in: a browser's page starts one for each visitor, who may only look.
    With `upto`, none after that id (what an earlier pass over the same pages saw last)."""
    after, left = 0, limit
    while left is None or left > 0:
        page = desk.conversations(
            state=state, after_id=after, limit=min(PAGE, left or PAGE), include_empty=False
        )
        full = len(page) == PAGE
        if upto is not None and page and page[-1].id > upto:
            page, full = [c for c in page if c.id <= upto], False
        if page:
            yield page
        if not full:
            return
        after = page[-1].id
        left = None if left is None else left - len(page)


def _all(
    desk: DeskService, state: State | None, limit: int | None = None, upto: int | None = None
) -> Iterator[Conversation]:
    for page in _pages(desk, state, limit, upto):
        yield from page


Row = tuple[str, str, str, str, str]


def _row(conversation: Conversation) -> Row:
    return (
        str(conversation.id),
        conversation.state.value,
        "-" if conversation.agent is None else printable(conversation.agent),
        "-" if conversation.reason is None else conversation.reason.value,
        conversation.updated_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


HEADER: Row = ("id", "state", "agent", "reason", "last change (UTC)")


def run_list(args: argparse.Namespace) -> int:
    """Rows are written as they are read, a page at a time, so memory does not grow with the
    database. On a terminal the columns are as wide as what they hold: one pass over the pages
    measures them (keeping only the widths), a second writes the rows that pass saw."""
    desk = _service(args)
    try:
        state = None if args.state is None else State(args.state)
        if args.json:
            _print_json_array(conversation_json(c) for c in _all(desk, state, args.limit))
            return 0
        width = terminal_width()
        widths: list[int] | None = None
        upto: int | None = None
        if width is not None:
            widths = [cells(name) for name in HEADER[:4]]
            for conversation in _all(desk, state, args.limit):
                row = _row(conversation)
                widths = [max(w, cells(row[n])) for n, w in enumerate(widths)]
                upto = conversation.id
        shown = 0
        if width is None or upto is not None:
            rows = _all(desk, state, args.limit, upto)
            for line, counts in _list_lines((_row(c) for c in rows), width, widths):
                print(line)
                shown += counts
    finally:
        desk.close()
    print(counted(shown, "conversation"), file=sys.stderr)
    return 0


def _print_json_array(items: Iterator[dict[str, Any]]) -> None:
    """What `print(json.dumps(list(items), indent=2))` prints, one item at a time."""
    opened = False
    for item in items:
        body = json.dumps(item, indent=2)
        print("[\n" if not opened else ",\n", end="")
        print("\n".join("  " + line for line in body.split("\n")), end="")
        opened = True
    print("\n]" if opened else "[]")


def _list_lines(
    rows: Iterator[Row], width: int | None, widths: list[int] | None
) -> Iterator[tuple[str, int]]:
    """One line per conversation: id, state, agent, reason, last change, each with the number of
    conversations it ends (1, or 0 for the header and a row's first line of two). A pipe gets
    fixed columns (the same on every machine); a terminal gets columns as wide as what they hold
    (`widths`, the header's included), and where even those do not fit, the time goes on a line
    of its own below and a long agent's name is cut."""
    if width is None:
        for i, state, agent, reason, updated in rows:
            yield f"{i:>6}  {state:<8}  {agent:<12}  {reason:<14}  {updated}", 1
        return
    assert widths is not None
    # A header row on a terminal, which a person reads; a pipe's lines are the rows alone, one
    # conversation each, for `grep`, `wc -l` and `cut` (and `--json` for anything more).
    id_w, state_w, agent_w, reason_w = widths
    fixed = id_w + 2 + state_w + 2 + 2 + reason_w
    if fixed + agent_w + 2 + len("2026-01-05 09:00 UTC") <= width:
        below = None
    else:  # The time below, under the state; what is left of the line is the agent's.
        below = " " * (id_w + 2)
        agent_w = max(1, min(agent_w, width - fixed))
    for n, (i, state, agent, reason, updated) in enumerate(itertools.chain([HEADER], rows)):
        counts = 0 if n == 0 else 1
        # Ids to the right, as numbers are; the header's over them too.
        line = f"{i:>{id_w}}  {state:<{state_w}}  {fit(agent, agent_w)}  {reason:<{reason_w}}"
        if below is None:
            yield f"{line}  {updated}", counts
        else:
            yield line.rstrip(), 0
            yield below + updated, counts


def run_show(args: argparse.Namespace) -> int:
    from chatbot.desk.models import ChatEvent, Decided
    from chatbot.notices import by_question, notice

    desk = _service(args)
    try:
        conversation = desk.conversation(args.id)
        if args.json:
            print(json.dumps(full_json(desk, conversation), indent=2, ensure_ascii=False))
            return 0
        entries = desk.entries(conversation.id)
        decisions = desk.decisions(conversation.id)
    finally:
        desk.close()
    width = terminal_width()
    owner = f" by {printable(conversation.agent)}" if conversation.agent else ""
    started = conversation.created_at.astimezone(UTC)
    headline = (
        f"conversation {conversation.id}: {conversation.state.value}{owner},"
        f" started {started:%Y-%m-%d %H:%M} UTC"
    )
    print("\n".join(wrap(headline, width, "  ", first="")))
    # Each line gives the time only; a line of its own names the date when it changes, so a
    # conversation followed up days later does not read as one afternoon.
    day = started.date()
    decided = by_question(decisions)
    for entry in entries:
        at = entry.created_at.astimezone(UTC)
        if at.date() != day:
            day = at.date()
            print(f"{day:%Y-%m-%d} (UTC)")
        when = at.strftime("%H:%M:%S")
        if isinstance(entry, ChatEvent):
            sentence = notice(entry.event, reader="agent", decisions=decided)
            if sentence is not None:
                print("\n".join(_message_lines(when, "— " + printable(sentence), width)))
            continue
        who = entry.author.value if entry.agent is None else f"{entry.agent} (agent)"
        source = f" [{entry.source}]" if entry.source else ""
        extra = " (pending)" if entry.pending else ""
        if entry.feedback is not None:
            extra += f" ({entry.feedback.value})"
        # The label is wrapped with the text: a long source title left the text no room.
        label = f"{printable(who)}{printable(source)}{extra}: "
        print("\n".join(_message_lines(when, label + printable(entry.text), width)))
    # What came of each decision: a `kept` one was never said (a person had the conversation).
    outcomes = {
        e.event.decision: e.event.outcome
        for e in entries
        if isinstance(e, ChatEvent) and isinstance(e.event, Decided)
    }
    for stored in decisions:
        made = stored.decision
        verdict = f"answered from {made.answer.id}" if made.answer else f"escalated: {made.reason}"
        if outcomes.get(stored.id) == "kept":
            verdict = f"would have {verdict}; kept silent as the conversation had gone to a person"
        line = f"decision {stored.id} on message {stored.message_id}: {verdict}"
        print("\n".join(wrap(line, width, "  ", first="")))
    return 0


def _message_lines(when: str, text: str, width: int | None) -> list[str]:
    """A message (its author's label first) after its time: its own lines (and, on a terminal, the
    lines it is wrapped to) indented past the time, so the next time stays at the start of a
    line."""
    return wrap_lines(text, width, " " * len("HH:MM:SS  "), first=f"{when}  ")


def run_export(args: argparse.Namespace) -> int:
    desk = _service(args)
    try:
        state = None if args.state is None else State(args.state)
        # A page of conversations, then their logs and decisions in a query or two each: a
        # handful of round trips per page on PostgreSQL, not a few per conversation.
        for page in _pages(desk, state):
            ids = [c.id for c in page]
            entries, decisions = desk.entries_of(ids), desk.decisions_of(ids)
            for conversation in page:
                full = _full(conversation, entries[conversation.id], decisions[conversation.id])
                print(json.dumps(full, ensure_ascii=False))
    finally:
        desk.close()
    return 0
