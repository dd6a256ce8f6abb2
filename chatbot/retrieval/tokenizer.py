"""Turn text into index terms for BM25, in English and in scripts written without spaces.

Text is NFKC-normalised (full-width letters become ASCII) and casefolded; words are runs of
Unicode letters and digits, with English stop words dropped. Chinese and Japanese text has no
spaces between words, so each run of those characters is indexed as single characters plus
overlapping character bigrams: a query for 退款 then matches the bigram and its characters
without a dictionary.
"""

from __future__ import annotations

import re
import unicodedata

# Common English function words that carry no topic: matching on them only adds noise.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves s t don
    """.split()
)

# Han ideographs (with extensions and compatibility forms), kana and CJK punctuation-free ranges.
_CJK_RANGES = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0002fa1f"  # Extensions B-F and supplements
)
_TOKEN = re.compile(rf"([{_CJK_RANGES}]+)|[^\W_{_CJK_RANGES}]+")


def tokenize(text: str) -> list[str]:
    """Index terms of `text`, in order, repeated as often as they occur."""
    terms: list[str] = []
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text).casefold()):
        run = match.group(1)
        if run is None:
            word = match.group(0)
            if word not in STOP_WORDS:
                terms.append(word)
            continue
        terms.extend(run)
        terms.extend(run[i : i + 2] for i in range(len(run) - 1))
    return terms
