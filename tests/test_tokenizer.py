"""The tokenizer: English words without stop words, stemmed; punctuation splits, Unicode words,
CJK grams; and the batch encoder the index builds with, which must agree with it exactly."""

import random
import unicodedata

import numpy as np
import pytest

import chatbot.retrieval.tokenizer as tokenizer_module
from chatbot.retrieval.tokenizer import (
    _TOKEN,
    Analyzer,
    analyzer,
    raw_tokens,
    tokenize,
)


def test_english_lowercases_drops_stop_words_and_splits_on_punctuation() -> None:
    assert tokenize("I was charged TWICE for the same ride, can I get my money back?") == [
        "charg", "twice", "ride", "get", "money", "back",
    ]  # fmt: skip
    assert tokenize("I was charged TWICE for the same ride", stem=False) == [
        "charged", "twice", "ride",
    ]  # fmt: skip


def test_stemming_matches_plurals_and_verb_forms() -> None:
    for a, b in [("bicycle", "Bicycles"), ("dog", "dogs"), ("refund", "refunded"),
                 ("charge", "charging"), ("battery", "batteries"), ("ride", "riding")]:  # fmt: skip
        assert tokenize(a) == tokenize(b), (a, b)
        assert tokenize(a, stem=False) != tokenize(b, stem=False)


def test_stop_words_are_dropped_before_stemming() -> None:
    # "doing" is a stop word; its stem "do" would be too, but "does"/"doe" must not leak in.
    assert tokenize("what are you doing, does it") == []


def test_hyphens_and_apostrophes_split_words() -> None:
    assert tokenize("The e-bike's 45-minute pass", stem=False) == [
        "e", "bike", "45", "minute", "pass",
    ]  # fmt: skip
    assert tokenize("The e-bikes' 45-minute passes") == ["e", "bike", "45", "minut", "pass"]


def test_unicode_words_are_kept_whole() -> None:
    assert tokenize("Café naïve Straße", stem=False) == ["café", "naïve", "strasse"]


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


def test_ascii_fast_path_splits_exactly_like_the_unicode_pattern() -> None:
    # Random texts over every ASCII character: the split fast path must give the words that
    # NFKC, casefold and the Unicode pattern (the path for non-ASCII text) give.
    rng = random.Random(5)
    alphabet = [chr(c) for c in range(1, 128)]
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        slow = _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())
        assert raw_tokens(text) == slow, text
        assert Analyzer().encoder({}).encode([text])[1].tolist() == [len(tokenize(text))]


@pytest.mark.parametrize("stem", [True, False])
def test_batch_encoding_equals_tokenizing_each_text(stem: bool) -> None:
    texts = [
        "Returning a bike late: each extra 30 minutes is charged.",
        "",
        "退款会在三到五个工作日内退回。 Refunds take 3 to 5 days!",
        "ＲＥＦＵＮＤ the E-BIKES, riders' helmets; the the the",
        "款",
        "Café naïve Straße — returned, returning, returns",
    ]
    a = Analyzer(stem=stem)
    term_ids: dict[str, int] = {}
    encoder = a.encoder(term_ids)
    ids, lengths = encoder.encode(texts[:3])
    more_ids, more_lengths = encoder.encode(texts[3:])  # A second chunk reuses what it learnt.
    names = list(term_ids)
    expected = [a.tokenize(t) for t in texts]
    got = [names[i] for i in np.concatenate([ids, more_ids]).tolist()]
    assert got == [t for doc in expected for t in doc]
    assert np.concatenate([lengths, more_lengths]).tolist() == [len(d) for d in expected]
    # Ids are numbered in order of first appearance, as BM25Okapi orders its vocabulary.
    assert names == list(dict.fromkeys(t for doc in expected for t in doc))


def test_the_token_cache_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound is read as the cache fills: a small one shows the same (the shipped bound,
    # CACHE_SIZE words, took a second of CPU to fill).
    monkeypatch.setattr(tokenizer_module, "CACHE_SIZE", 1000)
    a = Analyzer(stem=True)
    for i in range(1000 + 10):
        a.terms_of(f"w{i}")
    assert 0 < len(a._cache) <= 1000
    assert a.terms_of("bicycles") == ("bicycl",)


def test_shared_analyzers_per_setting() -> None:
    assert analyzer(stem=True) is analyzer(stem=True)
    assert analyzer(stem=True).tokenize("dogs") == ["dog"]
    assert analyzer(stem=False).tokenize("dogs") == ["dogs"]


def _random_ascii_chunks(seed: int) -> list[list[str]]:
    """Chunks of ASCII texts with punctuation, mixed case, digits, repeated words and words
    longer than the 16 bytes the batch path reads, and one chunk that is not ASCII."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefgHIJKLmnop0123") for _ in range(rng.randint(1, 40)))
             for _ in range(60)] + ["the", "and", "riding", "rides", "bicycles"]  # fmt: skip
    chunks = []
    for _ in range(5):
        chunks.append(
            [" ".join(rng.choice(words) + rng.choice(["", ",", ".", "'s", "-x", "!!"])
                      for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(1, 30))]
        )  # fmt: skip
    chunks.insert(2, ["Café naïve " + rng.choice(words), "退款时间 " + rng.choice(words)])
    return chunks


def _check_chunks(chunks: list[list[str]], stem: bool) -> None:
    a = Analyzer(stem=stem)
    term_ids: dict[str, int] = {}
    encoder = a.encoder(term_ids)
    encoded = [encoder.encode(chunk) for chunk in chunks]
    names = list(term_ids)
    expected = [a.tokenize(t) for chunk in chunks for t in chunk]
    got = [names[i] for i in np.concatenate([ids for ids, _ in encoded]).tolist()]
    assert got == [t for doc in expected for t in doc]
    lengths = np.concatenate([lengths for _, lengths in encoded]).tolist()
    assert lengths == [len(d) for d in expected]
    assert names == list(dict.fromkeys(t for doc in expected for t in doc))


@pytest.mark.parametrize("seed", range(4))
def test_ascii_chunks_encode_like_tokenizing_each_text(seed: int) -> None:
    # The batch path for ASCII (numpy split, hashed grouping, a table of known tokens) must give
    # what tokenizing each text does, across chunks and after a chunk that is not ASCII.
    _check_chunks(_random_ascii_chunks(seed), stem=seed % 2 == 0)


def test_hash_collisions_still_encode_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    # With a one-bit hash nearly every pair of tokens collides: chunks fall back to the
    # token-by-token path, and single-token chunks collide with the known table.
    monkeypatch.setattr(tokenizer_module, "HASH_BITS", 2)
    _check_chunks(_random_ascii_chunks(7), stem=True)
    words = ["bike", "refund", "helmet", "late", "fee", "bike", "dock", "refund", "pass"]
    _check_chunks([[w] for w in words], stem=True)


@pytest.mark.parametrize("seed", range(3))
def test_chinese_and_mixed_chunks_encode_like_tokenizing_each_text(seed: int) -> None:
    # CJK runs are expanded to characters and bigrams in numpy, words of other scripts one by
    # one, in one sequence: term ids must still come in order of first appearance.
    rng = random.Random(seed)
    han = [chr(c) for c in rng.sample(range(0x4E00, 0x4E40), 12)] + ["\U00020001", "か"]
    pieces = [*han, "，", "。", " refund ", " Bikes ", " Café ", " the ", "ＡＢ", " 42 "]
    if seed == 2:
        pieces.append("\x00")  # The chunk is then normalised text by text.
    chunks = [
        ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
         for _ in range(rng.randint(1, 20))] for _ in range(4)
    ]  # fmt: skip
    _check_chunks(chunks, stem=seed != 1)
