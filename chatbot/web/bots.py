"""The bot workers `helpdesk serve` runs itself (`--bots N`): `helpdesk bot` processes, restarted
if one dies, stopped with SIGTERM (each gives back the questions it holds) when `serve` stops.

Separate processes, not tasks in the server: judging never competes with the server's event loop
for the GIL, and browser sessions run no engine of their own (`--no-bot`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping

from chatbot.web.spawn import dies_with_this_process, python_command

log = logging.getLogger("helpdesk.web")

RESTART_DELAY_S = 2.0
"""Between a worker dying and its replacement starting, so a worker that cannot start (a bad
setting) does not spin."""
MAX_RESTART_DELAY_S = 60.0
"""The longest wait between restarts of a worker that keeps failing as it starts."""
STARTED_S = 30.0
"""A worker that ran this long had started: its next death is waited on from the first delay."""


class BotWorkers:
    def __init__(
        self,
        count: int,
        *,
        environment: Mapping[str, str],
        grace_s: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.count = count
        self.environment = dict(environment)
        self.grace_s = grace_s
        self.processes: list[asyncio.subprocess.Process] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False
        self._clock = clock
        self._sleep = sleep

    async def start(self) -> None:
        for number in range(self.count):
            self._tasks.append(asyncio.create_task(self._keep(number), name=f"bot {number}"))

    async def _keep(self, number: int) -> None:
        failures = 0  # In a row, each soon after its start.
        while not self._stopping:
            started = self._clock()
            process = await asyncio.create_subprocess_exec(
                *python_command("chatbot", "bot"),
                stdin=asyncio.subprocess.DEVNULL,
                env=self.environment,
                preexec_fn=dies_with_this_process(),  # SIGTERM: it gives back what it holds.
            )
            self.processes.append(process)
            if self._stopping:  # `stop` ran while this one was starting.
                process.terminate()
            code = await process.wait()
            self.processes.remove(process)
            if self._stopping:
                return
            failures = failures + 1 if self._clock() - started < STARTED_S else 1
            # Doubled while it keeps dying as it starts (a broken upgrade, a bad setting): it
            # restarted every 2 s for ever, each with its traceback, and nothing said that no
            # bot was answering.
            delay = min(RESTART_DELAY_S * 2 ** (failures - 1), MAX_RESTART_DELAY_S)
            if failures >= 3:
                log.error(
                    "bot worker %d keeps failing as it starts (%d times in a row, last status"
                    " %d): no bot answers questions; its error is above; next try in %g s",
                    number, failures, code, delay,
                )  # fmt: skip
            elif code == 0:  # Stopped, not crashed (a SIGTERM sent to it alone, say).
                log.warning("bot worker %d stopped; starting another", number)
            else:
                log.warning("bot worker %d exited with status %d; starting another", number, code)
            await self._sleep(delay)

    async def stop(self) -> None:
        """SIGTERM to every worker; each finishes or gives back what it holds within its grace
        period, and is killed if it has not exited a few seconds after that."""
        self._stopping = True
        processes = list(self.processes)
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), self.grace_s + 5)
            except TimeoutError:
                log.warning("bot worker %d did not stop; killing it", process.pid)
                process.kill()
                await process.wait()
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
