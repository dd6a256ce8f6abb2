"""Two consoles of one agent typing in one conversation keep their unsent replies in one file: each
box's save replaces its own words there, so once both have sent, nothing is left to come back.

Before, a box cleared by its send left the file holding both replies joined, and the next opening
of the conversation put the joined text back as "your unsent reply", which one Enter sent again."""

from __future__ import annotations

from pathlib import Path

from chatbot.drafts import read_agent_draft, store_agent_draft


def test_each_console_sending_takes_only_its_own_words_and_both_leave_nothing(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "drafts"

    def store(text: str, base: str) -> str:
        return store_agent_draft(folder, 2, agent="ana", note=False, text=text, base=base)

    def kept() -> str:
        return read_agent_draft(folder, 2, agent="ana", note=False)

    # Each box's next base is what it holds itself (the view keeps that, not the joined file).
    one, two = "Refunds take 5 days", "Let me look at that refund"
    store(one, base="")
    store(two, base="")  # Knew nothing of the first.
    assert kept() == "Refunds take 5 days Let me look at that refund"  # Neither lost.
    # The first types on: its words grow where they are.
    store("Refunds take 5 working days", base=one)
    one = "Refunds take 5 working days"
    assert kept() == "Refunds take 5 working days Let me look at that refund"
    assert store("", base=two) == "Refunds take 5 working days"  # The second sent its reply.
    assert store("", base=one) == ""  # And the first: nothing comes back as unsent.
    assert kept() == ""
    assert [p.name for p in folder.iterdir() if p.suffix == ".txt"] == []
