from __future__ import annotations

from duocthu.providers.rerank import KeepOrderReranker, LexicalReranker


def test_free_form_route_reranks_to_top_6_then_packs(fixture_retrieval):
    fixture_retrieval.reranker = LexicalReranker()
    result = fixture_retrieval.retrieve_framed("thuoc_a", None, "thuốc A có gây buồn nôn không")
    assert result.route == "free_form" and len(result.hits) <= 6
    assert result.hits[0].chunk.section_key == "tac_dung_khong_mong_muon"
    assert result.pack.max_tokens == 6000


def test_keep_order_reranker_still_caps(fixture_retrieval):
    fixture_retrieval.reranker = KeepOrderReranker()
    result = fixture_retrieval.retrieve_framed("thuoc_a", None, "thuốc A có gây buồn nôn không")
    assert [h.chunk.section_key for h in result.hits][:2] == ["ten_chung_quoc_te", "ma_atc"]
    assert len(result.hits) == 6


def test_overview_is_not_reranked(fixture_retrieval):
    fixture_retrieval.reranker = LexicalReranker()
    result = fixture_retrieval.retrieve_framed("thuoc_a", None, "buồn nôn", is_overview=True)
    assert result.route == "overview" and all(h.route == "drug" for h in result.hits)
