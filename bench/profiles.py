"""What a run measures: the full profile (``make bench``) and the CI smoke (tiny sizes).

Parameters are plain data in UPPER_CASE, so a reader sees every size and budget in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEMO_CHUNKS_PER_DRUG = 22  # the demo formulary's mean; used only to name the "~700 drugs" tier


@dataclass(frozen=True)
class Profile:
    name: str
    demo: dict[str, Any]
    synthetic_tiers: tuple[int, ...]  # target chunk counts
    synthetic: dict[str, Any]
    index_build: dict[str, Any]
    commands: dict[str, Any]
    app_memory: dict[str, Any]
    quality: dict[str, Any] = field(default_factory=dict)
    formulary_drugs: tuple[str, ...] | None = None  # a subset of the demo formulary (smoke)
    stage_timeout_s: float = 3600


FULL = Profile(
    name="full",
    demo={"per_route": 24, "repeats": 3, "scan_budget_s": 20, "profile_turns": 30},
    synthetic_tiers=(700 * DEMO_CHUNKS_PER_DRUG, 30_000, 300_000),
    synthetic={"per_route": 8, "repeats": 2, "route_budget_s": 30, "scan_budget_s": 20,
               "default_lookup_max_chunks": 40_000, "big_page": 16_384, "profile_turns": 5},
    index_build={"cold_drugs": 5},
    commands={"batch_turns": 1000},
    app_memory={"turns": 50},
)

SMOKE = Profile(
    name="smoke",
    demo={"per_route": 2, "repeats": 1, "scan_budget_s": 1, "profile_turns": 2, "max_embedding_samples": 8},
    synthetic_tiers=(2_000,),
    synthetic={"per_route": 2, "repeats": 1, "route_budget_s": 2, "scan_budget_s": 1,
               "default_lookup_max_chunks": 40_000, "big_page": 16_384, "profile_turns": 1},
    index_build={"cold_drugs": 1},
    commands={"batch_turns": 12},
    app_memory={"turns": 5},
    quality={"max_rows": 8},
    formulary_drugs=("paracetamol", "ibuprofen", "amoxicilin"),
    stage_timeout_s=300,
)

PROFILES = {"full": FULL, "smoke": SMOKE}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose from {', '.join(PROFILES)}") from None
