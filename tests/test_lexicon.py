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


def _test_ngrams(longest: int = 12) -> set[str]:
    """Every run of 3 to ``longest`` words of every test sentence (a phrase "occurs verbatim" when it is one)."""
    grams: set[str] = set()
    for path in EVAL_DIR.rglob("test*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            texts = [turn["text"] for turn in row.get("turns", [])]
            texts += [row[k] for k in ("question", "condition", "text") if isinstance(row.get(k), str)]
            for text in texts:
                tokens = words(text)
                grams.update(" ".join(tokens[i:j]) for i in range(len(tokens))
                             for j in range(i + 3, min(len(tokens), i + longest) + 1))
    return grams


def _book_text() -> str:
    return " ".join(" ".join(words(p.read_text(encoding="utf-8"))) for p in BOOK_DIR.glob("*.md"))


def test_no_phrase_or_exemplar_was_fitted_to_a_test_sentence():
    """A phrase or exemplar of three or more words added after reading an evaluation part's failures must not
    occur verbatim in any test sentence, unless the book itself says it (issue 23's guard against fitting)."""
    grams = _test_ngrams()
    candidates = [(f"{p.concept}: {p.text!r} ({p.source})", " ".join(words(p.text)))
                  for p in LEXICON.every_phrase() if p.source.startswith("eval")]
    from duocthu.understanding.intent import load_examples

    candidates += [(f"exemplar: {e.text!r} ({e.source})", " ".join(words(e.text)))
                   for e in load_examples() if e.source.startswith("eval")]
    hits = [(label, text) for label, text in candidates if len(text.split()) >= 3 and text in grams]
    book = _book_text() if hits else ""
    fitted = [label for label, text in hits if re.search(r"(?<!\w)" + re.escape(text) + r"(?!\w)", book) is None]
    assert not fitted, "phrases that occur verbatim in a test sentence:\n" + "\n".join(fitted)


def test_compose_builds_phrases_from_concepts():
    lexicon = compile_lexicon({"concepts": {
        "nobody": {"phrases": ["không ai", "chẳng ai"]}, "needs": {"phrases": ["cần"]}, "me": {"phrases": ["tôi", "em"]},
        "belonging": {"compose": [["nobody", "needs", "me"]], "phrases": ["là người thừa"]}}})
    assert set(lexicon.phrases("belonging")) == {"là người thừa", "không ai cần tôi", "không ai cần em",
                                                 "chẳng ai cần tôi", "chẳng ai cần em"}
