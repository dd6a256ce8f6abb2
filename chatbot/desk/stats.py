"""How the desk is doing: the figures `helpdesk stats` prints and the analytics screen draws.

Every figure is computed by the store in the database (`ConversationStore.stats`) from the facts
the desk already records: conversations, their logs of messages and typed events, the bot's
decisions with their scores, latencies and Valen errors, and the content gaps. This module holds
only the typed result and the definitions; its JSON dump (`DeskStats.to_json`) is the stable
`helpdesk stats --json` shape documented in the README.

The window (`since`) applies to each figure by the time of the thing it counts: conversations by
when they started, questions and answers by when they were written, escalations, resolutions and
decisions by when they happened, ratings by when the customer gave them. `waiting_now` and
`oldest_wait_s` are always as of now.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, computed_field

from chatbot.desk.models import RATINGS
from chatbot.engine.models import Reason
from chatbot.errors import HelpdeskError

STAT_THRESHOLDS: tuple[float, ...] = (0.6, 0.65, 0.7, 0.75, 0.8)
"""The thresholds `would_answer` reports, the app's default (0.7) among them."""
SCORE_BINS = 20
"""The top-score histogram's bins: 0.05 wide, [0.00, 0.05) up to [0.95, 1.00]."""
TOP_GAPS = 10
"""How many content gaps `content_gaps` lists."""


class _Frozen(BaseModel):
    # Validators built on first use, as the desk's other models: the figures are read only when
    # someone opens the analytics, never before the app's first screen.
    model_config = ConfigDict(frozen=True, defer_build=True)


class Percentiles(_Frozen):
    """The median and 90th percentile of some durations (nearest rank: each is one of the
    measured values); None when nothing was measured."""

    count: int
    p50: float | None = None
    p90: float | None = None


class ReasonCount(_Frozen):
    reason: Reason
    count: int


class PassageFeedback(_Frozen):
    """The customers' verdicts on the bot's answers from one passage."""

    passage_id: str
    title: str | None
    helpful: int
    not_helpful: int


class ErrorCount(_Frozen):
    """Passages Valen did not judge, by the kind of failure (`timeout`, `replay-miss`, ...)."""

    kind: str
    count: int


class ScoreBin(_Frozen):
    """Decisions whose best probability lies in [low, high) (the last bin includes 1.0)."""

    low: float
    high: float
    count: int


class ThresholdCount(_Frozen):
    """How many of the window's decisions would have been answers at `threshold`: those whose
    best probability reaches it."""

    threshold: float
    answers: int


class GapCount(_Frozen):
    """A question the knowledge base could not answer, asked `count` times (the same words,
    ignoring case and surrounding spaces), not yet handled by a new passage. A question the bot
    answered (a passage reached the threshold) is none, whatever came after (the customer
    asking for a person), unless the customer marked the answer not helpful."""

    question: str
    count: int
    last_at: datetime


class DayCount(_Frozen):
    """Conversations started on one UTC day (with anything written in them, as
    `DeskStats.conversations`)."""

    day: date
    conversations: int


def _mean(distribution: tuple[int, ...]) -> float | None:
    """The average of counts per rating (from `RATINGS.start` up), to one decimal (None: no
    rating)."""
    count = sum(distribution)
    if not count:
        return None
    return round(sum(r * n for r, n in zip(RATINGS, distribution, strict=True)) / count, 1)


class AgentRatings(_Frozen):
    """The ratings of one agent's resolutions."""

    agent: str | None
    """Who resolved the conversations rated (None: a rating that names nobody)."""
    count: int
    average: float | None
    """To one decimal."""
    distribution: tuple[int, ...]
    """How many of each rating, 1 to 5."""

    @classmethod
    def of(cls, agent: str | None, distribution: tuple[int, ...]) -> AgentRatings:
        return cls(agent=agent, count=sum(distribution), average=_mean(distribution),
                   distribution=distribution)  # fmt: skip


class Ratings(_Frozen):
    """How customers rated the people who resolved their conversations: a rating, 1 to 5, is
    asked once per resolution, and given or not. The ratings are those given in the window; the
    share rated is of the window's resolutions (a resolution is rated after it, so a rating of
    one just before the window counts among the ratings, not among the resolutions)."""

    count: int
    """Ratings given in the window."""
    average: float | None
    """Their average, to one decimal (None: no rating)."""
    distribution: tuple[int, ...]
    """How many of each rating, 1 to 5."""
    resolutions: int
    """Resolutions in the window (`resolved` events)."""
    resolutions_rated: int
    """Those of them the customer has rated so far."""
    rated_share: float | None
    """`resolutions_rated` / `resolutions` (None: no resolution)."""
    by_agent: tuple[AgentRatings, ...]
    """The window's ratings per agent who resolved the conversation, most rated first."""

    @classmethod
    def of(
        cls,
        distribution: tuple[int, ...],
        *,
        resolutions: int,
        resolutions_rated: int,
        by_agent: tuple[AgentRatings, ...] = (),
    ) -> Ratings:
        return cls(
            count=sum(distribution),
            average=_mean(distribution),
            distribution=distribution,
            resolutions=resolutions,
            resolutions_rated=resolutions_rated,
            rated_share=None if resolutions == 0 else resolutions_rated / resolutions,
            by_agent=by_agent,
        )


class DeskStats(_Frozen):
    """The desk's figures for a window of time (see the module docstring for what `since`
    applies to)."""

    since: datetime | None
    """The start of the window (None: everything recorded)."""
    generated_at: datetime

    conversations: int
    """Conversations started in the window, counting only those with anything written in them
    (a browser visitor who only looked leaves an empty one, pruned later)."""
    asked: int
    """Those of them in which the customer wrote at least once."""
    bot_answered: int
    """Those of them the bot answered at least once."""
    bot_resolved: int
    """Conversations the bot resolved: started in the window, the bot answered in them at least
    once, and after the bot's first answer nothing sent them to a person: no `escalated` event
    (whatever the reason: a low score, the customer asking for a person, a "not helpful"
    verdict, ...) and no answer marked not helpful."""

    questions: int
    """Customer messages written in the window, not counting those that only thanked (a
    `thanked` event follows them: no question)."""
    bot_answers: int
    """Bot answers given in the window."""
    questions_by_hour: tuple[int, ...]
    """Those customer messages by hour of day (UTC), 24 counts from 00:00."""

    escalations: int
    """Times a conversation was sent to the queue in the window."""
    escalations_by_reason: tuple[ReasonCount, ...]
    """Every reason, in `Reason`'s order, zeros included."""
    first_reply_s: Percentiles
    """Seconds from an escalation in the window to the first agent message after it (before the
    conversation escalated again); escalations nobody has replied to yet are left out."""
    resolution_s: Percentiles
    """Seconds from an escalation to the `resolved` event that closed it, for each resolution in
    the window (measured from the conversation's latest escalation before it)."""
    waiting_now: int
    """Conversations in the queue now, unclaimed."""
    oldest_wait_s: float | None
    """How long the longest of them has waited, in seconds (None: nobody waits)."""

    feedback: tuple[PassageFeedback, ...]
    """Verdicts on answers given in the window, per passage, most judged first."""

    decisions: int
    """Decisions the bot made in the window."""
    judgment_ms: Percentiles
    """How long deciding took, per question: retrieval, Valen's judgments (all passages at once)
    and the decision, in milliseconds (`Decision.latency_ms`)."""
    valen_errors: tuple[ErrorCount, ...]
    """Passages not judged in the window's decisions, by kind, most frequent first."""
    top_scores: tuple[ScoreBin, ...]
    """The window's decisions by their best probability, `SCORE_BINS` bins from 0 to 1."""
    unscored: int
    """Decisions with no judged passage at all (nothing retrieved, or every judgment failed)."""
    threshold: float | None = None
    """The answer threshold in force where the figures were asked for (None: not known)."""
    would_answer: tuple[ThresholdCount, ...]
    content_gaps: tuple[GapCount, ...]
    """The most asked questions that escalated in the window, that the bot did not answer in
    their conversation, and that no passage was written for yet (see `GapCount`)."""
    per_day: tuple[DayCount, ...]
    """Conversations started per UTC day, every day of the window (zeros included) up to
    `generated_at`'s day; from the first conversation's day when `since` is None."""
    ratings: Ratings
    """The customers' ratings given in the window, in all and per agent, and the share of the
    window's resolutions rated."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def bot_resolution_rate(self) -> float | None:
        """`bot_resolved` / `asked`: of the conversations where the customer wrote, the share
        the bot resolved (None when nobody wrote)."""
        return None if self.asked == 0 else self.bot_resolved / self.asked

    def to_json(self) -> dict[str, object]:
        """The `helpdesk stats --json` shape: stable, documented in the README. Times to the
        second and durations to a tenth of one, as the README shows them: `--since 24h`, the
        reading time and each gap's last question carried microseconds, and the oldest wait
        fourteen decimals."""
        dumped: dict[str, object] = self.model_dump(mode="json")
        # Pydantic dumps a computed field after every stored one; the README shows the rate
        # beside the count it is made of, where a reader of the object looks for it.
        rate = dumped.pop("bot_resolution_rate")
        ordered: dict[str, object] = {}
        for key, value in dumped.items():
            ordered[key] = value
            if key == "bot_resolved":
                ordered["bot_resolution_rate"] = rate
        tidied: dict[str, object] = _tidy(ordered)
        return tidied


_FRACTION = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d+(Z|[+-]\d\d:\d\d)")


def _tidy(value: object, *, seconds: bool = False) -> Any:
    """`value` (dumped to JSON types) with its times to the second and its durations (fields
    ending in `_s`, and the figures inside them) to a tenth of one."""
    if isinstance(value, dict):
        return {
            key: _tidy(item, seconds=seconds or key.endswith("_s")) for key, item in value.items()
        }
    if isinstance(value, list):
        return [_tidy(item, seconds=seconds) for item in value]
    if isinstance(value, str) and (time := _FRACTION.fullmatch(value)) is not None:
        return time.group(1) + time.group(2)  # A time, not a question that holds one.
    if seconds and isinstance(value, float):
        return round(value, 1)
    return value


_RELATIVE = re.compile(r"(\d{1,12})([hdw])")
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def parse_since(text: str, now: datetime) -> datetime:
    """A window's start as people write it: `24h`, `7d`, `2w` before `now`, or a date or time in
    ISO 8601 (`2026-11-01`, `2026-11-01T12:00`; UTC unless it names an offset). `HelpdeskError`
    with one line saying what is wrong otherwise."""
    value = text.strip()
    relative = _RELATIVE.fullmatch(value)
    if relative:
        try:
            return now - int(relative.group(1)) * _UNITS[relative.group(2)]
        except OverflowError:  # Before the year 1: no span that long was meant.
            raise HelpdeskError(
                f"--since {text!r}: that is before the year 1; leave --since out for everything"
                " recorded"
            ) from None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise HelpdeskError(
            f"--since {text!r}: expected a span like 24h, 7d or 2w, or a date like 2026-11-01"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if moment > now:
        raise HelpdeskError(f"--since {text!r}: that is in the future")
    # In UTC, as every time the figures show: an offset kept here was printed as if it were UTC
    # (10:00+02:00 as "10:00 UTC") and left `since` in the JSON as +02:00 rather than Z.
    return moment.astimezone(UTC)


def duration(seconds: float | None) -> str:
    """`45s`, `12m 05s`, `3h 07m`, `2d 04h`: a duration in its two largest units ("–": none)."""
    if seconds is None:
        return "–"
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    if whole < 86400:
        return f"{whole // 3600}h {whole % 3600 // 60:02d}m"
    return f"{whole // 86400}d {whole % 86400 // 3600:02d}h"


def milliseconds(value: float | None) -> str:
    """`310 ms`, `1.2 s` ("–": none)."""
    if value is None:
        return "–"
    return f"{value:.0f} ms" if value < 1000 else f"{value / 1000:.1f} s"


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"
