"""Compute the *consistency* labels of indications/consistency.jsonl from the Chỉ định sections.

These labels are made by the same phrase rule as ``find_by_indication``, so they check that the
keyword pass is consistent with its own rule — not that it is right. Hand labels (dev.jsonl,
test.jsonl in this folder) measure accuracy.

Rule (exact): a drug is expected for a condition iff its Chỉ định section text, folded
(lower-case, diacritics removed, đ→d) and split into word tokens with \\w+ (duocthu.text.folded_words),
contains the condition's folded tokens as one contiguous sequence (duocthu.text.find_phrase).
`nonsense` conditions must match no drug under the same rule (asserted).

Run from the repository root once every monograph exists:
    .venv/bin/python data/eval/indications/make_consistency_labels.py   # writes consistency.jsonl
    .venv/bin/python data/eval/indications/make_consistency_labels.py --show     # also prints each match in context
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from duocthu.corpus import load_formulary
from duocthu.text import find_phrase, folded_words, normalize

ROOT = Path(__file__).resolve().parents[3]

# Condition phrases as they appear in Chỉ định sections (lower-case). Conditions whose only
# matches were accidental (the phrase inside a longer, unrelated phrase) were dropped after
# reading the matches; see SUMMARY.md.
REAL = """
tăng huyết áp
đau thắt ngực
suy tim
rung nhĩ
nhồi máu cơ tim
huyết khối tĩnh mạch sâu
thuyên tắc phổi
tăng cholesterol máu
rối loạn lipid máu
xơ gan cổ trướng
cường aldosteron
đái tháo đường typ 2
suy giáp
bướu giáp
hen phế quản
bệnh phổi tắc nghẽn mạn tính
viêm mũi dị ứng
mày đay
sốc phản vệ
viêm phổi mắc phải cộng đồng
viêm phế quản
viêm xoang
viêm tai giữa
viêm họng
viêm amidan
nhiễm khuẩn đường tiết niệu
nhiễm khuẩn da và mô mềm
nhiễm khuẩn ổ bụng
viêm màng não
nhiễm khuẩn huyết
lậu không biến chứng
giang mai
bệnh lyme
sốt mò
trứng cá
nhiễm helicobacter pylori
loét dạ dày tá tràng
trào ngược dạ dày thực quản
hội chứng zollinger-ellison
buồn nôn và nôn
nhiễm trichomonas
lỵ amip
viêm âm đạo do vi khuẩn
nhiễm khuẩn kỵ khí
nhiễm nấm candida
viêm màng não do cryptococcus
động kinh
động kinh cục bộ
đau dây thần kinh sinh ba
rối loạn lưỡng cực
trầm cảm
lo âu
mất ngủ
co giật
cai rượu
vảy nến
bệnh bạch cầu cấp
hen ác tính
phù não
suy thượng thận
lupus ban đỏ hệ thống
đau nửa đầu
viêm khớp dạng thấp
thoái hóa khớp
viêm cột sống dính khớp
cơn gút cấp
bệnh gút mạn tính
tăng acid uric máu
đau đầu
đau răng
đau bụng kinh
đau nhẹ đến vừa
đau vừa đến nặng
viêm kết mạc dị ứng
sốt thương hàn
viêm nội tâm mạc nhiễm khuẩn
viêm phổi bệnh viện
hội chứng thận hư
bệnh crohn
rối loạn hoảng sợ
herpes simplex
zona
thủy đậu
nhiễm khuẩn xương và khớp
viêm thận bể thận
rối loạn ám ảnh cưỡng chế
viêm đại tràng do clostridioides difficile
tang huyet ap
hen phe quan
viem mui di ung
dong kinh
nhiem helicobacter pylori
"""

NONSENSE = """
hội chứng mèo kêu ban đêm
viêm não do trăng rằm
đau và sốt cho người
bệnh do dùng thuốc cho người lớn
nhiễm khuẩn của thuốc và trẻ em
hội chứng bàn phím khô
viêm ruột thừa lượng tử
bệnh sợ thứ hai
chứng quên mật khẩu mạn tính
ngứa tai do nghe nhạc buồn
viêm phổi do wifi
suy thận vì xem điện thoại
hoi chung meo keu ban dem
dau va sot cho nguoi
benh gut do an kem
viem xoang do nhac rap
tăng huyết áp ở cây cảnh
đái tháo đường typ 7
nhiễm khuẩn đường tiết niệu của ô tô
loét dạ dày do thất tình
cảm cúm mùa hè ở cá vàng
hội chứng chân không yên vì deadline
dự phòng và điều trị cho
liều thấp ở người lớn và trẻ em
viem nao do trang ram
hoi chung lo lang vi thi cu
"""


def load_conditions(block: str) -> list[str]:
    return [normalize(line.strip()).lower() for line in block.strip().splitlines() if line.strip()]


def expected_drugs(condition: str, chi_dinh: dict[str, list[str]]) -> list[str]:
    phrase = folded_words(condition)
    return sorted(d for d, tokens in chi_dinh.items() if find_phrase(tokens, phrase) >= 0)


def main(show: bool = False) -> None:
    monographs = load_formulary(ROOT / "data" / "formulary")
    chi_dinh = {}
    raw = {}
    for m in monographs:
        section = m.section("chi_dinh")
        if section is not None:
            chi_dinh[m.drug_id] = folded_words(section.text)
            raw[m.drug_id] = section.text
    rows = []
    for condition in load_conditions(REAL):
        drugs = expected_drugs(condition, chi_dinh)
        if not drugs:
            raise SystemExit(f"real condition {condition!r} matches no Chỉ định section")
        rows.append({"condition": condition, "kind": "real", "expected_drugs": drugs})
        if show:
            print(f"\n## {condition} -> {drugs}")
            phrase = folded_words(condition)
            for d in drugs:
                tokens = chi_dinh[d]
                pos = find_phrase(tokens, phrase)
                print(f"   {d}: …{' '.join(tokens[max(0, pos - 6): pos + len(phrase) + 6])}…")
    for condition in load_conditions(NONSENSE):
        drugs = expected_drugs(condition, chi_dinh)
        if drugs:
            raise SystemExit(f"nonsense condition {condition!r} matches {drugs}")
        rows.append({"condition": condition, "kind": "nonsense", "expected_drugs": []})
    out = ROOT / "data" / "eval" / "indications" / "consistency.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        for i, row in enumerate(rows, start=1):
            fh.write(json.dumps({"id": f"ind-{i:03d}", **row}, ensure_ascii=False) + "\n")
    real = sum(r["kind"] == "real" for r in rows)
    print(f"{len(monographs)} monographs; wrote {len(rows)} rows ({real} real, {len(rows) - real} nonsense) to {out}")


if __name__ == "__main__":
    main(show="--show" in sys.argv)
