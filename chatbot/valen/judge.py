"""Judging retrieved passages: replay cache in front of the client, one request per passage."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from chatbot.i18n import N_
from chatbot.valen.cache import CacheEntry, ReplayCache
from chatbot.valen.errors import RefusedError, ReplayMissError, ValenError
from chatbot.valen.protocol import ANSWER_NAME, PREDICATE, Outcome, Question, input_text

# Only a type here: replaying recorded answers needs no HTTP client, so none (nor httpx) is loaded.
if TYPE_CHECKING:
    from chatbot.valen.client import ValenClient

ReplayMode = Literal["on", "off", "record"]

log = logging.getLogger(__name__)

UNUSABLE = N_("recorded answer unusable: not a probability from 0 to 1, nor a refusal")
"""A replay miss's reason where the cache holds an entry it cannot replay: "no recorded answer"
sent the reader looking for a gap in the recordings, beside a warning that the file was broken."""


class PassageJudge:
    """Asks whether each passage answers a question.

    `on` answers from the cache alone (a miss is *not judged*, never a request); `off` asks Valen
    and leaves the cache alone; `record` asks Valen and writes valid answers to the cache.
    """

    def __init__(
        self,
        *,
        replay: ReplayMode,
        cache: ReplayCache | None = None,
        client: ValenClient | None = None,
    ) -> None:
        if replay != "on" and client is None:
            raise ValueError(f"replay mode {replay!r} needs a Valen client")
        self.replay: ReplayMode = replay
        self.cache = cache
        self.client = client

    @property
    def model(self) -> str | None:
        return self.client.model if self.client is not None else None

    def _replay(self, text: str, instructions: str) -> Outcome:
        entry = None
        if self.cache is not None:
            entry = self.cache.lookup(input=text, instructions=instructions, model=self.model)
        if entry is None:
            return ReplayMissError(self._miss_reason(text, instructions))
        if entry.probability is None:
            return RefusedError("Valen declined to judge this passage (recorded)")
        return entry.probability

    def _miss_reason(self, text: str, instructions: str) -> str:
        """Why replay found nothing: an agent reading "no recorded answer" on every passage
        would look for a gap in the recordings when the file could not be read at all, or when
        this passage's entry is there and broken. Each is marked for the catalogs: stored in
        English with the decision, it is said in an agent's language in their side pane."""
        if self.cache is not None and self.cache.corrupt is not None:
            return N_("the replay cache could not be read (see the warning about it)")
        if self.cache is not None and self.cache.missing:
            return N_("the replay cache file does not exist")
        cache = self.cache
        if cache is not None and cache.holds_unusable(
            input=text, instructions=instructions, model=self.model
        ):
            return UNUSABLE
        return N_("no recorded answer for this question and passage")

    async def _ask(self, text: str, instructions: str, deadline: float) -> Outcome:
        assert self.client is not None
        try:
            outcomes = await self.client.decide(
                text, [Question(ANSWER_NAME, instructions)], deadline=deadline
            )
        except ValenError as error:
            return error
        except Exception as error:
            # A fault of ours must not cost the customer their question: the passage is not
            # judged and says why. Only the exception's type is shown: its text may quote Valen.
            log.error("unexpected %s while asking Valen", type(error).__name__)
            return ValenError(f"unexpected {type(error).__name__} while asking Valen")
        return outcomes[ANSWER_NAME]

    async def judge(
        self, question: str, passages: Sequence[str], *, instructions: str = PREDICATE
    ) -> list[Outcome]:
        """One outcome per passage text, in order: a probability or the reason it was not judged.

        Each passage is its own request, sent concurrently, so no passage sways another and the
        wait is about one request's time. All of them share one time budget (the client's
        `budget_s`, retries included): a passage still unjudged when it runs out is not judged.
        """
        texts = [input_text(question, passage) for passage in passages]
        if self.replay == "on":
            return [self._replay(text, instructions) for text in texts]
        assert self.client is not None
        deadline = self.client.deadline()
        asks = (self._ask(text, instructions, deadline) for text in texts)
        outcomes = list(await asyncio.gather(*asks))
        if self.replay == "record" and self.cache is not None:
            self.cache.record(
                CacheEntry(text, instructions, self.model, _recordable(outcome))
                for text, outcome in zip(texts, outcomes, strict=True)
                if isinstance(outcome, float) or isinstance(outcome, RefusedError)
            )
        return outcomes


def _recordable(outcome: Outcome) -> float | None:
    """A probability as itself; a refusal as None (recorded as a refusal)."""
    return outcome if isinstance(outcome, float) else None
