"""Realistic questions for each route, from ``data/eval/*.jsonl`` when present.

A turn is filed under the route it *actually* took (the agent's reply), not the one intended,
so a question that lands elsewhere cannot inflate or hide a route's figure; the report says how
many landed where. Built-in lists cover each route when an evaluation file is missing.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROUTES = ("section", "overview", "free_form", "interaction", "reverse_lookup", "clarify")

# Built-in questions, written for the demo formulary's drugs.
SECTION = (
    "Chống chỉ định của ibuprofen là gì?", "Tác dụng phụ của amoxicilin?", "Liều dùng amoxicilin cho người lớn?",
    "Paracetamol có dùng được cho phụ nữ có thai không?", "Metformin tương tác với thuốc nào?",
    "Quá liều paracetamol xử trí thế nào?", "Omeprazol bảo quản như thế nào?", "Cơ chế tác dụng của losartan?",
    "Chỉ định của azithromycin là gì?", "Thận trọng khi dùng warfarin?", "Cetirizin có dùng khi cho con bú không?",
    "Dạng thuốc và hàm lượng của amlodipin?", "Thận trọng gì khi người bị loét dạ dày dùng ibuprofen?",
    "chong chi dinh cua diclofenac", "Dược động học của digoxin?",
)
OVERVIEW = (
    "Paracetamol", "ibuprofen", "Amoxicilin là thuốc gì?", "Cho tôi biết về metformin", "Thông tin về Panadol",
    "Warfarin là gì?", "Giới thiệu về omeprazol", "losartan", "Tìm hiểu về azithromycin", "Cetirizin là thuốc gì?",
)
FREE_FORM = (
    "Ibuprofen có gây buồn ngủ không?", "Uống paracetamol lúc đói được không?", "Metformin có làm hạ đường huyết không?",
    "Amoxicilin có gây tiêu chảy không?", "Omeprazol uống trước hay sau ăn?", "Losartan có làm tăng kali máu không?",
    "Warfarin có ảnh hưởng đến vitamin K không?", "Atorvastatin có gây đau cơ không?",
    "Diclofenac có hại dạ dày không?", "Prednisolon có làm tăng đường huyết không?",
)
INTERACTION = (
    "Dùng chung ibuprofen với aspirin được không?", "Warfarin và aspirin có tương tác không?",
    "Uống paracetamol cùng ibuprofen được không?", "Clopidogrel dùng chung với omeprazol được không?",
    "Simvastatin với clarithromycin có tương tác không?", "Metformin và furosemid có tương tác gì?",
    "Digoxin dùng cùng furosemid được không?", "Warfarin kết hợp với metronidazol có sao không?",
    "Tramadol uống chung với sertralin được không?", "Enalapril và spironolacton có dùng chung được không?",
)
REVERSE_TEMPLATES = ("Thuốc nào điều trị {c}?", "Có thuốc nào trị {c} không?", "Bị {c} thì dùng thuốc gì?")
REVERSE_CONDITIONS = ("tăng huyết áp", "đau thắt ngực", "suy tim", "đái tháo đường", "động kinh", "gút", "hen phế quản")
CLARIFY = (
    "Liều paracetamol cho bé?", "Liều ibuprofen là bao nhiêu?", "Thuốc này dùng thế nào?", "Cho bé uống mấy ml?",
    "Liều amoxicilin cho trẻ?", "Uống mấy viên một ngày?", "Liều dùng cefalexin cho bé bao nhiêu?",
    "Tôi nên uống bao nhiêu?",
)
FOLLOW_UPS = (  # short conversations for the batch: each list is one conversation
    ("Liều paracetamol cho bé?", "Bé 5 tuổi, nặng 18 kg"),
    ("Chống chỉ định của ibuprofen là gì?", "Còn tác dụng phụ thì sao?", "còn diclofenac thì sao?"),
    ("Thuốc nào điều trị tăng huyết áp?", "Chống chỉ định của amlodipin?"),
    ("Amoxicilin là thuốc gì?", "Liều dùng cho người lớn?"),
    ("Dùng chung ibuprofen với aspirin được không?",),
    ("Xin chào", "Metformin có làm hạ đường huyết không?"),
)


@dataclass(frozen=True)
class QuestionSet:
    by_route: dict[str, list[str]]  # intended route → questions
    sources: dict[str, str]  # route → where its questions came from

    def all(self) -> list[str]:
        return [q for route in ROUTES for q in self.by_route.get(route, [])]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _spread(rows: Sequence[Any], n: int, seed: int = 11) -> list[Any]:
    rows = list(rows)
    return rows if len(rows) <= n else random.Random(seed).sample(rows, n)


def load_questions(eval_dir: Path, known_drugs: Iterable[str], per_route: int = 24) -> QuestionSet:
    """Questions per intended route, restricted to drugs the formulary has."""
    known = set(known_drugs)
    by_route: dict[str, list[str]] = {}
    sources: dict[str, str] = {}

    rows = [r for r in _jsonl(eval_dir / "section_routing" / "dev.jsonl") if r.get("drug_id") in known]
    pooling = [r for r in _jsonl(eval_dir / "pooling" / "dev.jsonl") if r.get("drug_id") in known]
    if rows:
        n_pooling = min(len(pooling), per_route // 6)  # a few "thận trọng" questions that exercise pooling
        by_route["section"] = [r["question"] for r in _spread(rows, per_route - n_pooling)]
        by_route["section"] += [r["question"] for r in _spread(pooling, n_pooling)]
        sources["section"] = "data/eval/section_routing/dev.jsonl + pooling/dev.jsonl"
    else:
        by_route["section"] = list(SECTION)
        sources["section"] = "built-in list (bench/questions.py)"

    conditions = [r["condition"] for r in _jsonl(eval_dir / "indications" / "consistency.jsonl") if r.get("kind") == "real"]
    if conditions:
        sources["reverse_lookup"] = "data/eval/indications/consistency.jsonl (real conditions) in 3 question templates"
    else:
        conditions = list(REVERSE_CONDITIONS)
        sources["reverse_lookup"] = "built-in conditions (bench/questions.py) in 3 question templates"
    picked = _spread(conditions, per_route)
    by_route["reverse_lookup"] = [REVERSE_TEMPLATES[i % len(REVERSE_TEMPLATES)].format(c=c) for i, c in enumerate(picked)]

    for route, builtin in (("overview", OVERVIEW), ("free_form", FREE_FORM), ("interaction", INTERACTION),
                           ("clarify", CLARIFY)):
        by_route[route] = list(builtin)
        sources[route] = "built-in list (bench/questions.py)"

    scenarios = _jsonl(eval_dir / "agent" / "dev.jsonl")
    if scenarios:
        sources["batch"] = "data/eval/agent/dev.jsonl conversations, repeated"
    else:
        sources["batch"] = "built-in conversations + every route's questions (bench/questions.py), repeated"
    return QuestionSet(by_route, sources)


def batch_conversations(eval_dir: Path, questions: QuestionSet) -> list[list[str]]:
    """Conversations (lists of turns) to repeat up to the batch size."""
    scenarios = _jsonl(eval_dir / "agent" / "dev.jsonl")
    if scenarios:
        return [[turn["text"] for turn in s["turns"]] for s in scenarios]
    return [list(c) for c in FOLLOW_UPS] + [[q] for q in questions.all()]


def batch_lines(conversations: Sequence[Sequence[str]], n_turns: int) -> list[dict[str, str]]:
    """``{"conversation_id", "text"}`` records, whole conversations repeated until ``n_turns``."""
    lines: list[dict[str, str]] = []
    round_ = 0
    while len(lines) < n_turns:
        for number, turns in enumerate(conversations):
            cid = f"bench-{round_}-{number}"
            for text in turns:
                if len(lines) >= n_turns:
                    return lines
                lines.append({"conversation_id": cid, "text": text})
        round_ += 1
    return lines


def actual_route(reply: Any) -> str:
    """The route a reply took: its retrieval route, ``clarify``, or ``other`` (abstain, smalltalk…)."""
    if reply.outcome == "clarify":
        return "clarify"
    if reply.outcome in ("answerable", "verify_pdf") and reply.route in ROUTES:
        return str(reply.route)
    return "other"
