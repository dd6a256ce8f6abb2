"""When something happened, as the person reading sees it: their own local time, and the date
only when it is not today (or not this year), so a transcript's times stay short."""

from __future__ import annotations

from datetime import datetime


def moment(at: datetime, *, now: datetime) -> str:
    """`at` in local time: "09:03" today, "01-04 09:03" earlier this year, else "2025-12-31
    09:03". Both are aware datetimes (the desk stores UTC)."""
    local, today = at.astimezone(), now.astimezone()
    if local.date() == today.date():
        return local.strftime("%H:%M")
    if local.year == today.year:
        return local.strftime("%m-%d %H:%M")
    return local.strftime("%Y-%m-%d %H:%M")
