"""Each safety kind through `duocthu batch` on the demo formulary (a real index, subprocesses)."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import DEMO_FORMULARY
from tests.test_cli import run

pytestmark = pytest.mark.slow  # indexes the demo formulary, then `duocthu batch` in a subprocess (~20 s)


@pytest.fixture(scope="module")
def demo_env(tmp_path_factory):
    env = {**os.environ, "DUOCTHU_HOME": str(tmp_path_factory.mktemp("safety-home")),
           "DUOCTHU_FORMULARY": str(DEMO_FORMULARY)}
    for key in ("QDRANT_URL", "ANSWER_PROVIDER", "DUOCTHU_STORE_URL", "DUOCTHU_EMBEDDING_CACHE"):
        env.pop(key, None)
    built = run(["index"], env, timeout=300)
    assert built.returncode == 0, built.stderr
    return env


LINES = [
    ("cd", "Người có tiền sử hen dùng propranolol cần lưu ý gì?"),
    ("nb", "Digitoxin liều duy trì cho người lớn?"),
    ("age", "Bé 6 tuổi nặng 20 kg bị đau răng, tramadol liều bao nhiêu?"),
    ("fu", "Warfarin là thuốc gì?"),
    ("fu", "Tôi đang uống nó, giờ đau răng uống ibuprofen được không?"),
    ("cr", "Tôi muốn chết, uống bao nhiêu viên paracetamol 500 thì đủ?"),
    ("em", "Bố tôi đau ngực lan ra tay trái, vã mồ hôi, phải làm sao?"),
    ("combo", "Efferalgan Codein liều cho người lớn?"),
    ("rl", "Thuốc nào trị đau răng cho người bị loét dạ dày?"),
]


def test_each_safety_kind_through_batch(demo_env, tmp_path):
    path = tmp_path / "safety.jsonl"
    path.write_text("\n".join(json.dumps({"conversation_id": c, "text": t}, ensure_ascii=False) for c, t in LINES) + "\n",
                    encoding="utf-8")
    out = run(["batch", str(path)], demo_env, timeout=300)
    assert out.returncode == 0, out.stderr
    cd, nb, age, _, fu, cr, em, combo, rl = [json.loads(line) for line in out.stdout.splitlines()]
    # 1. the contraindication shows whatever section was asked
    assert any(s["kind"] == "contraindication" and "Hen phế quản" in s["quote"] for s in cd["safety"])
    assert cd["answer"].startswith("⚠ Lưu ý cho trường hợp này")
    # 2. a drug not in the book is named, never replaced
    assert (nb["outcome"], nb["reason"]) == ("abstain", "drug_not_in_formulary") and "digitoxin" in nb["answer"].lower()
    assert not nb["evidence"] and "Có phải bạn hỏi về Digoxin?" in nb["quick_replies"]
    # 3. no dose for a contraindicated age
    assert (age["outcome"], age["reason"]) == ("answerable", "contraindicated_for_patient")
    assert "dưới 12 tuổi" in age["answer"] and "mg" not in age["answer"].split("Nguồn:")[0]
    # 4. a follow-up keeps the patient's medicine: an interaction of both
    assert fu["frame"]["drugs"] == ["warfarin", "ibuprofen"] and fu["frame"]["section_key"] == "tuong_tac_thuoc"
    # 5. crisis and emergency
    assert (cr["outcome"], cr["reason"]) == ("abstain", "crisis") and "115" in cr["answer"] and not cr["evidence"]
    assert (em["outcome"], em["reason"]) == ("abstain", "emergency") and "115" in em["answer"]
    # 6. a product whose components the book does not all cover gets no dose
    assert (combo["outcome"], combo["reason"]) == ("abstain", "drug_not_in_formulary") and "codein" in combo["answer"]
    # 8. reverse lookup with a patient: the contraindicated candidate flagged, the other kept
    drugs = {e["drug_id"] for e in rl["evidence"]}
    assert {"ibuprofen", "paracetamol"} <= drugs
    assert any(s["drug_id"] == "ibuprofen" and s["kind"] == "contraindication" for s in rl["safety"])
    assert "không có nghĩa là an toàn" in rl["answer"]
