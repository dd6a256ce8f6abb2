"""`helpdesk eval DATA.json`: the cookbook's evaluation, on the data file's own passages, as a
table (or JSON with `--json`), with retrieval measured step by step and an optional threshold
sweep."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from chatbot.cli.options import add_engine_options, setting_default, settings_from, terminal_width
from chatbot.errors import HelpdeskError
from chatbot.text import cells, clip, counted, fit, printable, wrap

if TYPE_CHECKING:
    from chatbot.config import Settings
    from chatbot.knowledge_base.interface import KnowledgeBaseStore
    from chatbot.valen.errors import ValenError
    from chatbot.valen.judge import PassageJudge
    from chatbot.valen.protocol import Outcome

QUESTION_WIDTH = 48


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "eval",
        help="evaluate retrieval and reranking on a labelled data file",
        epilog="Exit status: 0 once the report is printed; 1 when Valen was asked and judged "
        "nothing (every judgment failed), or rejected the API key (the run stops there, with no "
        "report); 2 for bad input; 130 when interrupted (Ctrl+C). On a terminal, stderr shows "
        "which question the run is at.",
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
        type=_predicate,
        metavar="TEXT",
        help="predicate wording; repeat to compare wordings (first one decides)",
    )
    parser.add_argument(
        "--passages",
        metavar="DIR|URL",
        # Kept as typed: a Path made "postgresql://host/db" a folder "postgresql:/host/db".
        help="evaluate the questions against this knowledge base instead: a directory or a "
        "postgresql:// URL, as --kb takes",
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="show what each threshold from 0.5 to 0.95 would answer and escalate",
    )
    parser.add_argument(
        "--target-precision",
        type=float,
        default=1.0,
        metavar="P",
        help="with --sweep, mark the lowest threshold whose answers are at least this share "
        "correct (default 1: all)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        default=argparse.SUPPRESS,
        help="questions judged at once, sharing one Valen client and its in-flight limit "
        f"({setting_default('bot.concurrency')}); the report is the same as with 1",
    )
    add_engine_options(parser, knowledge_base=False)
    parser.set_defaults(func=run)  # fmt: skip


def _predicate(text: str) -> str:
    """A wording for `--predicate`: a blank one was sent to Valen, and every passage went
    unjudged as though Valen had failed."""
    if not text.strip():
        raise argparse.ArgumentTypeError("a wording is needed, not a blank")
    return text


class Progress:
    """Where a run is, among the data file's questions: shown on a terminal as one line that
    changes in place ("question 7 of 32"), and said when the run is interrupted or stopped. A
    live run against a failing Valen took minutes (eight with `Retry-After: 5`) on a blank
    screen.

    With several questions judged at once, the run is at the first question not yet settled,
    every one before it settled: the line moves on as questions settle, in the file's order, and
    what Valen failed so far counts the judgments of those before it."""

    def __init__(self, questions: Sequence[str], stream: TextIO | None = None) -> None:
        self.questions = list(questions)
        self.settled_in_order = 0
        """How many questions have settled, counting from the first, with none missing."""
        self.in_flight: set[int] = set()
        """The numbers of the questions being judged now."""
        self.asked = 0
        self.failed: Counter[str] = Counter()
        """Judgments Valen failed so far, by kind (replay misses and refusals are no failure)."""
        self._settled: set[int] = set()
        self._outcomes: dict[int, list[object]] = {}
        """Each unsettled or not yet counted question's judgments, counted when the run moves
        past it."""
        self._stream = stream
        self._shown = 0
        """Cells of the line on screen now, to cover when it changes or goes."""

    @property
    def total(self) -> int:
        return len(self.questions)

    @property
    def position(self) -> int:
        """The 1-based number of the question the run is at (the last one once all settled);
        0 before any started."""
        past = self.settled_in_order
        if not past and not self.in_flight:
            return 0
        return past if self.total and past >= self.total else past + 1

    def where(self, number: int | None = None) -> str:
        """`question 7 of 32` (question `number`, else the one the run is at), or `question 7`
        when the file's questions could not be counted."""
        at = self.position if number is None else number
        return f"question {at}" + (f" of {self.total}" if self.total else "")

    def start(self, number: int) -> None:
        """Question `number` (1-based, in the file's order) is about to be judged."""
        first = self.position == 0
        self.in_flight.add(number)
        if first:
            self.show()

    def judged(self, number: int, outcomes: Sequence[object]) -> None:
        """Question `number`'s judgments with one wording; counted once the run is past it."""
        self._outcomes.setdefault(number, []).extend(outcomes)

    def settled(self, number: int) -> None:
        """Question `number` is judged, with every wording: the run moves past every question
        settled before the first unsettled one, each shown in turn."""
        from chatbot.valen.errors import ValenError

        self.in_flight.discard(number)
        self._settled.add(number)
        while self.settled_in_order + 1 in self._settled:
            self.settled_in_order += 1
            self._settled.discard(self.settled_in_order)
            outcomes = self._outcomes.pop(self.settled_in_order, [])
            self.asked += len(outcomes)
            self.failed.update(
                o.kind
                for o in outcomes
                if isinstance(o, ValenError) and o.kind not in (REPLAY_MISS, REFUSED)
            )
            if not self.total or self.settled_in_order < self.total:
                self.show()

    def line(self) -> str:
        text = self.where()
        if self.failed:
            kinds = ", ".join(f"{kind} {n}" for kind, n in self.failed.most_common())
            text += f" (so far Valen failed {sum(self.failed.values())} of {self.asked}: {kinds})"
        return text

    def show(self) -> None:
        if self._stream is None:
            return
        try:
            width = os.get_terminal_size(self._stream.fileno()).columns
        except (OSError, ValueError):
            width = 0
        width = width or 80  # A terminal that does not say its size (0 columns).
        # One cell short of the width: a line that fills it wraps on some terminals, and the
        # carriage return would then rewrite only its second row.
        text = clip(printable(self.line()), max(width - 1, 10))
        self._write("\r" + text + " " * max(self._shown - cells(text), 0))
        self._shown = cells(text)

    def clear(self) -> None:
        """Take the line off the screen, so what is printed next starts a clean line."""
        if self._stream is not None and self._shown:
            self._write("\r" + " " * self._shown + "\r")
            self._shown = 0

    def _write(self, text: str) -> None:
        assert self._stream is not None
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            self._stream = None  # A terminal gone: the run goes on without its progress line.

    @contextmanager
    def around_logging(self) -> Iterator[None]:
        """While the block runs, a warning logged (a replay cache's, say) clears the line
        first, so it is not written onto the end of "question 7 of 32"; the line comes back at
        the next question."""
        if self._stream is None:
            yield
            return

        def clear_first(_record: logging.LogRecord) -> bool:
            self.clear()
            return True

        handlers = logging.getLogger().handlers
        for handler in handlers:
            handler.addFilter(clear_first)
        try:
            yield
        finally:
            for handler in handlers:
                handler.removeFilter(clear_first)


class KeyRejected(Exception):
    """Valen rejected the API key for every judgment of a question: the run stops, at `where`.
    Every later judgment would fail alike, and each would send the key again (83 times for the 32
    questions of customer_questions.json); a rate limit or an outage, by contrast, may pass, so
    the run goes on through those, showing them on its progress line."""

    def __init__(self, error: ValenError, *, where: str, key_sent: bool) -> None:
        super().__init__(error.describe())
        self.error = error
        self.where = where
        self.key_sent = key_sent

    def line(self) -> str:
        if self.key_sent:
            what, fix = "Valen rejected the API key", "`helpdesk valen check` tests the key"
        else:
            what, fix = "Valen wants an API key and none is set", "set VALEN_API_KEY"
        said = printable(self.error.describe())
        return (
            f"helpdesk eval: stopped at {self.where}: {what} ({said}), as it would for every "
            f"question; no report printed; {fix}"
        )


class _Watch:
    """Tells `progress` of each question as it starts, is judged and settles, and raises
    `KeyRejected` at a question whose judgments (with any wording) were all refused for the
    key."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def start(self, number: int, judge: PassageJudge) -> PassageJudge:
        from chatbot.valen.errors import AuthenticationError
        from chatbot.valen.judge import PassageJudge
        from chatbot.valen.protocol import PREDICATE

        progress = self.progress
        progress.start(number)

        class Watched(PassageJudge):
            async def judge(
                self, question: str, passages: Sequence[str], *, instructions: str = PREDICATE
            ) -> list[Outcome]:
                outcomes = await super().judge(question, passages, instructions=instructions)
                progress.judged(number, outcomes)
                # Every judgment of the question refused for the key, as a rejected key refuses
                # them: one refusal among answers (a gateway's hiccup) lets the run go on.
                refused = [o for o in outcomes if isinstance(o, AuthenticationError)]
                if refused and len(refused) == len(outcomes):
                    key_sent = self.client is not None and self.client.has_key
                    where = progress.where(number)
                    raise KeyRejected(refused[0], where=where, key_sent=key_sent)
                return outcomes

        # The same cache and client: every question's requests share the client's in-flight
        # limit and backoff.
        return Watched(replay=judge.replay, cache=judge.cache, client=judge.client)

    def settled(self, number: int) -> None:
        self.progress.settled(number)


def _questions(path: Path) -> list[str]:
    """The data file's questions, for the progress line; none when the file cannot say (the
    evaluation itself then reports what is wrong with it)."""
    from chatbot.knowledge_base.storage import read_json

    try:
        data = read_json(path)
    except HelpdeskError:
        return []
    queries = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(queries, list):
        return []
    return [str(q.get("text")) if isinstance(q, dict) else "" for q in queries]


async def _evaluate(
    args: argparse.Namespace, progress: Progress
) -> tuple[dict[str, Any], Settings]:
    # Here, not at the top: the engine and httpx cost `helpdesk --help` nothing this way.
    from chatbot.assembly import make_http_client, make_judge
    from chatbot.engine.evaluate import evaluate

    settings = settings_from(args)
    progress.questions = _questions(args.data)
    with _passages(settings, args.passages) as knowledge_base:
        async with make_http_client(settings) as http:
            kwargs: dict[str, Any] = {}
            if args.predicate:
                kwargs["predicates"] = args.predicate
            report = await evaluate(
                args.data,
                # One judge, so one Valen client: its in-flight limit caps every question's
                # requests.
                judge=make_judge(settings, http),
                watch=_Watch(progress),
                concurrency=settings.bot.concurrency,
                retriever=args.retriever,
                k=settings.engine.k,
                threshold=settings.engine.threshold,
                knowledge_base=knowledge_base,
                sweep=args.sweep,
                target_precision=args.target_precision,
                **kwargs,
            )
    return report, settings


@contextmanager
def _passages(settings: Settings, location: str | None) -> Iterator[KnowledgeBaseStore | None]:
    """`--passages`: the knowledge base it names, a folder or PostgreSQL, opened as `--kb` would
    be (None without it: the data file's own passages)."""
    if location is None:
        yield None
        return
    from pydantic import ValidationError

    from chatbot.assembly import open_knowledge_base
    from chatbot.config import KnowledgeBaseSettings

    try:
        section = KnowledgeBaseSettings.model_validate({"path": location})
    except ValidationError as error:
        raise HelpdeskError(f"invalid option --passages: {error.errors()[0]['msg']}") from None
    knowledge_base = open_knowledge_base(settings.model_copy(update={"knowledge_base": section}))
    try:
        yield knowledge_base
    finally:
        knowledge_base.close()


def _short(text: str, width: int = QUESTION_WIDTH) -> str:
    """`text` in exactly `width` cells: cut with … or padded, so Chinese questions line up."""
    return fit(printable(text), width)


def _mark(correct: bool) -> str:
    return "✓" if correct else "✗"


def _question_rows(report: dict[str, Any], width: int | None) -> list[str]:
    """One row per question; on a terminal too narrow for the table, each question on a line of
    its own with its cells below, so nothing wraps into the next row."""
    table = []
    for q in report["queries"]:
        keyword = q["keyword_order"][0] if q["keyword_order"] else "none"
        judged = [r for r in q["reranked"] if r["answers"] is not None]
        if judged:
            best = judged[0]
            reranked = (
                f"{printable(best['id'])} {best['answers']:.3f} {_mark(q['reranked_top_correct'])}"
            )
        else:
            reranked = "not judged"
        answer = printable(q["answer_with"]) if q["answer_with"] else f"escalated ({q['reason']})"
        table.append(
            (
                printable(q["query"]),
                f"{printable(keyword)} {_mark(q['keyword_top_correct'])}",
                reranked,
                answer,
            )
        )
    headers = ("question", "keyword top", "reranked top", "answer")
    if width is None:
        # Not a terminal (a pipe, a file): the fixed layout, the same on every machine.
        q_width, k_width, r_width = QUESTION_WIDTH, 22, 28
    else:
        k_width, r_width, a_width = (
            max([len(headers[i]), *(len(c[i]) for c in table)]) for i in (1, 2, 3)
        )
        longest = max([len(headers[0]), *(cells(c[0]) for c in table)])
        q_width = min(longest, width - (2 + 2 + k_width + 2 + r_width + 2 + a_width))
        if q_width < 24:
            legend = f"question, then its {headers[1]} · {headers[2]} · {headers[3]}"
            lines = wrap(legend, width, "  ", first="  ")
            for question, keyword, reranked, answer in table:
                lines.append(f"  {clip(question, width - 2)}")
                below = f"    {keyword:<{k_width}}  {reranked:<{r_width}}  {answer}".rstrip()
                if cells(below) <= width:
                    lines.append(below)
                else:  # Still too narrow: a line for each cell, in the legend's order.
                    lines += [
                        f"    {clip(cell, width - 4)}" for cell in (keyword, reranked, answer)
                    ]
            return lines
    row = "  {:<{}}  {:<{}}  {:<{}}  {}"
    lines = [row.format(headers[0], q_width, headers[1], k_width, headers[2], r_width, headers[3])]
    for question, keyword, reranked, answer in table:
        lines.append(
            row.format(
                _short(question, q_width), q_width, keyword, k_width, reranked, r_width, answer
            )
        )
    return lines


def _retrieval_rows(report: dict[str, Any], width: int | None) -> list[str]:
    """Recall@k and MRR per retriever; on a terminal narrower than the 48 cells of the fixed
    columns, the recall column as wide as its figures and the retrievers' names cut to fit."""
    k = report["k"]
    rows = [(row["retriever"], f"{row['hits']}/{row['questions']} {row['recall_at_k']:.2f}",
             f"{row['mrr']:5.3f}") for row in report["retrieval"]]  # fmt: skip
    name_width, recall_width = 26, 12
    if width is not None and 2 + name_width + 1 + recall_width + 2 + 5 > width:
        recall_width = max(len(f"recall@{k}"), *(len(recall) for _, recall, _ in rows))
        name_width = max(8, width - (2 + 1 + recall_width + 2 + 5))
    header = ("retriever", f"recall@{k}", "MRR")
    return [
        f"  {clip(name, name_width):<{name_width}} {recall:>{recall_width}}  {mrr:>5}"
        for name, recall, mrr in (header, *rows)
    ]


REPLAY_MISS = "replay-miss"
"""Not Valen's failure: replay mode has no recorded answer (`ask` explains it)."""
REFUSED = "refused"
"""Not a failure either: Valen answered, declining to judge (the model's verdict): an operator
sent to check the key and the connection would find both working."""


def valen_failures(report: dict[str, Any]) -> str | None:
    """`Valen failed 30 of 30 judgments: auth 30`, counting the judgments Valen failed by kind,
    then those it declined; None when it failed and declined none (replay misses are no failure
    of Valen's)."""
    judgments = report["judgments"]
    not_judged = judgments["not_judged"]
    asked = counted(judgments["asked"], "judgment")
    failed = {kind: n for kind, n in not_judged.items() if kind not in (REPLAY_MISS, REFUSED)}
    said = []
    if failed:
        kinds = ", ".join(f"{kind} {n}" for kind, n in failed.items())
        said.append(f"Valen failed {sum(failed.values())} of {asked}: {kinds}")
    if declined := not_judged.get(REFUSED):
        said.append(f"Valen declined to judge {declined} of {asked} (refused)")
    return "; ".join(said) or None


def replay_misses(report: dict[str, Any], *, cache: str = "the replay cache") -> str | None:
    """What the replay misses mean, as `ask` says it, when there were any: an evaluation with
    no recorded answers ended "reranked 0/32 … escalated 32" and nothing said why."""
    judgments = report["judgments"]
    missed = judgments["not_judged"].get(REPLAY_MISS, 0)
    if not missed:
        return None
    asked = judgments["asked"]
    if missed == asked:
        which = "The judgment was a replay miss" if asked == 1 else f"All {asked} judgments were"
    else:
        which = f"{missed} of {counted(asked, 'judgment')} " + ("was" if missed == 1 else "were")
    if not which.endswith("miss"):
        which += " replay misses" if missed > 1 else " a replay miss"
    return (
        f"{which}, not {'a failure' if missed == 1 else 'failures'}: in replay mode (the "
        f"default) only recorded Valen judgments are used, from {cache}, and none is recorded "
        f"for {'it' if missed == 1 else 'them'}. Ask Valen live with --replay off, or with "
        "--replay record to save its answers for next time."
    )


def judged_nothing(report: dict[str, Any]) -> bool:
    """Valen was asked and judged nothing, failing (not declining): every number after
    retrieval's is meaningless, and the key or the connection is the likely cause."""
    judgments = report["judgments"]
    failed = set(judgments["not_judged"]) - {REPLAY_MISS, REFUSED}
    return judgments["judged"] == 0 and bool(failed)


def render(
    report: dict[str, Any],
    *,
    data: Path,
    width: int | None = None,
    cache: str = "the replay cache",
) -> str:
    """The report for a person: retrieval step by step, each question, the sweep. `width` is the
    terminal's, which the question table and the predicate lines fit; None for a pipe. `cache`
    names the replay cache, for what a replay miss means."""
    k = report["k"]
    count = len(report["queries"])

    def prose(text: str) -> list[str]:
        return wrap(text, width, "  ", first="")

    lines = [
        *prose(
            f"{printable(str(data))}: {counted(report['passages'], 'passage')}, "
            f"{counted(count, 'question')}"
        ),
        *prose(f"k={k}, threshold {report['threshold']:g}, retriever {report['retriever']}"),
        "",
        *prose(f"Retrieval (no Valen): is a correct passage among the {k} retrieved?"),
        *_retrieval_rows(report, width),
        "",
        "Questions (✓: a correct passage):",
        *_question_rows(report, width),
        "",
        *prose(
            f"top-1 correct: keyword {report['keyword_top1']}/{count}, "
            f"reranked {report['reranked_top1']}/{count}"
        ),
        f"answered {report['answered']}, escalated {report['escalated']}",
    ]
    if "predicates" in report:
        lines += [
            "",
            *prose("Predicate wordings (mean probability: relevant / other passages, gap):"),
        ]
        predicate_width = 70 if width is None else width - 29
        for p in report["predicates"]:
            values = [p["relevant_mean"], p["non_relevant_mean"], p["gap"]]
            shown = " / ".join("–" if v is None else f"{v:.3f}" for v in values[:2])
            gap = "–" if values[2] is None else f"{values[2]:+.3f}"
            predicate = printable(p["predicate"])
            if width is not None and predicate_width < 20:  # The wording on a line of its own.
                lines += [f"  {shown}  gap {gap}", f"    {clip(predicate, width - 4)}"]
            else:
                lines.append(f"  {shown}  gap {gap}  {clip(predicate, predicate_width)}")
    if "sweep" in report:
        sweep = report["sweep"]
        target = sweep["target_precision"]
        goal = "all correct" if target >= 1 else f"≥ {target:.0%} correct"
        lines += [
            "",
            *prose("Threshold sweep (answer when the top judged passage reaches the threshold):"),
            f"  {'threshold':>9} {'answered':>9} {'correct':>8} {'escalated':>10} "
            f"{'precision':>10}",
        ]
        # The table's rows take 52 cells, the least this part of the report needs; the words
        # beside the marked row move below the table when they do not fit beside it.
        marker = f"  ← lowest, {goal}"
        beside = width is None or 52 + len(marker) <= width
        for row in sweep["rows"]:
            precision = "–" if row["precision"] is None else f"{row['precision']:.2f}"
            mark = "" if row["threshold"] != sweep["lowest"] else marker if beside else "  ←"
            lines.append(
                f"  {row['threshold']:>9.2f} {row['answered']:>9} {row['correct']:>8} "
                f"{row['escalated']:>10} {precision:>10}{mark}"
            )
        if sweep["lowest"] is None:
            what = "every answer correct" if target >= 1 else f"at least {target:.0%} correct"
            lines += wrap(f"No threshold here answers anything with {what}.", width, "    ", "  ")
        elif not beside:
            lines += wrap(f"← the lowest threshold with {goal}", width, "    ", "  ")
    failures = valen_failures(report)
    if failures is not None:
        # Last, where the eye lands: a sweep with nothing judged ended on "No threshold here
        # answers anything", which blamed the data.
        lines += ["", *prose(failures + ".")]
    if (misses := replay_misses(report, cache=printable(cache))) is not None:
        lines += ["", *prose(misses)]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import asyncio  # Not at the top: `helpdesk --help` need not load it.

    if not 0 < args.target_precision <= 1:
        raise HelpdeskError("--target-precision must be more than 0 and at most 1")
    progress = Progress([], sys.stderr if sys.stderr.isatty() else None)
    try:
        with progress.around_logging():
            report, settings = asyncio.run(_evaluate(args, progress))
    except KeyRejected as stopped:
        progress.clear()
        print(stopped.line(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        progress.clear()
        if progress.position == 0:
            said = "before any question was judged"
        elif progress.in_flight:
            # The first question not settled: the report needs every one before it, in order.
            said = f"at {progress.where()}, the ones before it done"
        else:
            said = f"after {progress.where(progress.settled_in_order)}"
        print(f"helpdesk eval: interrupted {said}; no report printed", file=sys.stderr)
        raise
    finally:
        progress.clear()
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        cache = str(settings.valen.cache)
        print(render(report, data=args.data, width=terminal_width(), cache=cache))
    if judged_nothing(report):
        print(
            f"helpdesk eval: nothing was judged ({valen_failures(report)}); "
            "`helpdesk valen check` tests the connection and the key",
            file=sys.stderr,
        )
        return 1
    return 0
