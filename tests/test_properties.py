"""Property-based tests (hypothesis) for folding, tokens, phrase matching, resolver, chunker, packing."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from duocthu.chunker import chunk_section
from duocthu.corpus import parse_monograph
from duocthu.retrieval.packing import pack_evidence
from duocthu.sections import _phrases_longest_first, resolve_section_match
from duocthu.text import count_tokens, find_phrase, fold, folded_words, normalize
from duocthu.types import Chunk, ChunkKind, Hit, ScoreKind

from .test_corpus import REQUIRED_BODY, monograph_text

VIETNAMESE = "aăâbcdđeêghiklmnoôơpqrstuưvxyàáảãạằắẳẵặầấẩẫậèéẻẽẹềếểễệìíỉĩịòóỏõọồốổỗộờớởỡợùúủũụừứửữựỳýỷỹỵ"
vi_word = st.text(alphabet=VIETNAMESE + VIETNAMESE.upper(), min_size=1, max_size=8)
vi_text = st.lists(vi_word, min_size=0, max_size=30).map(" ".join)


@pytest.mark.slow  # hypothesis over Vietnamese text (~5 s)
@given(st.text())
def test_fold_is_ascii_for_vietnamese_and_idempotent(text):
    assert fold(fold(text)) == fold(text)
    assert "đ" not in fold(text) and "Đ" not in fold(text)


@given(vi_text)
def test_folded_vietnamese_is_plain_ascii(text):
    assert fold(text).isascii()


@given(st.text())
def test_normalize_is_idempotent_and_nfd_insensitive(text):
    once = normalize(text)
    assert normalize(once) == once
    assert normalize(unicodedata.normalize("NFD", text)) == once


@given(vi_text)
def test_tokens_have_no_spaces_or_punctuation(text):
    for token in folded_words(text + ", ; . ?"):
        assert token and token.isalnum() or "_" in token


@given(st.lists(vi_word, min_size=1, max_size=12), st.lists(vi_word, min_size=1, max_size=3))
def test_phrase_match_never_crosses_a_word_boundary(words, phrase):
    haystack = folded_words(" ".join(words))
    needle = folded_words(" ".join(phrase))
    position = find_phrase(haystack, needle)
    if position >= 0:
        assert haystack[position : position + len(needle)] == needle
    glued = folded_words("".join(words))  # one long word: a multi-word phrase can never match inside it
    if len(needle) > 1:
        assert find_phrase(glued, needle) == -1


phrases = [entry for entry in _phrases_longest_first()]


@given(st.lists(st.sampled_from(phrases), min_size=1, max_size=3), st.lists(vi_word, max_size=5))
def test_resolver_longest_phrase_always_wins(chosen, filler):
    question = " ".join([*filler, *(p[1] for p in chosen)])
    match = resolve_section_match(question)
    assert match is not None
    longest = max(len(p[0]) for p in chosen)
    assert len(folded_words(match.phrase)) >= longest


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(vi_word, min_size=3, max_size=25).map(lambda w: " ".join(w).capitalize() + "."),
                min_size=1, max_size=40),
       st.integers(min_value=10, max_value=400))
def test_chunker_concatenated_parts_equal_section_text(sentences, max_tokens):
    paragraph = " ".join(sentences)
    body = REQUIRED_BODY.replace("Nội dung mục Dược động học.", paragraph)
    mono = parse_monograph(Path("thuoc_x.md"), monograph_text(body=body))
    section = mono.section("duoc_dong_hoc")
    parts = chunk_section(mono, section, max_tokens=max_tokens)
    assert " ".join(p.text for p in parts).split() == section.text.split()
    for part in parts:
        assert count_tokens(part.text) <= max_tokens or len(part.text.split(". ")) == 1 or part.text.count(".") <= 1


def _hit(i: int, text: str) -> Hit:
    chunk = Chunk(f"d__s__{i}", "d", "D", "s", "S", i, ChunkKind.PROSE, text, fold(text), ("p",))
    return Hit(chunk, 1.0, ScoreKind.EXACT, "section")


@given(st.lists(vi_text, max_size=20), st.integers(min_value=0, max_value=300))
def test_packing_never_exceeds_the_budget_and_never_cuts(texts, budget):
    hits = [_hit(i, t) for i, t in enumerate(texts)]
    pack = pack_evidence(hits, budget)
    assert pack.tokens_used <= budget
    assert sum(count_tokens(h.text) for h in pack.hits) == pack.tokens_used
    assert all(h in hits for h in pack.hits)  # whole blocks, unchanged
    assert len(pack.hits) + len(pack.omitted_evidence_ids) == len(hits)
    order = [hits.index(h) for h in pack.hits]
    assert order == sorted(order)
