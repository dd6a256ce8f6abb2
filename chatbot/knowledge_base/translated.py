"""A translated knowledge base (`zh/`) together with the passages written in its language in the
main one, and the main one's synonym groups.

Conversations in a language with a translation folder are answered from that folder. Passages an
editor writes go into the main knowledge base unless they switch the editor to the folder's
(`translation_stores`), so a passage written in Chinese for a Chinese question (from a content
gap, say) was never seen by a Chinese customer,
while Try it and `helpdesk ask` said it matched. The translation's engine reads both: the
folder's passages, and the main one's passages written in the folder's language, unless the
folder has a passage of the same id (the translation of a shipped passage wins).

Synonyms likewise: the editor and `helpdesk kb synonyms` write the main `synonyms.toml`, so its
groups apply to questions in every language, after the folder's own (`zh/synonyms.toml`, which
only its language's questions use). A Chinese group added from the editor had no effect at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from chatbot.i18n import DEFAULT_LOCALE, LOCALES, Locale, detect_locale
from chatbot.knowledge_base.interface import KnowledgeBaseStore
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.storage import KnowledgeBaseError, LoadedKnowledgeBase
from chatbot.knowledge_base.store import PassageStore
from chatbot.knowledge_base.synonyms import SynonymGroup


def written_in(passage: Passage, locale: Locale) -> bool:
    """Whether the passage is written in `locale` (its title and text, as a question is read)."""
    return detect_locale(f"{passage.title}\n{passage.text}") == locale


def merged_synonyms(
    own: tuple[SynonymGroup, ...], main: tuple[SynonymGroup, ...]
) -> tuple[SynonymGroup, ...]:
    """A translation's groups, then the main knowledge base's (the same group once)."""
    seen = {tuple(word.casefold() for word in group) for group in own}
    return own + tuple(g for g in main if tuple(w.casefold() for w in g) not in seen)


class TranslatedPassageStore(PassageStore):
    """The translation folder `directory` of the knowledge base `main`, for `locale`'s engine.

    Only reading is merged; it is never written through (the editor writes to the main
    knowledge base, or to the folder alone through `translation_stores`)."""

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

    def load(self) -> LoadedKnowledgeBase:
        # `passages()` reads through this too.
        loaded = super().load()
        extra = self._written_in_main({p.id for p in loaded.passages})
        return LoadedKnowledgeBase(loaded.passages + extra, loaded.skipped)

    def synonyms(self) -> tuple[SynonymGroup, ...]:
        own = super().synonyms()
        try:
            main = self.main.synonyms()
        except KnowledgeBaseError:  # As for passages: the main engine's to report.
            return own
        return merged_synonyms(own, main)

    def stamp(self) -> int | None:
        own, main = super().stamp(), self.main.stamp()
        return None if own is None or main is None else hash((own, main))


def translation_stores(main: KnowledgeBaseStore) -> dict[Locale, PassageStore]:
    """Each translation folder of the knowledge base `main` (`zh/`) that is there, as a store of
    its own, for the editor to edit that language's passages in: the folder's passages alone,
    written where a conversation in that language is answered from. None for a knowledge base
    in PostgreSQL, which holds no translations yet, nor for a translation's merged store."""
    if type(main) is not PassageStore:
        return {}
    return {
        locale: PassageStore(main.directory / locale, lock_timeout=main.lock_timeout)
        for locale in LOCALES
        if locale != DEFAULT_LOCALE and (main.directory / locale).is_dir()
    }


def searched_passages(main: Path) -> dict[Locale, list[Passage]]:
    """For each language, the passages its questions are searched in (as far as they can be
    read): a translation folder's with the main one's written in its language, or the main
    knowledge base's for a language without one. What a synonym group must find words in."""
    passages = [stored.passage for stored in PassageStore(main).scan().passages]
    searched: dict[Locale, list[Passage]] = {}
    for locale in LOCALES:
        folder = main / locale
        if locale == DEFAULT_LOCALE or not folder.is_dir():
            searched[locale] = passages
            continue
        own = [stored.passage for stored in PassageStore(folder).scan().passages]
        taken = {p.id for p in own}
        searched[locale] = own + [
            p for p in passages if p.id not in taken and written_in(p, locale)
        ]
    return searched


def synonyms_finding_nothing(
    searched: Mapping[Locale, Sequence[Passage]], groups: Sequence[SynonymGroup]
) -> list[tuple[SynonymGroup, Locale | None]]:
    """The groups that can find nothing, given the passages each language's questions are
    searched in (`searched_passages`, or the live engines'): each with None when no passage of
    any language has any of its words, or with its words' language when none of the passages
    that language searches has any (a Chinese group whose words only an English passage has).
    The one rule of `helpdesk kb check` and the editor's Synonyms tab."""
    from chatbot.retrieval.retrievers import unmatched_synonyms

    # Languages without a translation search the same passages: read those once.
    by_list: dict[int, set[SynonymGroup]] = {}
    unmatched: dict[Locale, set[SynonymGroup]] = {}
    for locale, passages in searched.items():
        if id(passages) not in by_list:
            by_list[id(passages)] = set(unmatched_synonyms(passages, groups))
        unmatched[locale] = by_list[id(passages)]
    found: list[tuple[SynonymGroup, Locale | None]] = []
    for group in groups:
        if all(group in missed for missed in unmatched.values()):
            found.append((group, None))
            continue
        locale = detect_locale(" ".join(group))
        if group in unmatched.get(locale, ()):
            found.append((group, locale))
    return found
