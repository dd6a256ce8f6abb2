"""The desk's figures (`DeskStats`) as aggregate queries, shared by every SQL backend.

The queries are plain SQL (subqueries, UNION, CASE and a window count, which SQLite and
PostgreSQL both run) over indexed columns (see migration 6 in `chatbot.store.schema`). What
differs between databases is confined to a `Dialect`: how a parameter is written, how a time
becomes epoch seconds, an hour of the day or a day number, how a probability falls into a
histogram bin, how percentiles are taken, how a question becomes its key. `SQLiteDialect` is
below; a PostgreSQL store adds its own (`percentile_disc`, `extract(epoch ...)`, `floor`) and
calls `compute_stats` with it. One query parses JSON, the ratings', off an index of the rated
events that holds their parameters (`entries_ratings`, migration 13); Valen's errors are counted
off table `judgment_errors`, which a store writes with each decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, Protocol

from chatbot.desk.models import RATINGS
from chatbot.desk.stats import (
    SCORE_BINS,
    TOP_GAPS,
    AgentRatings,
    DayCount,
    DeskStats,
    ErrorCount,
    GapCount,
    PassageFeedback,
    Percentiles,
    Ratings,
    ReasonCount,
    ScoreBin,
    ThresholdCount,
)
from chatbot.engine.models import Reason

Run = Callable[[str, Mapping[str, Any]], list[Any]]
"""Runs one query with named parameters and returns its rows as tuples."""

WRITTEN = "EXISTS (SELECT 1 FROM entries e WHERE e.conversation_id = c.id)"
"""The conversation `c` has a log entry (one probe of the entries' index by conversation)."""

SHOWN_EMPTY_DAYS = 30
"""A window starting at most this many days before today has every day of it counted, zeros
before the first conversation included: the analytics screen's periods (7 and 30 days, the
longest) and `--since 30d` keep all their days."""


class Dialect(Protocol):
    """The few SQL spellings that differ between databases."""

    def gap_question(self, gap: str) -> str:
        """The question text of the `escalations` row aliased `gap` (SQLite keeps most by
        reference to the message)."""
        ...

    def gap_entry(self, gap: str) -> str:
        """The customer message the `escalations` row aliased `gap` copied its question from:
        its id, NULL if none is found. SQLite keeps it (`question_entry`, rows of its version 7
        on); otherwise it is the conversation's latest customer message with that text before
        the escalation (one probe of an index by conversation and author, newest first)."""
        ...

    def question_key(self, text: str) -> str:
        """The SQL expression `text` as a question's key (`question_key`), to compare two
        wordings of a question."""
        ...

    def gap_key(self, gap: str) -> str:
        """The key of the `escalations` row aliased `gap` (`question_key` of its question): what
        makes escalations one content gap. Stored with the row (column `question_key`), and
        computed for a row written without one."""
        ...

    answer_title: str
    """The title of the passage the message `t` quotes (SQLite keeps a bot answer's with the
    passage revision it names)."""

    def param(self, name: str) -> str:
        """A named parameter, as the driver spells it."""
        ...

    def time_value(self, moment: datetime) -> Any:
        """A moment as the database stores times (the value bound to a parameter)."""
        ...

    def epoch(self, column: str) -> str:
        """A stored time as epoch seconds (a number: differences are durations)."""
        ...

    def hour_of_day(self, column: str) -> str:
        """A stored time's hour of day, 0-23, UTC."""
        ...

    def day_number(self, column: str) -> str:
        """A stored time's UTC day, as days since 1970-01-01."""
        ...

    def score_bin(self, column: str, bins: int) -> str:
        """A probability's histogram bin, 0 to `bins - 1` (1.0 in the last); NULL for NULL
        (PostgreSQL's least() would turn it into the last bin: guard it with a CASE)."""
        ...

    def percentiles(self, run: Run, values: str, params: Mapping[str, Any]) -> Percentiles:
        """The count, p50 and p90 of the column `v` of the query `values` (NULLs left out),
        nearest rank: each percentile is one of the values."""
        ...

    def may_have_answered(self, gap: str) -> str:
        """An SQL condition (ending in AND) put before the look for an answered question in the
        conversation of the `escalations` row aliased `gap`, or nothing: a cheap test that lets
        the database skip that look where no decision of the conversation answered."""
        ...

    def json_value(self, column: str, key: str) -> str:
        """The value of `key` in the JSON object held as text in `column` (the ratings' one
        figure that needs an event's parameters)."""
        ...

    per_row: str
    """Appended to a correlated subquery (`no_gap`'s answered question) to keep it one probe per
    outer row (PostgreSQL would otherwise hash it over the whole table)."""


class SQLiteDialect:
    """Times are REAL epoch seconds; parameters are `:name`."""

    per_row = ""  # SQLite runs a correlated EXISTS per row already.

    def may_have_answered(self, gap: str) -> str:
        return ""  # Its decisions have no index by conversation; the EXISTS is one probe anyway.

    answer_title = (
        "coalesce(t.passage_title,"
        " (SELECT nullif(r.title, '') FROM passage_revisions r WHERE r.id = t.revision))"
    )

    def gap_question(self, gap: str) -> str:
        return (
            f"coalesce({gap}.question,"
            f" (SELECT x.text FROM entries x WHERE x.id = {gap}.question_entry))"
        )

    def gap_entry(self, gap: str) -> str:
        return f"coalesce({gap}.question_entry, {asked_entry(gap)})"

    def question_key(self, text: str) -> str:
        # The store registers the function on its connections: SQLite has no translate(), and
        # 60 nested replace() calls overflowed its parser's stack (and cost 3 times the CPU).
        return f"question_key({text})"

    def gap_key(self, gap: str) -> str:
        # NULL in a row written without it (by an older helpdesk, or a tool inserting rows):
        # coalesce() computes only what is missing.
        return f"coalesce({gap}.question_key, {self.question_key(self.gap_question(gap))})"

    def param(self, name: str) -> str:
        return f":{name}"

    def time_value(self, moment: datetime) -> float:
        return moment.timestamp()

    def epoch(self, column: str) -> str:
        return column

    def hour_of_day(self, column: str) -> str:
        return f"(CAST({column} AS INTEGER) / 3600 % 24)"

    def day_number(self, column: str) -> str:
        return f"(CAST({column} AS INTEGER) / 86400)"

    def score_bin(self, column: str, bins: int) -> str:
        return f"min(CAST({column} * {bins} AS INTEGER), {bins - 1})"

    def json_value(self, column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"

    def percentiles(self, run: Run, values: str, params: Mapping[str, Any]) -> Percentiles:
        # SQLite has no percentile aggregate, and ranking in SQL (row_number() over a sort) took
        # ten times as long as reading the values: they are read, and ranked here. PostgreSQL
        # does it in the database: percentile_disc(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY v).
        found = sorted(row[0] for row in run(f"SELECT v FROM ({values}) AS s", params)
                       if row[0] is not None)  # fmt: skip
        return nearest_rank(found)


class PostgresDialect:
    """Times are double precision epoch seconds, as in SQLite; parameters are `%(name)s`; the
    percentiles are PostgreSQL's own `percentile_disc` (nearest rank, like `nearest_rank`)."""

    answer_title = "t.passage_title"

    # `OFFSET 0` keeps the EXISTS correlated: hashed, it keyed every answered question of the
    # whole table (a regexp_replace of 25 us each), 0.3 s at 16,000 answers, for any window.
    per_row = " OFFSET 0"

    def may_have_answered(self, gap: str) -> str:
        # Hashed once (the decisions' conversations that answered, 10 ms at 60,000 decisions):
        # most escalated conversations had no answer, and are never keyed.
        return (
            f"{gap}.conversation_id IN (SELECT d.conversation_id FROM decisions d"
            " WHERE d.answer_id IS NOT NULL) AND "
        )

    def gap_question(self, gap: str) -> str:
        return f"{gap}.question"

    def gap_entry(self, gap: str) -> str:
        return asked_entry(gap)

    def question_key(self, text: str) -> str:
        return postgres_question_key(text)

    def gap_key(self, gap: str) -> str:
        # NULL only in a row an older helpdesk wrote after migration 10 (a rolling upgrade).
        return f"coalesce({gap}.question_key, {self.question_key(self.gap_question(gap))})"

    def param(self, name: str) -> str:
        return f"%({name})s"

    def time_value(self, moment: datetime) -> float:
        return moment.timestamp()

    def epoch(self, column: str) -> str:
        return column

    def hour_of_day(self, column: str) -> str:
        return f"mod(floor({column})::bigint / 3600, 24)"

    def day_number(self, column: str) -> str:
        return f"(floor({column})::bigint / 86400)"

    def score_bin(self, column: str, bins: int) -> str:
        # least() ignores NULLs, so a NULL score would land in the last bin without the CASE.
        return (
            f"CASE WHEN {column} IS NULL THEN NULL"
            f" ELSE least(floor({column} * {bins})::int, {bins - 1}) END"
        )

    def json_value(self, column: str, key: str) -> str:
        return f"({column}::json ->> '{key}')"

    def percentiles(self, run: Run, values: str, params: Mapping[str, Any]) -> Percentiles:
        # `OFFSET 0` keeps `values` a subquery computed once: flattened into the aggregates,
        # its `v` (correlated subqueries, for the first replies) was computed once for count()
        # and once for each percentile, three times in all. One percentile_disc of an array
        # sorts the values once.
        [(count, found)] = run(
            "SELECT count(v), percentile_disc(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY v)"
            f" FROM ({values} OFFSET 0) AS s",
            params,
        )
        if not count:
            return Percentiles(count=0)
        p50, p90 = found
        return Percentiles(count=int(count), p50=float(p50), p90=float(p90))


KEY_IGNORED = (
    " \t\r\n\u00a0\u3000"  # Spaces, the no-break and the ideographic one included.
    "!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~"  # ASCII punctuation (`_` is part of a word).
    "\u00a1\u00b7\u00bf\u2013\u2014\u2018\u2019\u201c\u201d\u2026"  # ¡ · ¿ – — ‘ ’ “ ” …
    "\u3001\u3002\u300a\u300b\u300c\u300d"  # 、。《》「」
    "\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f"  # Full-width ！（），：；？
)
"""What `question_key` leaves out of a question: spaces and punctuation."""


_KEY_TABLE = str.maketrans("", "", KEY_IGNORED)


def postgres_question_key(text: str, *, bound: bool = True) -> str:
    """PostgreSQL's `question_key` of the SQL expression `text`. `bound`: for a statement sent
    with parameters, where the driver reads a `%` as a parameter's start (a migration is sent
    without)."""
    # A bracket expression of `KEY_IGNORED`: translate() with the same characters took 6 times
    # as long.
    ignored = "".join("\\" + c if c in "[]\\^-" else c for c in KEY_IGNORED)
    ignored = ignored.replace("'", "''").replace("%", "%%" if bound else "%")
    return f"regexp_replace(lower({text}), '[{ignored}]+', '', 'g')"


def question_key(text: str | None) -> str | None:
    """A question's key, as the figures compare questions: lowercased, without its spaces and
    punctuation (`KEY_IGNORED`), so "I was charged twice, can I get my money back?" and "i was
    charged twice can i get my money back" are one question, as the desk takes a repeat to be
    (`chatbot.desk.service.question_key`: the words, case-folded and compatibility-normalised,
    which no SQL both backends run can do). SQLite calls this; PostgreSQL's `regexp_replace`
    does the same (`Dialect.question_key`; its lower() folds letters beyond ASCII as Python's
    does in a UTF-8 locale, ASCII alone under the "C" one).

    It is also what makes escalations one content gap, wherever gaps are shown or handled: the
    figures count them by it, the editor lists one row per key, and a passage written from that
    row marks every escalation of the key handled. Each `escalations` row keeps its question's
    key (column `question_key`, written with the row: `Dialect.gap_key`), so that grouping them
    keys nothing; changing this function means a migration that keys the rows again."""
    return None if text is None else text.lower().translate(_KEY_TABLE)


def asked_entry(gap: str) -> str:
    """The customer message an `escalations` row's question is the text of: the latest one
    before the escalation (see `Dialect.gap_entry`)."""
    return (
        f"(SELECT max(x.id) FROM entries x WHERE x.conversation_id = {gap}.conversation_id"
        f" AND x.author = 'customer' AND x.id <= {gap}.after_message_id"
        f" AND x.text = {gap}.question)"
    )


def no_gap(d: Dialect, gap: str) -> str:
    """An SQL condition: the `escalations` row aliased `gap` is no content gap, the bot having
    answered its question. A content gap is a question no passage answers yet; one the bot
    answered had a passage reach the threshold, whatever came after (the customer asking for a
    person, a person having the conversation by the time the bot decided), except the
    customer's "not helpful": the passage did not answer after all, and the escalation that
    verdict makes stays a gap. Answered means: a decision with an answer for that question, or
    for the same question (`question_key`: ignoring case, spaces and punctuation) asked earlier
    or later in that conversation (a question asked again, which the bot does not judge twice:
    it says "You asked this before" instead, a `person-offered` event right after the repeat,
    which is the desk's own word that the repeat is the same question, whatever the letters).

    Each escalation reads its conversation's questions off an index (entries by author) and
    their decisions by message; a question's text is read only for a decision that answered
    (`t`, written against `a` so that SQLite reads it after the decision, not for every
    question): 0.1 s of CPU more for the figures of 100,000 conversations. Comparing keys, not
    lowercased texts, cost 0.04 s more in SQLite, 0.3 s in PostgreSQL (which keys every
    answered question at once, for a hash); the offer is looked for only in a conversation that
    has one (a probe of an index of events per gap: 0.08 s in PostgreSQL)."""
    question = d.gap_question(gap)
    return (
        f"{gap}.reason <> 'not-helpful' AND"
        f" (({d.may_have_answered(gap)}"
        "EXISTS (SELECT 1 FROM entries q JOIN decisions a ON a.message_id = q.id"
        f" WHERE q.conversation_id = {gap}.conversation_id AND q.author = 'customer'"
        " AND a.answer_id IS NOT NULL"
        f" AND {d.question_key('(SELECT t.text FROM entries t WHERE t.id = a.message_id)')}"
        f" = {d.question_key(question)}{d.per_row}))"
        # The repeat the desk recognised: the entry right after the question is its offer. Looked
        # for only in a conversation with an offer (one probe of an index of events).
        f" OR (EXISTS (SELECT 1 FROM entries o WHERE o.conversation_id = {gap}.conversation_id"
        "  AND o.event = 'person-offered')"
        " AND coalesce((SELECT n.event FROM entries n"
        f"  WHERE n.conversation_id = {gap}.conversation_id AND n.id > {d.gap_entry(gap)}"
        "  ORDER BY n.id LIMIT 1), '') = 'person-offered'))"
    )


def gap_askings(d: Dialect, where: str) -> str:
    """A query of the content gaps among the `escalations` rows aliased `g` that meet `where`
    (the escalations that are no `no_gap`): per row its `question`, its key (`gkey`,
    `gap_key`: the rows of one key are one gap), its time (`at`) and what it counts as
    (`asking`)."""
    return (
        f"SELECT {d.gap_question('g')} AS question, {d.gap_key('g')} AS gkey,"
        f" {d.epoch('g.created_at')} AS at, {asking(d, 'g')} AS asking"
        f" FROM escalations g WHERE {where} AND NOT ({no_gap(d, 'g')})"
    )


def asking(d: Dialect, gap: str) -> str:
    """The customer message the `escalations` row aliased `gap` counts as, among the rows a query
    reads: a gap is counted in customer messages, not escalations (one whose message was
    escalated before, an agent having handed the conversation back and the bot judged it again,
    is no new asking). Its entry id; minus its own id where it is alone in its conversation or
    its message is not found. The message is looked for only in a conversation with more than
    one such row: looked for in every one (by its text, where the row does not name it), it cost
    0.3 s for 60,000 gaps in either database."""
    return (
        f"CASE WHEN count(*) OVER (PARTITION BY {gap}.conversation_id) > 1"
        f" THEN coalesce({d.gap_entry(gap)}, -{gap}.id) ELSE -{gap}.id END"
    )


def nearest_rank(ordered: Sequence[float]) -> Percentiles:
    """p50 and p90 of sorted values: the value at rank ceil(p * n), as percentile_disc does."""
    n = len(ordered)
    if n == 0:
        return Percentiles(count=0)
    return Percentiles(
        count=n, p50=ordered[(n * 50 + 99) // 100 - 1], p90=ordered[(n * 90 + 99) // 100 - 1]
    )


def compute_stats(
    run: Run,
    d: Dialect,
    *,
    since: datetime | None,
    now: datetime,
    thresholds: Sequence[float],
) -> DeskStats:
    """Every figure of `DeskStats`, each one or two aggregate queries."""
    start = since if since is not None else datetime(1970, 1, 1, tzinfo=UTC)
    p: dict[str, Any] = {"since": d.time_value(start)}
    since_ = d.param("since")

    # -- conversations and the bot's resolution rate ----------------------------------------------
    # Conversations: counted per day below (one pass for both).
    # Over indexes only: the conversations written in and answered by the bot (one pass over
    # their messages in conversation order), and those answered but then sent to a person (an
    # escalation after a bot answer, or a "not helpful" verdict, which only a bot answer gets).
    # Resolved = answered - spoiled. Every conversation of the window has an id from the
    # window's smallest up, which bounds the index ranges read.
    ((first,),) = run(
        f"SELECT coalesce(min(id), 0) FROM conversations WHERE created_at >= {since_}", p
    )
    q = {**p, "first": first}
    first_ = d.param("first")
    ((asked, answered),) = run(
        "SELECT coalesce(sum(b.customer), 0), coalesce(sum(b.bot), 0) FROM"
        " (SELECT e.conversation_id,"
        "  max(CASE WHEN e.author = 'customer' THEN 1 ELSE 0 END) AS customer,"
        "  max(CASE WHEN e.author = 'bot' THEN 1 ELSE 0 END) AS bot"
        "  FROM entries e WHERE e.author IN ('customer', 'bot')"
        f"  AND e.conversation_id >= {first_} GROUP BY e.conversation_id) AS b"
        f" JOIN conversations c ON c.id = b.conversation_id WHERE c.created_at >= {since_}",
        q,
    )
    ((spoiled,),) = run(
        "SELECT count(*) FROM (SELECT x.conversation_id FROM entries x"
        "  WHERE x.event = 'escalated' AND x.event <> 'decided'"
        f"  AND x.conversation_id >= {first_} AND EXISTS"
        "  (SELECT 1 FROM entries b WHERE b.conversation_id = x.conversation_id"
        "   AND b.author = 'bot' AND b.id < x.id)"
        "  UNION SELECT f.conversation_id FROM entries f WHERE f.feedback = 'not-helpful'"
        f"  AND f.conversation_id >= {first_}) AS s"
        f" JOIN conversations c ON c.id = s.conversation_id WHERE c.created_at >= {since_}",
        q,
    )
    resolved = int(answered) - int(spoiled)

    # -- questions and answers --------------------------------------------------------------------
    counts = dict(
        run(
            "SELECT author, count(*) FROM entries WHERE author IN ('customer', 'bot')"
            f" AND created_at >= {since_} GROUP BY author",
            p,
        )
    )
    hours = [0] * 24
    # A message that only thanked asked nothing: the `thanked` event written with it takes it
    # off its hour (each half of the one statement read off its own index, by author or event).
    for hour, count in run(
        f"SELECT x.h, sum(x.n) FROM (SELECT {d.hour_of_day('created_at')} AS h, 1 AS n"
        f"  FROM entries WHERE author = 'customer' AND created_at >= {since_}"
        f"  UNION ALL SELECT {d.hour_of_day('created_at')}, -1 FROM entries"
        f"  WHERE event = 'thanked' AND created_at >= {since_}) AS x GROUP BY x.h",
        p,
    ):
        hours[int(hour)] = max(0, int(count))

    # -- escalations and the people who took them -------------------------------------------------
    # By reason off the content-gap rows (one per escalation with a question, same time, a
    # covering index), not the events' JSON: reading 60,000 scattered event rows for their
    # parameters was the slowest figure. The escalations without a question are the customers
    # who asked for a person before asking anything: `customer-asked`.
    # The resolutions, for the share rated (below), in the same pass over the events' index.
    events = dict(
        run(
            "SELECT event, count(*) FROM entries WHERE event IN ('escalated', 'resolved')"
            f" AND event <> 'decided' AND created_at >= {since_} GROUP BY event",
            p,
        )
    )
    escalations = events.get("escalated", 0)
    by_reason = {
        Reason(reason): int(count)
        for reason, count in run(
            f"SELECT reason, count(*) FROM escalations WHERE created_at >= {since_}"
            " GROUP BY reason",
            p,
        )
    }
    unasked = int(escalations) - sum(by_reason.values())
    by_reason[Reason.CUSTOMER_ASKED] = by_reason.get(Reason.CUSTOMER_ASKED, 0) + max(0, unasked)
    first_reply = d.percentiles(
        run,
        # Each escalation's first agent message, if it came before the next escalation: two
        # seeks into covering indexes per escalation, no table row read.
        f"SELECT (SELECT {d.epoch('y.created_at')} FROM entries y"
        "  WHERE y.conversation_id = e.conversation_id AND y.author = 'agent' AND y.id > e.id"
        "  AND (e.next_id IS NULL OR y.id < e.next_id) ORDER BY y.id LIMIT 1)"
        f" - {d.epoch('e.created_at')} AS v"
        " FROM (SELECT x.id, x.conversation_id, x.created_at,"
        "  (SELECT min(n.id) FROM entries n WHERE n.conversation_id = x.conversation_id"
        "   AND n.event = 'escalated' AND n.event <> 'decided' AND n.id > x.id) AS next_id"
        "  FROM entries x WHERE x.event = 'escalated' AND x.event <> 'decided'"
        f"  AND x.created_at >= {since_}) AS e",
        p,
    )
    resolution = d.percentiles(
        run,
        f"SELECT {d.epoch('r.created_at')} - (SELECT {d.epoch('x.created_at')} FROM entries x"
        "  WHERE x.conversation_id = r.conversation_id"
        "  AND x.event = 'escalated' AND x.event <> 'decided'"
        "  AND x.id < r.id ORDER BY x.id DESC LIMIT 1) AS v"
        " FROM entries r WHERE r.event = 'resolved' AND r.event <> 'decided'"
        f" AND r.created_at >= {since_}",
        p,
    )
    ((waiting, oldest),) = run(
        f"SELECT count(*), min({d.epoch('waiting_since')}) FROM conversations"
        " WHERE state = 'waiting'",
        {},
    )

    # -- feedback per passage ---------------------------------------------------------------------
    feedback = [
        PassageFeedback(passage_id=pid, title=title, helpful=int(good), not_helpful=int(bad))
        for pid, title, good, bad in run(
            # Counted off the feedback index; each passage's title from its newest answer.
            f"SELECT f.passage_id, (SELECT {d.answer_title} FROM entries t WHERE t.id = f.newest),"
            " f.good, f.bad FROM (SELECT passage_id, max(id) AS newest,"
            "  sum(CASE WHEN feedback = 'helpful' THEN 1 ELSE 0 END) AS good,"
            "  sum(CASE WHEN feedback = 'not-helpful' THEN 1 ELSE 0 END) AS bad"
            f"  FROM entries WHERE feedback IS NOT NULL AND created_at >= {since_}"
            "  AND passage_id IS NOT NULL GROUP BY passage_id) AS f"
            " ORDER BY f.good + f.bad DESC, f.passage_id",
            p,
        )
    ]

    # -- the bot's decisions: latency, Valen errors, scores against the threshold -----------------
    wanted = sorted(set(thresholds))
    would = ", ".join(
        f"coalesce(sum(CASE WHEN top_probability >= {d.param(f't{n}')} THEN 1 ELSE 0 END), 0)"
        for n in range(len(wanted))
    )
    tp = {**p, **{f"t{n}": t for n, t in enumerate(wanted)}}
    # One pass over the decisions' covering index: per histogram bin, how many, and how many
    # reach each threshold (unscored decisions are the NULL bin).
    decisions = unscored = 0
    bins = [0] * SCORE_BINS
    answers = [0] * len(wanted)
    for number, count, *reaching in run(
        f"SELECT {d.score_bin('top_probability', SCORE_BINS)} AS b, count(*)"
        f"{', ' if would else ''}{would} FROM decisions WHERE created_at >= {since_} GROUP BY b",
        tp,
    ):
        decisions += int(count)
        if number is None:
            unscored += int(count)
            continue
        bins[max(0, min(int(number), SCORE_BINS - 1))] += int(count)
        for n, reached in enumerate(reaching):
            answers[n] += int(reached)
    judgment = d.percentiles(
        run, f"SELECT latency_ms AS v FROM decisions WHERE created_at >= {since_}", p
    )
    errors = [
        ErrorCount(kind=kind, count=int(count))
        for kind, count in run(
            f"SELECT kind, sum(count) FROM judgment_errors WHERE created_at >= {since_}"
            " GROUP BY kind ORDER BY sum(count) DESC, kind",
            p,
        )
    ]

    # -- the customers' ratings -------------------------------------------------------------------
    # Off the rated events' own index, which holds their parameters (`entries_ratings`): the
    # rating and the agent who resolved are in them alone. A rating rates the conversation's
    # latest resolution before it (the desk asks for it only while that one stands), found by
    # one seek back into the conversation's events; it was one of the window's when its time is
    # in the window (a rating comes after its resolution, so no rating of one is outside it).
    distribution = dict.fromkeys(RATINGS, 0)
    per_agent: dict[str | None, dict[int, int]] = {}
    rated = 0
    for agent, rating, count, of_window in run(
        "SELECT g.agent, g.rating, count(*), sum(g.of_window) FROM"
        f" (SELECT {d.json_value('x.params', 'agent')} AS agent,"
        f"  CAST({d.json_value('x.params', 'rating')} AS INTEGER) AS rating,"
        "  CASE WHEN (SELECT r.created_at FROM entries r"
        "   WHERE r.conversation_id = x.conversation_id AND r.event = 'resolved'"
        "   AND r.event <> 'decided' AND r.id < x.id ORDER BY r.id DESC LIMIT 1)"
        f"  >= {since_} THEN 1 ELSE 0 END AS of_window"
        f"  FROM entries x WHERE x.event = 'rated' AND x.created_at >= {since_}) AS g"
        " GROUP BY g.agent, g.rating",
        p,
    ):
        if rating not in distribution:  # Never written: the desk takes 1 to 5 only.
            continue
        distribution[rating] += int(count)
        mine = per_agent.setdefault(agent, dict.fromkeys(RATINGS, 0))
        mine[rating] += int(count)
        rated += int(of_window or 0)
    by_agent = sorted(
        (AgentRatings.of(agent, tuple(counts.values())) for agent, counts in per_agent.items()),
        key=lambda a: (-a.count, a.agent is None, a.agent or ""),
    )
    ratings = Ratings.of(
        tuple(distribution.values()),
        resolutions=int(events.get("resolved", 0)),
        resolutions_rated=rated,
        by_agent=tuple(by_agent),
    )

    # -- content gaps and conversations per day ---------------------------------------------------
    gaps = [
        GapCount(
            question=question, count=int(count), last_at=datetime.fromtimestamp(float(last), UTC)
        )
        for question, count, last in run(
            # One gap per key (`gap_askings`), as the editor lists them.
            "SELECT min(s.question), count(DISTINCT s.asking) AS n, max(s.at) FROM"
            f" ({gap_askings(d, f'g.handled_at IS NULL AND g.created_at >= {since_}')}) AS s"
            f" GROUP BY s.gkey ORDER BY n DESC, max(s.at) DESC LIMIT {TOP_GAPS}",
            p,
        )
    ]
    # A conversation counts once anything is written in it: a browser visitor who only looked
    # has one (its id is in their cookie before they write), empty until the desk prunes it.
    # Their number is the sum of the days' (it was a query of its own, the same pass again).
    per_day = dict(
        run(
            f"SELECT {d.day_number('c.created_at')} AS day, count(*) FROM conversations c"
            f" WHERE c.created_at >= {since_} AND {WRITTEN} GROUP BY day",
            p,
        )
    )
    conversations = sum(int(count) for count in per_day.values())
    # The first conversation's day, for a window reaching back before it (`_days`): the oldest
    # written one off the index by time, not every conversation's day (a day only grows with
    # the time). Everything recorded starts at the first day counted above.
    earliest = (
        run(
            f"SELECT {d.day_number('c.created_at')} FROM conversations c"
            f" WHERE {WRITTEN} ORDER BY c.created_at LIMIT 1",
            p,
        )
        if since is not None
        else []
    )
    first_day = earliest[0][0] if earliest else None

    return DeskStats(
        since=since,
        generated_at=now,
        conversations=int(conversations),
        asked=int(asked),
        bot_answered=int(answered),
        bot_resolved=int(resolved),
        questions=sum(hours),
        bot_answers=int(counts.get("bot", 0)),
        questions_by_hour=tuple(hours),
        escalations=int(escalations),
        escalations_by_reason=tuple(
            ReasonCount(reason=reason, count=by_reason.get(reason, 0)) for reason in Reason
        ),
        first_reply_s=first_reply,
        resolution_s=resolution,
        waiting_now=int(waiting),
        oldest_wait_s=None if oldest is None else max(0.0, now.timestamp() - float(oldest)),
        feedback=tuple(feedback),
        decisions=int(decisions),
        judgment_ms=judgment,
        valen_errors=tuple(errors),
        top_scores=tuple(
            ScoreBin(low=n / SCORE_BINS, high=(n + 1) / SCORE_BINS, count=count)
            for n, count in enumerate(bins)
        ),
        unscored=int(unscored),
        would_answer=tuple(
            ThresholdCount(threshold=t, answers=int(a))
            for t, a in zip(wanted, answers, strict=True)
        ),
        content_gaps=tuple(gaps),
        per_day=_days(per_day, since=since, now=now, first_day=first_day),
        ratings=ratings,
    )


def _days(
    counts: Mapping[Any, Any], *, since: datetime | None, now: datetime, first_day: Any = None
) -> tuple[DayCount, ...]:
    """Every day from the window's start to today, zeros included, so a chart of them has one
    point per day. A window reaching back more than `SHOWN_EMPTY_DAYS` starts at the later of
    its start and the first conversation's day, as everything recorded (no window) does:
    `--since 0001-01-01` made 739,000 days of zeros (48 MB of JSON, 13 s), and a floor of 30 days
    ago, which the days once had, gave `--since 2026-11-01` on a desk started today 29 days of
    zeros that were neither its window nor its conversations."""
    epoch = date(1970, 1, 1)
    known = {epoch + timedelta(days=int(day)): int(count) for day, count in counts.items()}
    today = now.astimezone(UTC).date()
    if since is not None:
        first = since.astimezone(UTC).date()
        if first < today - timedelta(days=SHOWN_EMPTY_DAYS):
            if first_day is None:  # Nothing was ever written: no day to count from.
                return ()
            first = max(first, epoch + timedelta(days=int(first_day)))
    elif known:
        first = min(known)
    else:
        return ()
    last = max(today, max(known, default=today))
    return tuple(
        DayCount(
            day=first + timedelta(days=n), conversations=known.get(first + timedelta(days=n), 0)
        )
        for n in range((last - first).days + 1)
    )
