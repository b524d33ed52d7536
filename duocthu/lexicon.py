"""The lexicon: every word list the understanding reads, as data, each phrase once, each with its source.

``data/understanding/lexicon.yaml`` names *concepts* (a question asking for a quantity, the words of
a section's name, a self-harm signal …). A concept lists its own phrases, may ``include`` other
concepts, and may ``compose`` phrases from parts that are concepts themselves (a choice between two
times, "nobody needs me" with any pronoun); a phrase is written once in the whole file (the compiler
refuses a second listing; another concept that holds it is named in its ``also``), so two word lists
can no longer drift apart. Each concept says where its words come from (``book``:
the monographs' wording; ``synonyms``: a reviewed list of lay and English names; ``clinical``: a
clinical reference; ``project``: how questions are put, written by the project), and a phrase that
was added after reading an evaluation part's failures says so (``eval:<set>/<part>``): the guard in
``tests/test_lexicon.py`` fails when such a phrase of three or more words occurs verbatim in a test
sentence.

Code reads a concept by name, compiled once::

    LEXICON.phrases("quantity_asked")      # the phrases, includes first, in file order
    LEXICON.matches("quantity_asked", text)  # word-anchored, accent-aware (see text.PhraseSet)
    LEXICON.mapping("respellings")         # a table of word → word
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from difflib import get_close_matches
from functools import cached_property, lru_cache
from itertools import product
from pathlib import Path
from typing import Any

import yaml

from duocthu.config import PROJECT_ROOT
from duocthu.errors import DuocthuError
from duocthu.text import PhraseSet, fold, normalize

LEXICON_PATH = PROJECT_ROOT / "data" / "understanding" / "lexicon.yaml"
SOURCES = ("book", "synonyms", "clinical", "project")


class LexiconError(DuocthuError):
    """The lexicon file is malformed: a concept unknown, a phrase listed twice, a source not allowed."""


@dataclass(frozen=True)
class Phrase:
    text: str
    concept: str  # the concept it is listed under
    source: str  # one of SOURCES, or "eval:<set>/<part>" for a phrase added after reading that part
    also: tuple[str, ...] = ()  # other concepts that hold it (written once, here)


@dataclass(frozen=True)
class Concept:
    """A named list of phrases (its own, after those of the concepts it includes)."""

    name: str
    about: str
    source: str
    own: tuple[Phrase, ...]
    includes: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()

    @cached_property
    def phrase_set(self) -> PhraseSet:
        return PhraseSet(self.phrases)

    @cached_property
    def folded_words(self) -> frozenset[str]:
        return frozenset(fold(p) for p in self.phrases)


@dataclass
class Lexicon:
    """Compiled concepts and word mappings; built once per process from the YAML file."""

    concepts: dict[str, Concept]
    mappings: dict[str, dict[str, str]] = field(default_factory=dict)
    repeats: list[str] = field(default_factory=list)  # phrases listed more than once (a test keeps it empty)

    def concept(self, name: str) -> Concept:
        try:
            return self.concepts[name]
        except KeyError:
            near = get_close_matches(name, list(self.concepts), n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise LexiconError(f"no concept {name!r} in the lexicon{hint}") from None

    def phrases(self, name: str) -> tuple[str, ...]:
        return self.concept(name).phrases

    def words(self, name: str) -> frozenset[str]:
        """The concept's phrases folded (for word lists compared as folded words)."""
        return self.concept(name).folded_words

    def matches(self, name: str, text: str) -> bool:
        return self.concept(name).phrase_set.matches(text)

    def find(self, name: str, text: str) -> list[tuple[int, int, str]]:
        return self.concept(name).phrase_set.find(text)

    def group(self, prefix: str) -> dict[str, tuple[str, ...]]:
        """Concepts named ``<prefix>.<key>``, as ``{key: phrases}`` in file order (e.g. each section's names)."""
        found = {name.split(".", 1)[1]: c.phrases for name, c in self.concepts.items() if name.startswith(prefix + ".")}
        if not found:
            raise LexiconError(f"no concept group {prefix!r} in the lexicon")
        return found

    def mapping(self, name: str) -> dict[str, str]:
        try:
            return self.mappings[name]
        except KeyError:
            raise LexiconError(f"no mapping {name!r} in the lexicon") from None

    def every_phrase(self) -> Iterable[Phrase]:
        for concept in self.concepts.values():
            yield from concept.own


def _phrase(item: Any, concept: str, default_source: str) -> Phrase:
    if isinstance(item, str):
        return Phrase(item, concept, default_source)
    if isinstance(item, Mapping) and "p" in item:
        return Phrase(str(item["p"]), concept, str(item.get("source", default_source)),
                      tuple(str(c) for c in item.get("also") or ()))
    raise LexiconError(f"concept {concept!r}: a phrase must be a string or {{p: …, source: …, also: […]}}, "
                       f"not {item!r}")


def _check_source(source: str, where: str) -> None:
    if source not in SOURCES and not source.startswith("eval:"):
        raise LexiconError(f"{where}: source {source!r} is not one of {', '.join(SOURCES)} or eval:<set>/<part>")


def compile_lexicon(data: Mapping[str, Any], strict: bool = True) -> Lexicon:
    """Concepts with their includes and ``also`` tags resolved.

    A phrase is listed once; another concept that holds it is named in the phrase's ``also``. Listing it a
    second time is an error (``strict``) or a recorded repeat, except for a declared homograph (one spelling,
    two words: "hông" the hip and "hông" for "không").
    """
    raw = dict(data.get("concepts") or {})
    homographs = {normalize(str(k)).lower() for k in data.get("homographs") or {}}
    repeats: list[str] = []
    owners: dict[str, str] = {}
    own: dict[str, tuple[Phrase, ...]] = {}
    tagged: dict[str, list[str]] = {name: [] for name in raw}
    for name, spec in raw.items():
        source = str(spec.get("source", "project"))
        _check_source(source, f"concept {name!r}")
        phrases = tuple(_phrase(item, name, source) for item in spec.get("phrases") or ())
        for phrase in phrases:
            _check_source(phrase.source, f"concept {name!r}, phrase {phrase.text!r}")
            key = normalize(phrase.text).lower()
            if key in owners and key not in homographs:
                repeats.append(f"{phrase.text!r} in {owners[key]!r} and {name!r}")
                if strict:
                    raise LexiconError(f"phrase {phrase.text!r} is listed in {owners[key]!r} and {name!r}: "
                                       "list it once and name the other concept in its 'also'")
            owners[key] = name
            for other in phrase.also:
                if other not in tagged:
                    raise LexiconError(f"phrase {phrase.text!r} of {name!r}: 'also' names unknown concept {other!r}")
                tagged[other].append(phrase.text)
        own[name] = phrases

    resolved: dict[str, tuple[str, ...]] = {}

    def resolve(name: str, trail: tuple[str, ...] = ()) -> tuple[str, ...]:
        if name in resolved:
            return resolved[name]
        if name not in raw:
            raise LexiconError(f"concept {trail[-1]!r} includes unknown concept {name!r}")
        if name in trail:
            raise LexiconError(f"concepts include each other: {' → '.join((*trail, name))}")
        phrases: list[str] = []
        for included in raw[name].get("include") or ():
            phrases += resolve(str(included), (*trail, name))
        phrases += [p.text for p in own[name]] + tagged[name]
        for parts in raw[name].get("compose") or ():
            # phrases built of parts, each a concept or a list of words: [không ai, chẳng ai] × [cần] × i_me
            alternatives = [tuple(str(w) for w in part) if isinstance(part, list) else resolve(str(part), (*trail, name))
                            for part in parts]
            phrases += [" ".join(words) for words in product(*alternatives)]
        resolved[name] = tuple(dict.fromkeys(phrases))
        return resolved[name]

    concepts = {
        name: Concept(name, str(spec.get("about", "")), str(spec.get("source", "project")), own[name],
                      tuple(str(i) for i in spec.get("include") or ()), resolve(name))
        for name, spec in raw.items()
    }
    mappings = {str(name): {str(k): str(v) for k, v in (table or {}).items()}
                for name, table in (data.get("mappings") or {}).items()}
    return Lexicon(concepts, mappings, repeats)


@lru_cache(maxsize=4)
def load_lexicon(path: Path = LEXICON_PATH) -> Lexicon:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise LexiconError(f"cannot read the lexicon {path}: {exc}") from exc
    return compile_lexicon(data, strict=False)


LEXICON = load_lexicon()
