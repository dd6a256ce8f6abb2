"""`chatbot.text.wrap`: prose fitted to a terminal's cells, broken between words (or between two
Chinese characters), and a word wider than a line cut where it must be."""

from __future__ import annotations

from chatbot.text import cells, clip, fit, printable, wrap, wrap_lines


def test_words_stay_whole_and_lines_fit() -> None:
    text = "replay-miss is not a failure: the bot uses only recorded Valen judgments"
    lines = wrap(text, 24, "  ")
    assert all(line.startswith("  ") and cells(line) <= 24 for line in lines)
    assert " ".join(line.strip() for line in lines) == text
    assert lines[0] == "  replay-miss is not a"


def test_chinese_breaks_between_characters_by_cells() -> None:
    lines = wrap("标准单车不提供头盔。里斯本和波尔图的电动车配有头盔。", 12)
    assert [cells(line) for line in lines] == [12, 12, 12, 12, 4]
    assert "".join(lines) == "标准单车不提供头盔。里斯本和波尔图的电动车配有头盔。"


def test_a_word_with_typographic_punctuation_stays_whole() -> None:
    # Phones and word processors write "don’t" and "café—bar": punctuation outside ASCII, which
    # is narrow and so no place to break, wherever the line ends around it.
    for width in range(12, 20):
        for text in ("aaaaaaaaaa don’t stop", "see the café—bar now", "in 7 days’ time, “ok”"):
            words = text.split()
            lines = wrap(text, width)
            assert [word for line in lines for word in line.split()] == words, (width, lines)


def test_accents_written_as_two_characters_take_one_cell() -> None:
    decomposed = "cafe\u0301 "  # "café" spelled with a combining accent, as macOS files do.
    assert cells(decomposed * 4) == 20
    assert wrap(decomposed * 4, 10) == ["cafe\u0301 cafe\u0301", "cafe\u0301 cafe\u0301"]
    assert cells(clip(decomposed * 4, 8)) == 8


def test_a_word_wider_than_a_line_is_cut() -> None:
    path = "/var/lib/helpdesk/caches/" + "a" * 30 + "/rerank.json"
    lines = wrap(f"from {path}, and", 20, "  ")
    assert all(cells(line) <= 20 for line in lines)
    assert lines[0] == "  from"
    assert "".join(line.strip() for line in lines[1:-1]) + lines[-1].strip() == path + ", and"
    assert wrap("", 20, "  ") == ["  "]


def test_each_line_keeps_its_indent_and_wraps_under_it() -> None:
    text = "Steps:\n  1. open the app and find the refunds page\n  2. tap Report"
    assert wrap_lines(text, 30, "    ", first="ana: ") == [
        "ana: Steps:",
        "      1. open the app and find",
        "      the refunds page",
        "      2. tap Report",
    ]


def test_with_no_width_a_pipe_gets_the_text_as_written() -> None:
    assert wrap("a  b " * 30, None, "  ", first="x: ") == ["x: " + "a  b " * 30]
    assert wrap_lines("one\n  two", None, "    ", first="> ") == ["> one", "      two"]


def test_bidi_overrides_and_isolates_are_spelled_out_but_joiners_and_marks_kept() -> None:
    # A right-to-left override in a customer's message reversed everything after it on screen:
    # "evil" was shown as "live". Embeddings, overrides and isolates are shown as their codes.
    assert printable("pay \u202eevil\u202c now") == "pay \\u202eevil\\u202c now"
    for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]:
        assert printable(chr(code)) == f"\\u{code:04x}"
    # The zero-width joiner holds emoji sequences (and some scripts) together, and the marks
    # steer only the punctuation beside them: right-to-left text needs both, so they stay.
    family = "\U0001f469\u200d\U0001f467"
    assert printable(family) == family
    hebrew = "\u05e9\u05dc\u05d5\u05dd\u200f!\u200e"
    assert printable(hebrew) == hebrew
    assert printable("\x1b[2J\x9b") == "\\x1b[2J\\x9b"


def test_fit_pads_or_cuts_to_exactly_its_width() -> None:
    assert fit("ana", 6) == "ana   "
    assert fit("Ana Pérez-Villalobos", 8) == "Ana Pér…"
    assert fit("客服人员", 5) == "客服…"  # Two cells each: the … takes the last.
    assert all(cells(fit(text, 7)) == 7 for text in ("", "x", "客服人员客服", "a客b服c人d员"))
