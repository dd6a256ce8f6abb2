"""Languages: the gettext catalogs in `chatbot/locales/` and which language a customer writes.

English is the source language: a message's English sentence is its id, and the catalogs under
`locales/<locale>/LC_MESSAGES/helpdesk.po` translate it. The `.po` files are the only copy in the
repository and in a wheel; each is compiled with Babel the first time it is needed (a few ms),
so there is no build step to forget and no compiled file to fall out of date.

Nothing here knows who is reading: a front end asks `translations(locale)` for the reader's
language (the customer's conversation, the agent's setting) and renders with it.
"""

from __future__ import annotations

import gettext
import io
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Literal

Locale = Literal["en", "zh"]
LOCALES: tuple[Locale, ...] = ("en", "zh")
"""English first: the source language, and the default."""
DEFAULT_LOCALE: Locale = "en"
DOMAIN = "helpdesk"
LANGUAGE_NAMES: dict[Locale, str] = {"en": "English", "zh": "中文"}
"""Each language in its own words, for the switcher: a reader finds their language by sight."""


def N_(message: str) -> str:
    """Marks a module-level sentence for the catalog; it is translated where it is shown."""
    return message


def parse_locale(value: str) -> Locale:
    """`zh`, `zh_CN`, `zh-Hans`, `EN` ...: the supported locale they name, or ValueError."""
    base = value.strip().replace("-", "_").split("_")[0].lower()
    for locale in LOCALES:
        if base == locale:
            return locale
    raise ValueError(f"unknown locale {value!r} (choose from {', '.join(LOCALES)})")


def accepted_locale(header: str | None) -> Locale:
    """The supported locale a browser's `Accept-Language` header ranks highest (`zh-CN,zh;q=0.9`
    gives `zh`), English when it names none; a malformed part is skipped, never an error."""
    ranked: list[tuple[float, int, Locale]] = []
    for position, part in enumerate((header or "").split(",")):
        tag, _, parameters = part.partition(";")
        quality = 1.0
        for parameter in parameters.split(";"):
            key, _, value = parameter.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if not 0 < quality <= 1:  # q=0 means "not this one"; NaN and nonsense count as that.
            continue
        try:
            locale = parse_locale(tag)
        except ValueError:
            continue
        ranked.append((-quality, position, locale))
    return min(ranked)[2] if ranked else DEFAULT_LOCALE


LANGUAGE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
"""Where gettext looks for the user's language, first set first."""


def environment_locale(environ: Mapping[str, str]) -> Locale:
    """The supported locale a terminal's environment asks for, as gettext reads it: the first
    of `LANGUAGE` (a colon-separated list, tried in order), `LC_ALL`, `LC_MESSAGES` and `LANG`
    that is set (`zh_CN.UTF-8` gives `zh`); English when it names none of ours, or `C`."""
    for name in LANGUAGE_VARIABLES:
        if value := environ.get(name, "").strip():
            for language in value.split(":"):
                tag = language.split(".")[0].split("@")[0]
                if tag in ("C", "POSIX"):
                    return DEFAULT_LOCALE
                try:
                    return parse_locale(tag)
                except ValueError:
                    continue
            return DEFAULT_LOCALE
    return DEFAULT_LOCALE


def catalog_path(locale: Locale) -> resources.abc.Traversable:
    return resources.files("chatbot") / "locales" / locale / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(locale: Locale) -> gettext.NullTranslations:
    """The catalog for `locale`, compiled from its `.po` on first use; English is the ids."""
    if locale == DEFAULT_LOCALE:
        return gettext.NullTranslations()
    # Imported here: ~30 ms that an English-only process (most bot workers) never spends.
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with catalog_path(locale).open("rb") as po:
        catalog = read_po(po, locale=locale, domain=DOMAIN)
    compiled = io.BytesIO()
    # Fuzzy entries are a translator's unfinished guesses: left out, they show in English.
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


# -- which language a customer writes ---------------------------------------------------------


def _is_han(char: str) -> bool:
    code = ord(char)
    return (
        0x4E00 <= code <= 0x9FFF  # CJK Unified Ideographs
        or 0x3400 <= code <= 0x4DBF  # Extension A
        or 0xF900 <= code <= 0xFAFF  # Compatibility Ideographs
        or 0x20000 <= code <= 0x3134F  # Extensions B-G
    )


def _is_kana(char: str) -> bool:
    return 0x3040 <= ord(char) <= 0x30FF or 0x31F0 <= ord(char) <= 0x31FF


def detect_locale(text: str) -> Locale:
    """`zh` when the text is written mostly in Chinese characters, else `en`.

    One Chinese character carries about as much as one English word, so the characters are
    weighed against Latin *words*, not letters: "我的车坏了 help" is Chinese, "Is the 北京
    station open on Sundays?" is English that names a place. Kana means Japanese (which also
    uses these characters), and we have no Japanese catalog: English is the better guess there.
    """
    han, latin_words, kana = _weights(text)
    if han == 0 or kana:
        return "en"
    return "zh" if han >= latin_words else "en"


CLEAR_UNITS = 2
"""The fewest characters (or words) that make a message clearly written in a language: a
two-character question ("退款") is one, a single word ("ok", "refund") is not."""


def written_clearly_in(text: str) -> Locale | None:
    """The language `text` is clearly written in, weighed as `detect_locale` weighs it, or None
    for a mixed or a short one. Said of a customer's later message, which switches their
    conversation's language (the first one decides whatever it is): "我的 e-bike battery 没电了
    what should I do now" is mixed, "ok" or "退" too short to tell, and neither moves a
    conversation from the language it is in, where "电动车电池能骑多远？" does.

    Clearly: at least two of that language's units (characters, or words), and at least twice
    the other's; never with kana, which `detect_locale` reads as Japanese. Only plain words
    count as English here: an order number, an address or a link ("AB12345",
    "ana@example.com") that a Chinese customer types is not English they read."""
    han, _, kana = _weights(text)
    if kana:
        return None
    latin_words = sum(1 for token in text.split() if _PLAIN_WORD.fullmatch(token.strip(_EDGES)))
    if han >= CLEAR_UNITS and han >= 2 * latin_words:
        return "zh"
    if latin_words >= CLEAR_UNITS and latin_words >= 2 * han:
        return "en"
    return None


_PLAIN_WORD = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")
"""A word of letters alone (with inner apostrophes or hyphens: "don't", "e-bike")."""
_EDGES = "\"'“”‘’()[]{}<>.,!?;:…，。！？；：、（）"
"""Punctuation around a word that does not make it any less a word."""


def _weights(text: str) -> tuple[int, int, bool]:
    """Chinese characters, Latin words, and whether there is kana in `text`."""
    han = sum(1 for char in text if _is_han(char))
    latin_words = 0
    in_word = False
    for char in text:
        latin = char.isascii() and char.isalpha()
        if latin and not in_word:
            latin_words += 1
        in_word = latin
    return han, latin_words, any(_is_kana(char) for char in text)
