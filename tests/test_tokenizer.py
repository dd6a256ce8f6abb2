"""The tokenizer: English words without stop words, punctuation splits, Unicode words, CJK grams."""

from chatbot.retrieval.tokenizer import tokenize


def test_english_lowercases_drops_stop_words_and_splits_on_punctuation() -> None:
    assert tokenize("I was charged TWICE for the same ride, can I get my money back?") == [
        "charged", "twice", "ride", "get", "money", "back",
    ]  # fmt: skip


def test_hyphens_and_apostrophes_split_words() -> None:
    assert tokenize("The e-bike's 45-minute pass") == ["e", "bike", "45", "minute", "pass"]


def test_unicode_words_are_kept_whole() -> None:
    assert tokenize("Café naïve Straße") == ["café", "naïve", "strasse"]


def test_full_width_letters_are_normalised() -> None:
    assert tokenize("ＲＥＦＵＮＤ") == ["refund"]


def test_chinese_is_indexed_as_characters_plus_bigrams() -> None:
    assert tokenize("退款时间") == ["退", "款", "时", "间", "退款", "款时", "时间"]


def test_mixed_chinese_and_english() -> None:
    terms = tokenize("我被扣了两次款 refund!")
    assert "两次" in terms and "扣" in terms and terms[-1] == "refund"
    assert "，" not in terms


def test_a_single_cjk_character_has_no_bigram() -> None:
    assert tokenize("款") == ["款"]


def test_only_stop_words_and_punctuation_give_nothing() -> None:
    assert tokenize("and the, of it?!") == []
