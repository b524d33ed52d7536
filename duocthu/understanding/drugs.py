"""Honest drug resolution: names, aliases and brands of the book; products; names that are NOT in the book.

Order, on folded word tokens (so "Paracetamol", "paracetamol" and "PARACETAMOL" meet):

1. **Products** of the market lexicon (``data/understanding/products.yaml``): "Efferalgan Codein"
   resolves to its components before "Efferalgan" alone could match paracetamol.
2. **The book's labels** (INN, drug_id, aliases, brands), longest first, as contiguous phrases.
3. **Other medicines** (``data/understanding/other_drugs.yaml``): a name of a real medicine that is
   not in the book is reported by name — never replaced by a book drug that looks alike
   (digitoxin is not digoxin). A look-alike within reach is offered as a suggestion.
4. **Near misses** of a book name (rapidfuzz Levenshtein): one drug close enough → resolved, and
   the reading is recorded so the answer can say "hiểu là …"; several, or only a distant one →
   ambiguous (the user chooses). A word carrying an INN stem (-olol, -pril, -mycin …) is read as
   a misspelling only within one edit: two INNs of a class differ by more.
5. **Drug-like leftovers**: a word that cannot be Vietnamese, is not a word of the book, and
   carries an INN stem or follows "thuốc/viên/uống" is an unknown medicine, named. Anything else
   ("bartholin" in "u nang bartholin") is left for the understander to judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from rapidfuzz.distance import Levenshtein

from duocthu.config import PROJECT_ROOT
from duocthu.lexicon import LEXICON
from duocthu.text import fold, folded_words, has_diacritics, normalize, word_forms, words
from duocthu.types import DrugEntry

LEXICON_DIR = PROJECT_ROOT / "data" / "understanding"
OTHER_DRUGS_PATH = LEXICON_DIR / "other_drugs.yaml"
PRODUCTS_PATH = LEXICON_DIR / "products.yaml"

# Onset + rhyme of a Vietnamese syllable without diacritics (a superset is fine: it only
# decides which words are *not* candidates for drug matching).
_VIETNAMESE_SYLLABLE_RE = re.compile(
    r"^(ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnpqrstvx])?"
    r"(uye|uyu|oo|oa|oe|uy|ua|uo|ie|ye|ia|ai|ao|au|ay|eo|eu|iu|oi|ui|uu|uoi|uou|ieu|yeu|oai|oay|uay|uya|[aeiouy])"
    r"(ch|ng|nh|[cmnpt]|[iouy])?$"
)
# Endings (and a few beginnings) that WHO INNs of a class share.
INN_STEM_RE = re.compile(
    r"(olol|pril|sartan|statin|mycin|micin|cillin|cilin|conazol|conazole|azol|azole|vir|floxacin|oxacin|cyclin|"
    r"cycline|tidin|tidine|prazol|prazole|dipin|dipine|afil|parin|xaban|gatran|gliptin|gliflozin|glifozin|glitazon|"
    r"tinib|zumab|ximab|mumab|zepam|azepam|zolam|triptan|setron|lukast|dronat|dronate|coxib|profen|profene|fenac|"
    r"semid|thiazid|thiazide|pamil|fibrat|fibrate|lutamid|grel|grelor|caine|cain|terol|tropium|lamid|oxetin|"
    r"tadin|tadine|rizin|ridon|peridol|pidem|barbital|fylin|phyllin|quin|quine|triazin|mustin|platin|rubicin|"
    r"taxel|relin|tocin|gestrel|estradiol|sone|solon|olone|nisolon|cort|ciclovir|amivir|tegravir)$"
    r"|^(cef|ceph|sulfa|gli|gly|levo|dex)[a-z]{4,}$"
)
_UNIT_WORDS = frozenset(
    list(LEXICON.phrases("unit_words"))
)
# Words that look like drug names but are organisms, lab values, body substances or chat words.
_NOT_DRUGS = frozenset(list(LEXICON.phrases("not_drugs")))
_DRUG_CONTEXT_BEFORE = frozenset(list(LEXICON.phrases("drug_context_before")))
# A strength after a name ("Klacid 500", "500mg"): it marks the word before as a medicine, and belongs to its name.
STRENGTH_RE = re.compile(r"^\d+(?:[.,]\d+)?(?:mg|g|ml|mcg|iu|ui)?$")
STRENGTH_UNITS = frozenset(frozenset(LEXICON.phrases("strength_units")))
TIGHT_EDITS_SHORT = 1  # words of 5–7 letters
TIGHT_EDITS_LONG = 2  # words of 8+ letters
LOOSE_EXTRA_EDITS = 1  # a near miss within one more edit is offered, not resolved


def is_vietnamese_syllable(folded_word: str) -> bool:
    return bool(_VIETNAMESE_SYLLABLE_RE.match(folded_word))


@dataclass(frozen=True)
class OtherDrug:
    """A real medicine (or vitamin, supplement, herbal product) that the book does not cover."""

    name: str
    spellings: tuple[str, ...] = ()
    kind: str = "medicine"
    drug_class: str | None = None


@dataclass(frozen=True)
class ProductEntry:
    name: str
    spellings: tuple[str, ...]
    components: tuple[str, ...]


@dataclass(frozen=True)
class DrugMention:
    drug_id: str
    surface: str  # the words as typed
    label: str  # the name or alias it matched
    start: int  # token position
    end: int
    fuzzy: bool = False
    via_product: str | None = None  # the product name it came from


@dataclass(frozen=True)
class UnknownName:
    name: str  # as the user wrote it
    kind: str  # medicine | vitamin | supplement | herbal | vaccine | product | unlisted
    suggestion: str | None = None  # a book drug_id that looks alike, offered as a quick reply
    start: int = -1


@dataclass(frozen=True)
class ProductMatch:
    name: str
    surface: str
    covered: tuple[str, ...]  # drug_ids of the book
    uncovered: tuple[str, ...]  # component names the book lacks
    start: int = -1


# A combination written out by its components: "X + Y", "X/Y", "viên phối hợp X và Y".
_ADHOC_COMBINATION_RE = re.compile(r"[a-z]\s*\+\s*[a-z]|[a-z]{3,}/[a-z]{3,}|\b(?:vien|thuoc|dang|che pham) "
                                   r"(?:phoi hop|ket hop)\b")


# A name joined by a hyphen to a short Latin prefix: "Myo-inositol", "L-carnitin", "Alpha-lipoic", "Co-Q10".
_HYPHENATED_RE = re.compile(r"\b([A-Za-z]{1,6})-([A-Za-z]{5,})\b")
# Latin names are also spelt as Vietnamese says them ("xetirizin" for cetirizin, "fenytoin"/"phenytoin"): these
# first letters are one sound.
_FIRST_SOUNDS = ({"c", "k", "x", "s", "q"}, {"f", "p"}, {"d", "z", "g"}, {"i", "y"})


def _same_first_sound(name: str, typed: str) -> bool:
    return name[:1] == typed[:1] or any(name[:1] in group and typed[:1] in group for group in _FIRST_SOUNDS)


# The shortest start of a name read as that name: "cipro" (ciprofloxacin), not "meto" (metoprolol? metformin?).
MIN_ABBREVIATION = 5


@dataclass(frozen=True)
class AmbiguousMention:
    surface: str
    candidates: tuple[str, ...]  # drug_ids, closest first
    start: int = -1


@dataclass(frozen=True)
class Resolution:
    mentions: tuple[DrugMention, ...] = ()
    unknown: tuple[UnknownName, ...] = ()
    products: tuple[ProductMatch, ...] = ()
    ambiguous: tuple[AmbiguousMention, ...] = ()
    leftovers: tuple[tuple[int, str], ...] = ()  # drug-like words with no verdict (position, word)
    every_mention: tuple[DrugMention, ...] = ()  # ``mentions`` keeps one per drug; this keeps them all

    @property
    def drug_ids(self) -> list[str]:
        return [m.drug_id for m in self.mentions]


def load_other_drugs(path: Path = OTHER_DRUGS_PATH) -> list[OtherDrug]:
    if not path.exists():
        return []
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return [
        OtherDrug(str(e["name"]), tuple(str(s) for s in e.get("spellings") or ()), str(e.get("kind", "medicine")),
                  e.get("class"))
        for e in entries
    ]


def load_products(path: Path = PRODUCTS_PATH) -> list[ProductEntry]:
    if not path.exists():
        return []
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return [
        ProductEntry(str(e["name"]), tuple(str(s) for s in e.get("spellings") or ()),
                     tuple(str(c) for c in e.get("components") or ()))
        for e in entries
    ]


@dataclass
class _Found:
    """What one resolution has found so far, word by word (``taken``: a word already read as a name)."""

    raw: list[str]
    tokens: list[str]
    accented: Sequence[bool]
    taken: list[bool]
    mentions: list[DrugMention] = field(default_factory=list)
    unknown: list[UnknownName] = field(default_factory=list)
    products: list[ProductMatch] = field(default_factory=list)
    ambiguous: list[AmbiguousMention] = field(default_factory=list)
    leftovers: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class _Label:
    tokens: tuple[str, ...]  # folded
    target: str  # drug_id, product name or other-drug name
    label: str
    kind: str  # "book" | "product" | "other"

    @property
    def raw(self) -> tuple[str, ...]:
        return tuple(words(self.label))


@dataclass
class DrugResolver:
    """Finds the book's drugs in a turn, and says honestly what it could not find."""

    catalogue_entries: Sequence[DrugEntry]
    known_words: Iterable[str] = ()
    other_drugs: Sequence[OtherDrug] | None = None
    products: Sequence[ProductEntry] | None = None
    catalogue: dict[str, DrugEntry] = field(init=False)

    def __post_init__(self) -> None:
        self.catalogue = {entry.drug_id: entry for entry in self.catalogue_entries}
        others = list(load_other_drugs() if self.other_drugs is None else self.other_drugs)
        products = list(load_products() if self.products is None else self.products)
        book_keys: set[tuple[str, ...]] = set()
        labels: list[_Label] = []
        for entry in self.catalogue_entries:
            for label in {entry.display_name, entry.drug_id.replace("_", " "), *entry.aliases}:
                tokens = tuple(folded_words(label))
                if tokens:
                    labels.append(_Label(tokens, entry.drug_id, label, "book"))
                    book_keys.add(tokens)
        self._book_label_of = {label.tokens: label for label in labels}
        self._products = {p.name: p for p in products}
        self._lookups: tuple[dict[str, OtherDrug], dict[str, ProductEntry]] | None = None
        for product in products:
            for label in (product.name, *product.spellings):
                tokens = tuple(folded_words(label))
                if tokens and tokens not in book_keys:
                    labels.append(_Label(tokens, product.name, label, "product"))
        self._others = {o.name: o for o in others}
        for other in others:
            for label in (other.name, *other.spellings):
                tokens = tuple(folded_words(label))
                if tokens and tokens not in book_keys:
                    labels.append(_Label(tokens, other.name, label, "other"))
        rank = {"product": 0, "book": 1, "other": 2}
        labels.sort(key=lambda item: (-len(item.tokens), rank[item.kind], -len("".join(item.tokens))))
        self._labels = labels
        self._by_first_word: dict[str, list[int]] = {}
        for index, item in enumerate(labels):
            self._by_first_word.setdefault(item.tokens[0], []).append(index)
        self._single_word_book = {
            item.tokens[0]: item for item in labels if item.kind == "book" and len(item.tokens) == 1
            and len(item.tokens[0]) >= 5
        }
        self._single_word_others = [item.tokens[0] for item in labels if item.kind == "other" and len(item.tokens) == 1]
        name_tokens = {t for item in labels for t in item.tokens}
        self._known_words = ({w for text in self.known_words for w in folded_words(text)} - name_tokens) | _NOT_DRUGS

    # -- the catalogue -------------------------------------------------------------------------
    def display_name(self, drug_id: str) -> str:
        entry = self.catalogue.get(drug_id)
        return entry.display_name if entry else drug_id

    def names_of(self, drug_id: str) -> list[str]:
        entry = self.catalogue.get(drug_id)
        return [entry.display_name, *entry.aliases] if entry else [drug_id]

    def other_drug_terms(self, names: Sequence[str]) -> list[str]:
        """Every way the book may name these medicines that are not in it: name, spellings, class."""
        terms: list[str] = []
        by_folded, products = self._name_lookups()
        expanded: list[str] = []
        for name in names:
            expanded.append(name)
            product = products.get(fold(name))
            if product is not None:  # "Xarelto" → rivaroxaban: the book names the ingredient, not the brand
                expanded += [c for c in product.components if self.book_drug_for(c) is None]
        for name in expanded:
            terms.append(name)
            other = by_folded.get(fold(name))
            if other is not None:
                # the class too: "thuốc chống đông" is how a monograph names rivaroxaban
                terms += [other.name, *other.spellings, *([other.drug_class] if other.drug_class else [])]
        return list(dict.fromkeys(t for t in terms if t.strip()))

    def _name_lookups(self) -> tuple[dict[str, OtherDrug], dict[str, ProductEntry]]:
        """Medicines not in the book and market products by folded name or spelling, built once."""
        if self._lookups is None:
            others = {fold(o.name): o for o in self._others.values()}
            for owner in self._others.values():
                for spelling in owner.spellings:
                    others.setdefault(fold(spelling), owner)
            products = {fold(spelling): product for product in self._products.values()
                        for spelling in (product.name, *product.spellings)}
            self._lookups = (others, products)
        return self._lookups

    def book_drug_for(self, name: str) -> str | None:
        """The drug_id a component or medicine name denotes in the book, if it is there."""
        label = self._book_label_of.get(tuple(folded_words(name)))
        return label.target if label else None

    # -- resolution ----------------------------------------------------------------------------
    def find(self, text: str) -> tuple[list[DrugMention], list[str]]:
        """Drug mentions in order of appearance (each drug once), and names not in the book."""
        resolution = self.resolve(text)
        unknown = [u.name for u in resolution.unknown]
        unknown += [name for p in resolution.products for name in p.uncovered if name not in unknown]
        return list(resolution.mentions), unknown

    def resolve(self, text: str) -> Resolution:
        raw_forms, folded_forms, accented = word_forms(text)
        found = _Found(list(raw_forms), list(folded_forms), accented, [False] * len(folded_forms))
        self._find_names(found)
        self._read_other_words(found, text)
        mentions, unknown, products = found.mentions, found.unknown, found.products
        mentions.sort(key=lambda m: m.start)
        if not products and unknown and mentions and _ADHOC_COMBINATION_RE.search(fold(text)):
            # "viên phối hợp metformin + glibenclamid", "amlodipin/valsartan 5/80": one product whose
            # components the book does not all cover — never dosed as the one the book has.
            names = [m.surface for m in sorted(mentions, key=lambda m: m.start)] + [u.name for u in unknown]
            products.append(ProductMatch(" + ".join(names), " + ".join(names),
                                         tuple(dict.fromkeys(m.drug_id for m in mentions)),
                                         tuple(dict.fromkeys(u.name for u in unknown)), min(m.start for m in mentions)))
        unique: list[DrugMention] = []
        for mention in mentions:
            if all(m.drug_id != mention.drug_id for m in unique):
                unique.append(mention)
        return Resolution(
            tuple(unique), tuple(_dedupe_unknown(unknown)), tuple(products), tuple(found.ambiguous),
            tuple(found.leftovers), tuple(mentions),
        )

    def _find_names(self, found: _Found) -> None:
        """The names of the label table (the book's, products', medicines the book lacks), longest first."""
        raw, tokens, accented, taken = found.raw, found.tokens, found.accented, found.taken
        present = set(tokens)
        candidates = sorted(i for token in present for i in self._by_first_word.get(token, ()))
        for item in (self._labels[i] for i in candidates):
            n = len(item.tokens)
            for start in range(len(tokens) - n + 1):
                if any(taken[start : start + n]) or tuple(tokens[start : start + n]) != item.tokens:
                    continue
                if not all(not accented[start + i] or raw[start + i] == item.raw[i] for i in range(n)):
                    continue  # typed with other diacritics: "sát" is not "sắt"
                if item.kind != "book" and n == 1 and is_vietnamese_syllable(item.tokens[0]) \
                        and raw[start] != item.raw[0]:
                    continue  # a one-syllable name ("sắt", "kẽm") must be typed as written: "kem" is not "kẽm"
                surface = " ".join(raw[start : start + n])
                for i in range(start, start + n):
                    taken[i] = True
                if item.kind == "book":
                    found.mentions.append(DrugMention(item.target, surface, item.label, start, start + n))
                elif item.kind == "product":
                    match = self._product_match(self._products[item.target], surface, start)
                    found.products.append(match)
                    found.mentions += [DrugMention(d, surface, item.label, start, start + n, via_product=match.name)
                                       for d in match.covered]
                else:
                    other = self._others[item.target]
                    found.unknown.append(UnknownName(surface, other.kind, self._suggest(tokens[start]), start))

    def _read_other_words(self, found: _Found, text: str) -> None:
        """Drug-like words no label names: a start of a name, a typing slip, a medicine not listed, or left over."""
        raw, tokens, taken = found.raw, found.tokens, found.taken
        cased = re.findall(r"\w+", normalize(text))
        acronym = [len(cased) == len(raw) and len(w) >= 3 and w.isupper() for w in cased] if cased else []
        hyphenated = {fold(m.group(2)): m.group(0) for m in _HYPHENATED_RE.finditer(normalize(text))}
        for i, token in enumerate(tokens):
            if taken[i] or not self._drug_like(token, raw[i]):
                continue
            if token in self._known_words and not (INN_STEM_RE.search(token) or self._in_drug_context(tokens, i)):
                continue  # a word of the book's own text, with nothing that marks it as a medicine
            completed = self._completions(token)
            if len(completed) == 1:
                # "cipro", "paracet": the start of one name of the book, read as it and said so ("hiểu là …")
                drug_id, label = completed[0]
                found.mentions.append(DrugMention(drug_id, raw[i], label, i, i + 1, fuzzy=True))
                taken[i] = True
                continue
            if completed:  # the start of two names of the book: which one?
                found.ambiguous.append(AmbiguousMention(raw[i], tuple(d for d, _ in completed), i))
                taken[i] = True
                continue
            if self._read_a_slip_or_a_name(found, i, acronym, hyphenated):
                taken[i] = True
            else:
                found.leftovers.append((i, raw[i]))

    def _read_a_slip_or_a_name(self, found: _Found, i: int, acronym: list[bool], hyphenated: dict[str, str]) -> bool:
        """A word read as a typing slip of a name, a doubt between names, or a medicine the book does not list."""
        raw, tokens, token = found.raw, found.tokens, found.tokens[i]
        close, near = self._near_misses(token)
        # A typing slip keeps the start of a word: a rival that does not share it ("amoxicilin" for
        # "doxycilin") is no reason to doubt, and a match that changes the first letter ("Kaleorid" →
        # "Alerid") is no reading to trust.
        rivals = [c for c in near if fold(c[1])[:3] == token[:3]]
        if len(close) == 1 and _same_first_sound(fold(close[0][1]), token) \
                and not (INN_STEM_RE.search(token) and close[0][2] > 1
                         and (rivals or self._another_drug_within(token, close[0][2] + 1))):
            drug_id, label, _ = close[0]
            found.mentions.append(DrugMention(drug_id, raw[i], label, i, i + 1, fuzzy=True))
        elif close or near:
            found.ambiguous.append(AmbiguousMention(raw[i], tuple(d for d, _, _ in close + near), i))
        elif INN_STEM_RE.search(token) or (self._in_drug_context(tokens, i) and not acronym[i]):
            # an acronym with a number ("TIRADS 3", "HbA1c") is a score or a test, not a medicine
            found.unknown.append(UnknownName(raw[i], "unlisted", None, i))
        elif (compound := hyphenated.get(token)) is not None:
            # "Myo-inositol", "L-carnitin", "Alpha-lipoic": a chemical name joined by a hyphen
            found.unknown.append(UnknownName(compound, "unlisted", None, i))
        else:
            return False
        return True

    def _product_match(self, product: ProductEntry, surface: str, start: int) -> ProductMatch:
        covered: list[str] = []
        uncovered: list[str] = []
        for component in product.components:
            drug_id = self.book_drug_for(component)
            if drug_id is not None:
                covered.append(drug_id)
            else:
                uncovered.append(component)
        return ProductMatch(product.name, surface, tuple(dict.fromkeys(covered)), tuple(uncovered), start)

    def _drug_like(self, token: str, raw_word: str) -> bool:
        if len(token) < 5 or not token.isalpha() or token in _UNIT_WORDS or token in _NOT_DRUGS:
            return False
        if has_diacritics(raw_word):
            return False  # typed with Vietnamese diacritics: an ordinary word
        return not is_vietnamese_syllable(token)

    def _near_misses(self, token: str) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, int]]]:
        """(close, near): book drugs within the resolving distance, and within one more edit."""
        tight = TIGHT_EDITS_SHORT if len(token) <= 7 else TIGHT_EDITS_LONG
        loose = tight + LOOSE_EXTRA_EDITS
        best: dict[str, tuple[str, str, int]] = {}
        for name, item in self._single_word_book.items():
            distance = Levenshtein.distance(token, name, score_cutoff=loose)
            if distance <= loose and (item.target not in best or distance < best[item.target][2]):
                best[item.target] = (item.target, item.label, distance)
        ranked = sorted(best.values(), key=lambda c: (c[2], c[0]))
        close = [c for c in ranked if c[2] <= tight]
        near = [c for c in ranked if tight < c[2] <= loose]
        if len(close) > 1 and close[0][2] < close[1][2]:
            close = close[:1]  # one clearly closer than the rest
        return close, near

    def _completions(self, token: str) -> list[tuple[str, str]]:
        """(drug_id, name) of the book's drugs with a one-word name the word is the start of: an abbreviation
        ("cipro", "amoxi"). A word that is a whole name of a medicine not in the book never gets here."""
        if len(token) < MIN_ABBREVIATION:
            return []
        found: dict[str, str] = {}
        for name, item in self._single_word_book.items():
            if name.startswith(token) and len(name) - len(token) >= 2:
                found.setdefault(item.target, item.label)
        return sorted(found.items())

    def _another_drug_within(self, token: str, edits: int) -> bool:
        """A real medicine not in the book lies within ``edits`` of the word: a misspelling with an INN stem
        that could be either is not resolved ("hydroclothiazid" has none near; "clorothiazid" is one)."""
        return any(Levenshtein.distance(token, name, score_cutoff=edits) <= edits for name in self._single_word_others)

    def _suggest(self, token: str) -> str | None:
        """A book drug that looks like an unknown name (for "Có phải bạn hỏi về …?")."""
        close, near = self._near_misses(token)
        found = close or near
        return found[0][0] if found else None

    def _in_drug_context(self, tokens: Sequence[str], i: int) -> bool:
        before = tokens[i - 1] if i > 0 else ""
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        return before in _DRUG_CONTEXT_BEFORE or bool(STRENGTH_RE.match(after))


def _dedupe_unknown(unknown: list[UnknownName]) -> list[UnknownName]:
    seen: set[str] = set()
    kept = []
    for item in sorted(unknown, key=lambda u: u.start):
        key = fold(item.name)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept
