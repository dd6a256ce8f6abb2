"""One rule for every box that sends what is typed in it on Enter: each Enter sends what the box
held when it was pressed, once, in order, and what was typed after it stays in the box."""

from __future__ import annotations


def after(value: str, sent: str) -> str:
    """What is left of `value` once `sent` went out: the rest, if `value` starts with it (typed
    after its Enter); otherwise all of it (changed since: the sender's to judge, not ours)."""
    return value[len(sent) :] if value.startswith(sent) else value


class SendGuard:
    """Keys come in bursts (a slow link, an impatient key): an Enter's `Submitted` reaches its
    handler after more keys were typed, or while an earlier Enter's words still wait on the desk.
    Each carries what the box held when Enter was pressed, and how many times the box's owner had
    changed it by then (its revision). The owner changes it by taking sent words off its front,
    or by putting other words in it (the other draft, a passage, another conversation); what each
    later change did tells how to read an Enter pressed before it:

    - words a change took went out: they are not that Enter's to send again (a quick double Enter
      sends once; "first message", Enter, "second", Enter sends each once);
    - words put away never go with an Enter pressed on them (a note's, once the box is back to
      the reply), nor do words kept after their send failed (what followed took them for sent);
    - Enter on the box a send has just emptied asks for nothing, so it gets no hint."""

    def __init__(self) -> None:
        self.revision = 0
        """How many times the owner changed the box."""
        self._changes: list[str | None] = []
        """What each change from revision `_base` on did: the words it took, or None: words put
        away or kept."""
        self._base = 0
        self._unread = 0
        """Enters posted and not read yet: while there are any, the changes they missed are kept."""
        self._emptied = False

    @property
    def unread(self) -> bool:
        """Whether an Enter was pressed whose words its owner has not read yet."""
        return self._unread > 0

    def entered(self) -> int:
        """Enter was pressed: the revision its words belong to."""
        self._unread += 1
        return self.revision

    def read(self, value: str, revision: int) -> str | None:
        """What an Enter pressed on `value` at `revision` asks to send now; None: nothing (it is
        to be dropped without a word)."""
        self._unread = max(self._unread - 1, 0)
        words: str | None = value
        if revision < self._base:  # Not counted when pressed: what it missed is not known.
            words = None
        for change in self._changes[max(revision - self._base, 0) :]:
            if words is None or change is None:
                words = None
                break
            words = after(words, change)
        if not self._unread:  # No Enter pressed before the changes so far is left to read them.
            self._base, self._changes = self.revision, []
        if words is None or (not words and (words != value or self._emptied)):
            return None
        return words

    def took(self, words: str, *, emptied: bool) -> None:
        """`words` went out, and were taken off the front of the box; `emptied`: nothing is
        left in it."""
        self._change(words)
        self._emptied = emptied

    def put(self) -> None:
        """Other words were put in the box: the ones it held are not to be sent by an Enter."""
        self._change(None)
        self._emptied = False

    def kept(self) -> None:
        """Words read from an Enter were not sent, and stay in the box: Enters pressed after
        theirs took them for sent, so their own words are not known apart."""
        self._change(None)

    def edited(self, value: str) -> None:
        """The box changed; something typed in it makes Enter a request again."""
        if value:
            self._emptied = False

    def _change(self, change: str | None) -> None:
        self.revision += 1
        if self._unread:
            self._changes.append(change)
        else:  # No Enter pressed before it is left to read it.
            self._base, self._changes = self.revision, []
