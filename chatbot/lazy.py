"""Package attributes imported from their modules on first use (PEP 562).

A package's `__init__` that re-exports its names this way lets one light submodule (errors,
protocol, models) be imported without loading numpy or httpx with the rest: `helpdesk --help` and
a replaying `ask` stay quick.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, home: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports each name in `home` from the module it
    maps to, once: the value is then kept in the package, so later lookups never come here."""

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
