"""A translated knowledge base (`zh/`) together with the passages written in its language in the
main one.

Conversations in a language with a translation folder are answered from that folder. Passages an
editor writes go into the main knowledge base (the editor edits that one), so a passage written
in Chinese for a Chinese question (from a content gap, say) was never seen by a Chinese customer,
while Try it and `helpdesk ask` said it matched. The translation's engine reads both: the
folder's passages, and the main one's passages written in the folder's language, unless the
folder has a passage of the same id (the translation of a shipped passage wins).
"""

from __future__ import annotations

from pathlib import Path

from chatbot.i18n import Locale, detect_locale
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.storage import LoadedKnowledgeBase
from chatbot.knowledge_base.store import PassageStore


def written_in(passage: Passage, locale: Locale) -> bool:
    """Whether the passage is written in `locale` (its title and text, as a question is read)."""
    return detect_locale(f"{passage.title}\n{passage.text}") == locale


class TranslatedPassageStore(PassageStore):
    """The translation folder `directory` of the knowledge base `main`, for `locale`'s engine.

    Only reading is merged; it is never written through (the editor and `helpdesk kb` write to
    the main knowledge base)."""

    def __init__(
        self, directory: Path, *, main: Path, locale: Locale, lock_timeout: float = 10.0
    ) -> None:
        super().__init__(directory, lock_timeout=lock_timeout)
        self.main = PassageStore(main, lock_timeout=lock_timeout)
        self.locale = locale

    def _written_in_main(self, taken: set[str]) -> list[Passage]:
        # Read as the editor reads: a broken file in the main knowledge base is the main
        # engine's to report, and must not stop the translation from loading.
        return [
            stored.passage
            for stored in self.main.scan().passages
            if stored.passage.id not in taken and written_in(stored.passage, self.locale)
        ]

    def passages(self) -> list[Passage]:
        own = super().passages()
        return own + self._written_in_main({p.id for p in own})

    def load(self) -> LoadedKnowledgeBase:
        loaded = super().load()
        extra = self._written_in_main({p.id for p in loaded.passages})
        return LoadedKnowledgeBase(loaded.passages + extra, loaded.skipped)

    def stamp(self) -> int | None:
        own, main = super().stamp(), self.main.stamp()
        return None if own is None or main is None else hash((own, main))
