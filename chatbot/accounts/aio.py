"""`AccountService` for an event loop: every call on one thread of its own (the only one that
touches the store's connection), so a password check never stalls the server's loop."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from chatbot.accounts.models import Account
from chatbot.accounts.service import AccountService, SignIn

P = ParamSpec("P")
T = TypeVar("T")


class AsyncAccounts:
    def __init__(self, executor: ThreadPoolExecutor, service: AccountService) -> None:
        self._executor = executor
        self._service = service

    @classmethod
    def open(cls, open_service: Callable[[], AccountService]) -> AsyncAccounts:
        """Open the service on its thread; a bad database raises here, before any loop runs."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="accounts")
        try:
            service = executor.submit(open_service).result()
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(executor, service)

    async def _run(self, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        call = functools.partial(function, *args, **kwargs)
        return await loop.run_in_executor(self._executor, call)

    def call_blocking(self, function: Callable[[AccountService], T]) -> T:
        """Run `function(service)` on the service's thread and wait (outside any loop)."""
        return self._executor.submit(function, self._service).result()

    async def authenticate(self, name: str, password: str) -> Account | None:
        return await self._run(self._service.authenticate, name, password)

    async def sign_in(self, name: str, password: str, *, address: str) -> SignIn:
        return await self._run(self._service.sign_in, name, password, address=address)

    async def sign_in_wait(self, name: str, *, address: str) -> float:
        return await self._run(self._service.sign_in_wait, name, address=address)

    async def account(self, name: str) -> Account | None:
        return await self._run(self._service.account, name)

    async def sign_out(self, digest: str, *, expires_at: float) -> None:
        await self._run(self._service.sign_out, digest, expires_at=expires_at)

    async def signed_out(self, digests: Collection[str]) -> set[str]:
        return await self._run(self._service.signed_out, digests)

    def close(self) -> None:
        self._executor.submit(self._service.close).result()
        self._executor.shutdown(wait=True)
