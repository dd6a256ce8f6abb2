"""What a running `helpdesk serve` wrote to its log for the requests a test just sent."""

from __future__ import annotations

import uuid

import httpx

from tests.web.harness import Served, wait_for

HANDSHAKE = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}
"""The headers of a websocket handshake (the key is RFC 6455's example)."""


def logged_since(served: Served, start: int) -> list[str]:
    """The lines serve wrote from `served.output[start]` on for the requests answered before this
    call: a websocket handshake from an origin of its own is then refused with a line naming that
    origin, written after theirs; the lines before that one are returned (its bot workers' own
    lines left out)."""
    origin = f"http://mark-{uuid.uuid4().hex}.example"
    refused = httpx.get(served.url + "/ws/chat", headers=HANDSHAKE | {"Origin": origin})
    assert refused.status_code == 403, refused.text

    def marked() -> bool:
        return any(origin in line for line in served.output[start:])

    wait_for(marked, timeout=30, what="serve's line for the marking handshake")
    lines = list(served.output[start:])
    said = lines[: next(i for i, line in enumerate(lines) if origin in line)]
    return [line for line in said if not line.startswith(BOT_LINE)]


BOT_LINE = "helpdesk bot "
"""How a line of serve's bot workers begins (that they started, say): written when they do."""
