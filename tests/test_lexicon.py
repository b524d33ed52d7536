"""The lexicon: it compiles, each phrase is listed once, every concept is used, and no phrase fits the tests."""

from __future__ import annotations

import json
import re

import pytest

from duocthu.config import PROJECT_ROOT
from duocthu.lexicon import LEXICON, LexiconError, compile_lexicon
from duocthu.text import words

EVAL_DIR = PROJECT_ROOT / "data" / "eval"
BOOK_DIR = PROJECT_ROOT / "data" / "formulary"
CODE_DIRS = ("duocthu",)


def test_a_phrase_listed_in_two_concepts_is_refused():
    with pytest.raises(LexiconError, match="listed in"):
        compile_lexicon({"concepts": {"a": {"phrases": ["mấy viên"]}, "b": {"phrases": ["Mấy viên"]}}})


def test_includes_resolve_in_order_and_cycles_are_refused():
    lexicon = compile_lexicon({"concepts": {"a": {"phrases": ["x", "y"]}, "b": {"include": ["a"], "phrases": ["z"]}}})
    assert lexicon.phrases("b") == ("x", "y", "z")
    with pytest.raises(LexiconError, match="include each other"):
        compile_lexicon({"concepts": {"a": {"include": ["b"]}, "b": {"include": ["a"]}}})
    with pytest.raises(LexiconError, match="unknown concept"):
        compile_lexicon({"concepts": {"a": {"include": ["nope"]}}})


def test_sources_are_declared():
    with pytest.raises(LexiconError, match="source"):
        compile_lexicon({"concepts": {"a": {"source": "a blog", "phrases": ["x"]}}})
    assert {p.source.split(":")[0] for p in LEXICON.every_phrase()} <= {"book", "synonyms", "clinical", "project", "eval"}


def test_an_unknown_concept_names_its_neighbours():
    with pytest.raises(LexiconError, match="did you mean"):
        LEXICON.phrases(next(iter(LEXICON.concepts)) + "x")


def _code_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for d in CODE_DIRS for p in (PROJECT_ROOT / d).rglob("*.py"))


def test_every_concept_and_mapping_is_read_by_the_code():
    code = _code_text()
    read = set(re.findall(r"""LEXICON\.\w+\(\s*["']([\w.]+)["']""", code))
    groups = {name.split(".")[0] for name in read}
    unused = [name for name in LEXICON.concepts if name not in read and name.split(".")[0] not in groups
              and not any(name in c.includes for c in LEXICON.concepts.values())]
    unused += [name for name in LEXICON.mappings if name not in read]
    assert not unused, f"concepts nobody reads: {unused}"


def _test_sentences() -> list[str]:
    sentences: list[str] = []
    for path in EVAL_DIR.rglob("test*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            sentences += [turn["text"] for turn in row.get("turns", [])]
            sentences += [row[k] for k in ("question", "condition", "text") if isinstance(row.get(k), str)]
    return [" ".join(words(s)) for s in sentences]


def _book_text() -> str:
    return " ".join(" ".join(words(p.read_text(encoding="utf-8"))) for p in BOOK_DIR.glob("*.md"))


def _occurs(phrase: str, text: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text) is not None


def test_no_phrase_or_exemplar_was_fitted_to_a_test_sentence():
    """A phrase of three or more words added after reading an evaluation part's failures must not occur
    verbatim in any test sentence, unless the book itself says it; the same for intent exemplars."""
    sentences = _test_sentences()
    book = _book_text()
    fitted = []
    for phrase in LEXICON.every_phrase():
        text = " ".join(words(phrase.text))
        if len(text.split()) < 3 or not phrase.source.startswith("eval"):
            continue
        if not _occurs(text, book) and any(_occurs(text, s) for s in sentences):
            fitted.append(f"{phrase.concept}: {phrase.text!r} ({phrase.source})")
    from duocthu.understanding.intent import load_examples

    for example in load_examples():
        text = " ".join(words(example.text))
        if len(text.split()) >= 3 and any(_occurs(text, s) for s in sentences) and not _occurs(text, book):
            fitted.append(f"exemplar: {example.text!r}")
    assert not fitted, "phrases that occur verbatim in a test sentence:\n" + "\n".join(fitted)
