"""A bot worker: takes pending questions from the store under a lease, judges them with the
engine, and records each decision through the desk service.

Run as many as you like, in as many processes as you like: a lease is one conditional update, so
no two workers take one question, and a decision is stored only while its worker still holds the
lease, so no question is answered twice. A worker that dies holds its questions no longer than
the lease; a heartbeat extends the leases of questions still being judged. A question that keeps
killing the workers judging it goes to a person (`bot-failed`) instead of being judged again.
A decision the database cannot take (a restart, an outage) is kept and stored when it is back,
for as long as the worker holds the question, never judged again for it.

All questions of one worker share its process's one engine: one index, one Valen client, so
Valen's concurrency limit and backoff are shared by all of them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.models import ChatEvent, Decided, DecisionResult, PendingQuestion
from chatbot.desk.service import PRESENCE_EVERY_S
from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision, Reason
from chatbot.errors import HelpdeskError
from chatbot.i18n import Locale
from chatbot.store.interface import unreachable
from chatbot.text import counted, seconds

T = TypeVar("T")

STORE_RETRY_FIRST_S = 0.5
STORE_RETRY_MAX_S = 5.0
"""Waits between tries to store a decision while the database is away: doubling from the first
to the last (and to no more than a third of the lease, as the heartbeat's)."""
STORE_REFUSALS = 3
"""Tries, each right after the database answered, after which a failing write is no outage: the
decision is let go as any other failure is (the lease runs out and it counts as an attempt)."""
UNSTORED_REMEMBERED = 1000
"""Questions a worker remembers judging without its decision stored (for the line that says so
if one comes back to it taken too many times): the oldest are forgotten past this many."""
TAKEN_OVER = "taken over by another worker"
"""What a question this worker took came to when another worker took it over (its lease ran out,
through an outage or a judgment that outlasted it): that worker settles it. Said as the store's
outcome, `lost`, it told an operator that a customer's question vanished."""


KEY_ERRORS = frozenset({"auth", "malformed-key"})
"""Valen error kinds that say the API key is wrong, refused or unsendable: every judgment fails
alike until the key is fixed (a worker reads it once, at its start)."""

KEY_REFUSED = (
    "Valen rejected the API key: %s; while it does, questions go to a person. Each question is "
    "still sent to Valen, and the bot answers again as soon as Valen accepts the key; a new key "
    "(VALEN_API_KEY or valen.api_key) takes effect when this worker restarts"
)
"""The warning, once per worker, that Valen refused the key (the app shows it too)."""
LONG_WAIT = (
    "Valen asked to wait %s before it is asked again (HTTP 429), more than the %s s a request "
    "waits at most (valen.max_retry_wait_s): that request was not retried, and no request is "
    "sent for %s s; questions that cannot wait so long go to a person meanwhile, and then the "
    "bot asks Valen again"
)
"""The warning, once per worker, that Valen asked for a wait longer than the client honours."""


def settled(outcome: str, decision: Decision | None, *, reason: Reason | None = None) -> str:
    """What came of a question, for `helpdesk bot -v`: its outcome, why it went to a person
    (the decision's reason, else `reason`) and how many passages were left unjudged, by kind:
    `escalated: valen-error (auth ×3)`, `answered`, `answered (timeout ×1)`. Said `escalated`
    alone, a worker whose every request Valen refused looked like one whose scores were low.
    A question another worker took over is said as such (`TAKEN_OVER`), without this worker's
    reasons: what became of it is the other worker's decision."""
    if outcome == "lost":
        return TAKEN_OVER
    if decision is not None:
        reason = decision.reason if decision.answer is None else None
    line = outcome if reason is None else f"{outcome}: {reason.value}"
    unjudged = Counter(
        c.error_kind or "valen-error"
        for c in (decision.candidates if decision is not None else ())
        if c.probability is None
    )
    if unjudged:
        line += " (" + ", ".join(f"{kind} ×{n}" for kind, n in unjudged.most_common()) + ")"
    return line


def worker_name() -> str:
    """Unique among all workers past and present: host, process, and a random tag."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@dataclass
class BotStats:
    """What a worker has done so far."""

    taken: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    given_back: int = 0
    """Taken, then given back unjudged on stopping, for another worker."""
    taken_over: int = 0
    """Taken, then taken over by another worker, which settles them: this worker's decision on
    them was not stored (`TAKEN_OVER`)."""
    left: int = 0
    """Taken, then neither judged nor given back (the database refused): another worker takes
    them once their leases run out."""
    unstored: int = 0
    """Judged, but the decision could not be stored before the worker stopped (the database was
    away): given back, or held until the lease runs out, to be judged again."""
    unstored_held: bool = False
    """Whether those could not be given back either (the database still away)."""

    def count(self, result: DecisionResult) -> None:
        if result.outcome == "lost":  # Another worker's to settle: not counted as this one's.
            self.taken_over += 1
            return
        self.outcomes[result.outcome] = self.outcomes.get(result.outcome, 0) + 1

    @property
    def settled(self) -> int:
        return sum(self.outcomes.values())

    def summary(self) -> str:
        """What the worker did with the questions it took, for its last line: `2 answered,
        1 escalated, 1 taken over by another worker, 1 given back unjudged`, or `no questions`."""
        parts = [f"{n} {outcome}" for outcome, n in sorted(self.outcomes.items())]
        if self.taken_over:
            parts.append(f"{self.taken_over} {TAKEN_OVER}")
        if self.given_back:
            parts.append(f"{self.given_back} given back unjudged")
        if self.left:
            parts.append(f"{self.left} unjudged, held until the lease runs out")
        if self.unstored:
            # Judged: "unjudged" would deny the judgment, which only the database's outage lost.
            fate = "held until the lease runs out" if self.unstored_held else "given back"
            parts.append(
                f"{self.unstored} judged but not stored (the database was unreachable), {fate} "
                "to be judged again"
            )
        return ", ".join(parts) or "no questions"


class BotWorker:
    """Judges up to `concurrency` pending questions at once until `stop()`."""

    def __init__(
        self,
        desk: AsyncDesk,
        engine: Callable[[], Engine],
        *,
        name: str | None = None,
        concurrency: int = 8,
        lease_s: float = 30.0,
        poll_s: float = 2.0,
        grace_s: float = 10.0,
        sweep_s: float = PRESENCE_EVERY_S,
        log: logging.Logger | None = None,
        locale_engines: Mapping[Locale, Callable[[], Engine]] | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.desk = desk
        self._engine = engine
        """Read at the start of each judgment: the knowledge base may have been rebuilt."""
        self._locale_engines = dict(locale_engines or {})
        """For conversations in these languages, an engine over their translated knowledge base;
        any other conversation gets `engine`."""
        self.name = name or worker_name()
        self.concurrency = concurrency
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.grace_s = grace_s
        self.sweep_s = sweep_s
        """How often to put back in the queue the claims of agents who left (0: never)."""
        self.log = log or logging.getLogger("helpdesk.bot")
        self._pause = sleep
        """Waits between tries to store a decision through an outage (tests pass their own)."""
        self.stats = BotStats()
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._hurry = asyncio.Event()
        """A second `stop()`: give back what is in flight now, without the grace."""
        self._unstored: set[int] = set()
        """Questions in flight whose decision is made, waiting for the database to store it."""
        self._judged_unstored: dict[int, int] = {}
        """Questions this worker judged whose decision the database would not take, and how many
        times: one that comes back to it taken too many times was judged, and its line says so."""
        self._cannot_take = False
        """Taking questions failed (the database is down): said once, and once when it works
        again, not at every poll."""
        self._cannot_extend = False
        """Extending the leases of questions in flight failed: said once, as taking is."""
        self._key_refused = False
        """Valen refused the API key: said once for the worker's life (it reads the key once),
        not once per question."""
        self._long_wait_said = False
        """Valen asked for a longer wait than the client honours: said once, as the key is."""
        self.ready = asyncio.Event()
        """Set once the worker is listening for questions."""

    def stop(self) -> None:
        """Take no new questions; `run` returns once those in flight are settled or given back.
        Called again (a second Ctrl+C), give back at once what the grace was waiting for.

        Said at once, with what it waits for: a worker stopped with questions in flight was
        silent for up to `grace_s`, and a second Ctrl+C did nothing."""
        if self._stopping.is_set():
            if not self._hurry.is_set() and self._in_flight:
                self.log.warning(
                    "stopping now: giving back %s", counted(len(self._in_flight), "question")
                )
            self._hurry.set()
            return
        self._stopping.set()
        self._wake.set()
        if self._in_flight and self.grace_s > 0:
            self.log.warning(
                "stopping: waiting up to %g s for %s; Ctrl+C again to give %s back now",
                self.grace_s,
                counted(len(self._in_flight), "question"),
                "it" if len(self._in_flight) == 1 else "them",
            )

    async def run(self) -> None:
        unsubscribe = self.desk.subscribe(lambda _version: self._wake.set())
        heartbeat = asyncio.create_task(self._heartbeat(), name="bot heartbeat")
        sweep = asyncio.create_task(self._sweep_away(), name="bot presence sweep")
        try:
            self.ready.set()
            while not self._stopping.is_set():
                # Cleared before looking, so a notice that arrives while we look is not missed.
                self._wake.clear()
                free = self.concurrency - len(self._in_flight)
                taken = 0
                if free > 0:
                    taken = await self._take(free)
                if taken and taken == free:
                    continue  # Probably more waiting: wait for a free slot, not for a notice.
                await self._sleep(await self._next_wake() if free > 0 else self.poll_s)
        finally:
            unsubscribe()
            heartbeat.cancel()
            sweep.cancel()
            await self._drain()

    async def _take(self, limit: int) -> int:
        try:
            leased = await self.desk.take(self.name, limit=limit, lease_s=self.lease_s)
        except HelpdeskError as error:  # A database busy or down: try again at the next poll.
            # Said once, as the change feed says its outage: at every poll (a second or two) an
            # outage of minutes was hundreds of the driver's long lines.
            if not self._cannot_take:
                self._cannot_take = True
                self.log.warning("cannot take questions: %s (retrying)", error)
            return 0
        if self._cannot_take:
            self._cannot_take = False
            self.log.warning("taking questions again")
        for question, result in leased.failed:
            self.stats.count(result)
            self.log.warning(
                "question %d (conversation %d): %s (%s): %s",
                question.id, question.conversation_id, settled(result.outcome, None),
                Reason.BOT_FAILED.value,
                self._never_stored(question),
            )  # fmt: skip
        fresh = 0
        for question in leased.questions:
            if question.id in self._in_flight:
                # Its lease ran out while the database was away and this poll took it back: the
                # decision kept in flight is stored under the new lease, not judged again.
                continue
            fresh += 1
            self.stats.taken += 1
            task = asyncio.create_task(self._judge(question), name=f"judge {question.id}")
            self._in_flight[question.id] = task
        return fresh

    def _never_stored(self, question: PendingQuestion) -> str:
        """What became of the takes of a question taken too many times: no decision was stored,
        whether or not one was made. A worker knows only of its own judgments; another take may
        have died judging, or judged and failed to store the decision (a table locked, say).
        "Never judged" was said even of a question judged each time."""
        taken = question.attempts - 1
        judged = min(self._judged_unstored.pop(question.id, 0), taken)
        if not judged:
            return f"taken {counted(taken, 'time')}, no decision stored"
        if judged == taken:
            return f"taken {counted(taken, 'time')}, judged each time, no decision stored"
        return (
            f"taken {counted(taken, 'time')}, judged {counted(judged, 'time')} by this worker,"
            " no decision stored"
        )

    async def _next_wake(self) -> float:
        """The safety-net poll, or sooner when someone's lease runs out (a dead worker's)."""
        try:
            expiry = await self.desk.next_lease_expiry()
        except HelpdeskError:
            return self.poll_s
        return self.poll_s if expiry is None else min(self.poll_s, expiry + 0.01)

    async def _sleep(self, seconds: float) -> None:
        try:
            async with asyncio.timeout(seconds):
                await self._wake.wait()
        except TimeoutError:
            pass

    async def _judge(self, question: PendingQuestion) -> None:
        judged = False
        try:
            try:
                engine = self._locale_engines.get(question.locale or "en", self._engine)()
                decision = await engine.answer(question.text)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                # The engine turns Valen failures into unjudged passages, so this is a bug: hand
                # the customer to a person rather than leave them waiting on nothing.
                self.log.error("question %d: judging failed: %r", question.id, error)
                result = await self._store(
                    question,
                    lambda: self.desk.fail_question(self.name, question, reason=Reason.VALEN_ERROR),
                )
                line = settled(result.outcome, None, reason=Reason.VALEN_ERROR)
            else:
                self._check_key(decision)
                self._check_wait(engine)
                judged = True
                result = await self._store(
                    question, lambda: self.desk.record_decision(self.name, question, decision)
                )
                line = settled(result.outcome, decision)
            self._judged_unstored.pop(question.id, None)
            self.stats.count(result)
            self.log.info(
                "question %d (conversation %d): %s", question.id, question.conversation_id, line
            )
        except HelpdeskError as error:
            # Not recorded (the database refused): the lease runs out and someone tries again.
            self.log.warning("question %d: %s", question.id, error)
            if judged:
                self._judged(question.id)
        finally:
            self._in_flight.pop(question.id, None)
            self._unstored.discard(question.id)
            self._wake.set()

    def _judged(self, question_id: int) -> None:
        """Remember that this worker judged the question and its decision was not stored."""
        times = self._judged_unstored.pop(question_id, 0) + 1
        while len(self._judged_unstored) >= UNSTORED_REMEMBERED:
            del self._judged_unstored[next(iter(self._judged_unstored))]
        self._judged_unstored[question_id] = times

    def _check_key(self, decision: Decision) -> None:
        """Warn, once, when Valen refused the API key: with a wrong key every question goes to
        a person, and `-v`'s line per question was the only sign of it."""
        if self._key_refused:
            return
        refused = next((c for c in decision.candidates if c.error_kind in KEY_ERRORS), None)
        if refused is None:
            return
        self._key_refused = True
        # The error as the client scrubbed it: never the key itself. Each question is still sent,
        # so the worker answers again once Valen accepts the key; only a new key (read once, at
        # start) needs a restart, which the warning said was needed in any case.
        self.log.warning(KEY_REFUSED, refused.error or refused.error_kind)

    def _check_wait(self, engine: Engine) -> None:
        """Warn, once, when Valen asked to wait longer than the client waits: the questions of
        that while go to a person, each saying why, and nothing else said what happened."""
        client = engine.judge.client
        if self._long_wait_said or client is None or client.longest_refused_wait_s is None:
            return
        self._long_wait_said = True
        held = seconds(client.retry.max_wait_s)
        # The client's module is loaded: it made this client. "A day or more" for a day or
        # more, as the client's own messages say it: `Retry-After: inf` read "86400 s".
        from chatbot.valen.client import wait_words

        self.log.warning(LONG_WAIT, wait_words(client.longest_refused_wait_s), held, held)

    async def _store(
        self, question: PendingQuestion, write: Callable[[], Awaitable[DecisionResult]]
    ) -> DecisionResult:
        """`write` what was decided; while the database is away, keep it and write it again once
        the database is back and the question is still this worker's. Not written again if
        another worker took the question over meanwhile (that one settles it instead), nor if
        the write that failed had landed after all (`_landed`).

        Thrown away, the decision cost the customer a lease's wait, Valen a second judgment and
        the question an attempt: a few restarts during one judgment made it `bot-failed`."""
        waits = self._store_waits()
        refused = 0
        while True:
            try:
                return await write()
            except HelpdeskError as error:
                if not unreachable(error) or refused >= STORE_REFUSALS:
                    raise
                self._unstored.add(question.id)
                if refused == 0:  # Said once per question, not at every try.
                    self.log.warning(
                        "question %d: cannot store its decision: %s (kept; retrying)",
                        question.id, error,
                    )  # fmt: skip
            # Wait for the database, then check the question is still ours (which extends its
            # lease, as the heartbeat does): a write that fails after that is no outage.
            await self._pause(next(waits))
            held = await self._when_back(
                lambda: self.desk.extend_leases(self.name, [question.id], lease_s=self.lease_s),
                waits,
            )
            if question.id not in held:
                # Another worker took it (it settles it instead), or the write that failed had
                # landed after all: either way, storing it again could only answer twice.
                landed = await self._when_back(lambda: self._landed(question), waits)
                if landed is not None:
                    self.log.warning(
                        "question %d: its decision was stored after all (the write that failed"
                        " had landed)", question.id,
                    )  # fmt: skip
                    return landed
                self.log.warning(
                    "question %d: %s while the database was away; this worker's decision is not "
                    "stored", question.id, TAKEN_OVER,
                )  # fmt: skip
                return DecisionResult(outcome="lost")
            refused += 1

    def _store_waits(self) -> Iterator[float]:
        """The waits between tries to store a decision: doubling, up to `STORE_RETRY_MAX_S`."""
        delay = min(STORE_RETRY_FIRST_S, self.lease_s / 3)
        longest = min(STORE_RETRY_MAX_S, self.lease_s / 3)
        while True:
            yield delay
            delay = min(delay * 2, longest)

    async def _when_back(self, call: Callable[[], Awaitable[T]], waits: Iterator[float]) -> T:
        """`call()`, again after each of `waits` while the database cannot be reached."""
        while True:
            try:
                return await call()
            except HelpdeskError as error:
                if not unreachable(error):
                    raise
            await self._pause(next(waits))

    async def _landed(self, question: PendingQuestion) -> DecisionResult | None:
        """What this worker's decision on `question` came to, if the write that failed stored it
        after all (the database committed it, and the outage lost only its answer); None if it
        did not, and another worker took the question over. Only a decision made in this take
        counts: a question handed back to the bot is judged again, by whichever worker takes it.
        An escalation without a decision (the engine failed) leaves no trace of its worker: said
        taken over."""
        until = question.lease_until
        taken = None if until is None else until - timedelta(seconds=self.lease_s)
        decisions = await self.desk.decisions_since(question.conversation_id, question.id)
        mine = {
            d.id: d
            for d in decisions
            if d.message_id == question.id
            and d.worker == self.name
            and (taken is None or d.created_at >= taken)
        }
        if not mine:
            return None
        entries = await self.desk.entries_after(question.conversation_id, question.id)
        for entry in reversed(entries):
            if isinstance(entry, ChatEvent) and isinstance(event := entry.event, Decided):
                if event.question_entry == question.id and event.decision in mine:
                    return DecisionResult(outcome=event.outcome, decision=mine[event.decision])
        return None

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            held = list(self._in_flight)
            if held:
                try:
                    await self.desk.extend_leases(self.name, held, lease_s=self.lease_s)
                except HelpdeskError as error:
                    # Said once, as taking's outage is: every lease_s/3 of an outage was the
                    # driver's long lines again.
                    if not self._cannot_extend:
                        self._cannot_extend = True
                        self.log.warning("cannot extend leases: %s (retrying)", error)
                    continue
                if self._cannot_extend:
                    self._cannot_extend = False
                    self.log.warning("extending leases again")

    async def _sweep_away(self) -> None:
        """Put back in the queue the claims of agents who left, as every open console does: with
        no console open at all, their customers still hear that the agent stepped away (and how
        many wait ahead of them) rather than wait on nobody. One indexed read per presence
        period, and a write only when someone left. On the same tick, the desk's housekeeping:
        the conversations browser visitors started and never wrote in go after a day (the
        service sweeps hourly, so most ticks cost nothing)."""
        if self.sweep_s <= 0:
            return
        while True:
            await asyncio.sleep(self.sweep_s)
            try:
                released = await self.desk.release_away_claims()
            except HelpdeskError:
                continue  # Taking questions says the database is down, once.
            if released:
                self.log.info(
                    "put back in the queue for agents away: %s",
                    ", ".join(f"#{number}" for number in released),
                )
            try:
                pruned = await self.desk.prune_empty_conversations()
            except HelpdeskError:
                continue  # As above; the sweep goes on where it stopped.
            if pruned:
                self.log.info(
                    "removed %s nobody wrote in", counted(len(pruned), "empty conversation")
                )

    async def _grace(self, tasks: list[asyncio.Task[None]]) -> None:
        """Wait up to `grace_s` for `tasks`, or until a second `stop()`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.grace_s
        pending: set[asyncio.Future[Any]] = set(tasks)
        hurry: asyncio.Future[Any] = asyncio.create_task(self._hurry.wait())
        try:
            while pending and not self._hurry.is_set():
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return
                done, _ = await asyncio.wait(
                    [*pending, hurry], timeout=remaining, return_when=asyncio.FIRST_COMPLETED
                )
                pending -= done
        finally:
            hurry.cancel()

    async def _drain(self) -> None:
        """Wait up to `grace_s` for questions in flight, then give the rest back unjudged."""
        tasks = list(self._in_flight.values())
        if not tasks:
            return
        await self._grace(tasks)
        unfinished = [
            question_id for question_id, task in self._in_flight.items() if not task.done()
        ]
        unstored = [question_id for question_id in unfinished if question_id in self._unstored]
        for question_id in unfinished:
            self._in_flight[question_id].cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if not unfinished:
            return
        self.stats.unstored += len(unstored)
        unjudged = len(unfinished) - len(unstored)
        try:
            given_back = await self.desk.release_leases(self.name, unfinished)
        except HelpdeskError as error:
            self.stats.left += unjudged
            self.stats.unstored_held = bool(unstored)
            self.log.warning("cannot give questions back: %s", error)
            return
        # Those released that were judged are counted apart: given back, not "unjudged".
        given_back = max(0, given_back - len(unstored))
        self.stats.given_back += given_back
        if unjudged:
            self.log.info("gave back %s unjudged", counted(given_back, "question"))
