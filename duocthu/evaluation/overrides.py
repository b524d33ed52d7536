"""Runtime overrides: a notebook's ``RUNTIME_SETTINGS`` and ``duocthu eval --set KEY=VALUE``, checked once.

A key is either a :class:`~duocthu.config.Settings` field (providers, the understander …) or an
:class:`~duocthu.retrieval.policy.EvidencePolicy` field (thresholds, limits, pooling). Values are
coerced to the field's type; an unknown key or a value of the wrong type is a
:class:`SettingsOverrideError` that lists what is valid.

>>> overrides = parse_overrides({"minimum_score": 0.88, "understander": "rules"})
>>> overrides.policy, overrides.settings
({'minimum_score': 0.88}, {'understander': 'rules'})
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import NoneType, UnionType
from typing import Any

from duocthu.config import Settings
from duocthu.errors import DuocthuError
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.sections import SECTION_ORDER

SECRET_KEYS = frozenset(f.name for f in fields(Settings) if f.name.endswith("api_key"))
"""Keys are read from the environment only: a command line or a notebook would leak them."""

INDEX_KEYS = frozenset({
    "home", "formulary_dir", "embedding_cache_dir", "embedding_provider", "bedrock_embedding_model",
    "cohere_embedding_model", "collection", "qdrant_url", "qdrant_timeout_s",
})
"""Settings that change what is indexed or where: fixed for one index, so not sweepable over it."""

POLICY_CHOICES: dict[str, tuple[str, ...]] = {
    "lexical_scorer": ("count", "bm25"),
    "indication_mode": ("keyword", "dense", "hybrid", "keyword_then_dense"),
    "indication_synonyms": ("fallback", "off"),
}

_SETTINGS_TYPES = typing.get_type_hints(Settings)
_POLICY_TYPES = typing.get_type_hints(EvidencePolicy)


class SettingsOverrideError(DuocthuError):
    """An override names no setting, or gives a value the setting cannot take."""


def settings_keys() -> tuple[str, ...]:
    """Settings fields an override may set (secrets excluded)."""
    return tuple(f.name for f in fields(Settings) if f.name not in SECRET_KEYS)


def policy_keys() -> tuple[str, ...]:
    """EvidencePolicy fields an override may set."""
    return tuple(f.name for f in fields(EvidencePolicy))


def valid_keys_text() -> str:
    """Every valid key, for an error message."""
    return (f"Settings: {', '.join(settings_keys())}; "
            f"EvidencePolicy: {', '.join(policy_keys())}")


@dataclass(frozen=True)
class RuntimeOverrides:
    """Checked overrides, split into the settings part and the evidence-policy part."""

    settings: Mapping[str, Any] = field(default_factory=dict)
    policy: Mapping[str, Any] = field(default_factory=dict)

    def apply_to(self, base: Settings) -> Settings:
        """``base`` with the settings part applied and validated (provider names)."""
        settings = replace(base, **self.settings)
        settings.validate()
        return settings

    def policy_for(self, model_id: str) -> EvidencePolicy:
        """The model's default policy with the policy part applied."""
        return EvidencePolicy.for_model(model_id, **self.policy)

    def index_keys(self) -> list[str]:
        """Keys that would need another index."""
        return sorted(set(self.settings) & INDEX_KEYS)

    def without_index_keys(self) -> RuntimeOverrides:
        """The overrides a built index can still take (the index keys were applied when it was built)."""
        return RuntimeOverrides({k: v for k, v in self.settings.items() if k not in INDEX_KEYS}, self.policy)

    def as_json(self) -> dict[str, Any]:
        """Plain JSON (paths as strings, sets as sorted lists), for run.json."""
        return {key: _plain(value) for key, value in {**self.settings, **self.policy}.items()}


def parse_overrides(values: Mapping[str, Any] | None) -> RuntimeOverrides:
    """Check and type every override; raise one error naming every bad key."""
    settings: dict[str, Any] = {}
    policy: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in (values or {}).items():
        try:
            if key in SECRET_KEYS:
                raise ValueError("is a secret: set it in the environment, never on a command line or in a notebook")
            if key in _SETTINGS_TYPES:
                settings[key] = _coerce(value, _SETTINGS_TYPES[key])
            elif key in _POLICY_TYPES:
                policy[key] = _check_policy_value(key, _coerce(value, _POLICY_TYPES[key]))
            else:
                raise ValueError("is not a setting")
        except ValueError as exc:
            problems.append(f"{key}={value!r} {exc}")
    if problems:
        unknown = any(p.endswith("is not a setting") for p in problems)
        hint = f"\nvalid keys — {valid_keys_text()}" if unknown else ""
        raise SettingsOverrideError("bad override(s): " + "; ".join(problems) + hint)
    return RuntimeOverrides(settings, policy)


def parse_set_arguments(pairs: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings → a mapping; a value is read as JSON when it parses (``0.9``, ``[1,2]``, ``null``)."""
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise SettingsOverrideError(f"--set {pair!r}: expected KEY=VALUE, e.g. --set minimum_score=0.9")
        try:
            values[key.strip()] = json.loads(raw)
        except ValueError:
            values[key.strip()] = raw
    return values


def _coerce(value: Any, annotation: Any) -> Any:
    options = typing.get_args(annotation) if isinstance(annotation, UnionType) else (annotation,)
    if value is None:
        if NoneType in options:
            return None
        raise ValueError("cannot be null")
    target = next(o for o in options if o is not NoneType)
    if target is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if target is int and isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
        return int(value)
    if target is str and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    if target is Path and isinstance(value, (str, Path)):
        return Path(value).expanduser().resolve()
    if typing.get_origin(target) is frozenset:
        items = value.split(",") if isinstance(value, str) else value
        if isinstance(items, (list, tuple, set, frozenset)) and all(isinstance(i, str) for i in items):
            return frozenset(i.strip() for i in items if i.strip())
        raise ValueError("expects a list of strings or a comma-separated string")
    expected = {float: "a number", int: "a whole number", str: "a string", Path: "a path"}.get(target, str(target))
    raise ValueError(f"expects {expected}")


def _check_policy_value(key: str, value: Any) -> Any:
    choices = POLICY_CHOICES.get(key)
    if choices and value not in choices:
        raise ValueError(f"is not one of: {', '.join(choices)}")
    if isinstance(value, frozenset):
        unknown = sorted(value - set(SECTION_ORDER))
        if unknown:
            raise ValueError(f"names unknown section key(s) {', '.join(unknown)}")
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, frozenset):
        return sorted(value)
    return value


def settings_json(settings: Settings, policy: EvidencePolicy) -> dict[str, Any]:
    """Every setting (secrets shown only as set or not) and every policy field, as plain JSON."""
    shown: dict[str, Any] = {}
    for f in fields(Settings):
        value = getattr(settings, f.name)
        shown[f.name] = ("(set)" if value else None) if f.name in SECRET_KEYS else _plain(value)
    return {"settings": shown, "policy": {f.name: _plain(getattr(policy, f.name)) for f in fields(EvidencePolicy)}}
