"""The content gaps as the editor lists them, shared by every SQL backend.

A content gap is a question no passage answers yet: the open escalations of one question
(`chatbot.store.stats_sql.question_key`, each row's `question_key`, however it was worded) that
are no `no_gap`, counted in customer messages (`asking`). The figures count them so
(`compute_stats`); the editor lists them so (`content_gaps` here), one row each; a passage written
from one marks every escalation of its question handled (each store's `mark_gap_handled`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chatbot.desk.models import ContentGap
from chatbot.engine.models import Reason
from chatbot.store.stats_sql import Dialect, Run, asking, no_gap

PAGE = 250
"""Escalations read at a time, newest first, to find the newest gaps (`content_gaps`)."""

REPLY = (
    "(SELECT coalesce(e.text, t.text) FROM entries e"
    " LEFT JOIN passage_texts t ON t.digest = e.text_digest"
    " WHERE e.conversation_id = g.conversation_id AND e.author = 'agent'"
    " AND e.id > g.after_message_id ORDER BY e.id LIMIT 1)"
)
"""The first thing an agent wrote in the conversation after the escalation `g`, if anything."""


def keyed(d: Dialect, gap: str, keys: str) -> str:
    """An SQL condition: the key of the `escalations` row aliased `gap` is one of `keys` (an SQL
    list), read off the index of keys (`escalations_open_by_key`), which also finds the rows
    written without their key."""
    return (
        f"({gap}.question_key IN ({keys})"
        f" OR ({gap}.question_key IS NULL AND {d.gap_key(gap)} IN ({keys})))"
    )


def content_gaps(run: Run, d: Dialect, *, include_handled: bool, limit: int) -> list[ContentGap]:
    """The content gaps, newest first (by their latest escalation), at most `limit`: one per key
    (`Dialect.gap_key`) among the open escalations, as the figures count them, and with
    `include_handled`, one per key and passage among the handled ones too. Each is its latest
    escalation (id, conversation, wording, reason, score), asked `count` times and last at
    `created_at`; `agent_reply` is the first reply to the latest of them that has one.

    Read in two steps, so that neither is a pass over every open escalation (the editor reads
    them again at every change while its tab is shown): the newest escalations that are gaps, a
    page at a time, until `limit` keys are found; then every gap of those keys, off the index of
    keys. `run` reads one snapshot."""
    state = "" if include_handled else " AND g.handled_at IS NULL"
    groups: dict[tuple[str, str | None], None] = {}  # Newest first: a dict keeps the order.
    params: dict[str, Any] = {}
    while True:
        older = (
            f" AND (g.created_at < {d.param('at')}"
            f" OR (g.created_at = {d.param('at')} AND g.id < {d.param('id')}))"
            if params
            else ""
        )
        rows = run(
            f"SELECT g.id, g.created_at, {d.gap_key('g')}, g.passage_id FROM escalations g"
            f" WHERE NOT ({no_gap(d, 'g')}){state}{older}"
            f" ORDER BY g.created_at DESC, g.id DESC LIMIT {PAGE}",
            params,
        )
        for _, _, key, passage_id in rows:
            groups.setdefault((key, passage_id), None)
        if len(groups) >= limit or len(rows) < PAGE:
            break
        params = {"at": rows[-1][1], "id": rows[-1][0]}
    newest = list(groups)[:limit]
    if not newest:
        return []
    keys = sorted({key for key, _ in newest})
    names = ", ".join(d.param(f"k{n}") for n in range(len(keys)))
    found: dict[tuple[str, str | None], list[Any]] = {}
    for row in run(
        f"SELECT g.id, g.conversation_id, {d.gap_question('g')}, g.reason, g.top_probability,"
        f" g.created_at, g.handled_at, g.passage_id, {d.gap_key('g')}, {asking(d, 'g')}, {REPLY}"
        f" FROM escalations g WHERE {keyed(d, 'g', names)}{state}"
        f" AND NOT ({no_gap(d, 'g')}) ORDER BY g.id DESC",
        {f"k{n}": key for n, key in enumerate(keys)},
    ):
        found.setdefault((row[8], row[7]), []).append(row)
    gaps = []
    for group in newest:
        rows = found[group]  # Newest first.
        id_, conversation, question, reason, top, _, handled_at, passage_id = rows[0][:8]
        gaps.append(
            ContentGap(
                id=id_,
                conversation_id=conversation,
                question=question,
                reason=Reason(reason),
                top_probability=top,
                created_at=datetime.fromtimestamp(float(max(r[5] for r in rows)), UTC),
                handled=handled_at is not None,
                passage_id=passage_id,
                agent_reply=next((r[10] for r in rows if r[10] is not None), None),
                count=len({r[9] for r in rows}),
            )
        )
    return gaps
