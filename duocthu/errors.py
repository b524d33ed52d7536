"""duocthu's own errors: each says what went wrong and what to do about it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class DuocthuError(Exception):
    """Base of every error duocthu raises on purpose."""


@dataclass(frozen=True)
class CorpusError:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class CorpusValidationError(DuocthuError):
    def __init__(self, errors: list[CorpusError]):
        self.errors = errors
        shown = "\n".join(f"  {e}" for e in errors[:50])
        more = f"\n  … and {len(errors) - 50} more" if len(errors) > 50 else ""
        super().__init__(f"the formulary has {len(errors)} error(s); nothing was published:\n{shown}{more}")


class IndexMissingError(DuocthuError):
    """No index has been built at the configured location."""


class IndexLockedError(DuocthuError):
    """The local Qdrant storage is held by another process."""


class BackendUnavailableError(DuocthuError):
    """The vector store (Qdrant server) could not be reached or answered too slowly."""


class ProviderConfigError(DuocthuError):
    """A provider was selected but its key or model is missing, or its name is unknown."""


class MissingExtraError(DuocthuError):
    """An optional package (an extra of ``pyproject.toml``) is not installed; says which extra."""


class AnswerGenerationUnavailable(DuocthuError):
    """A generation-side provider call failed; callers fail closed (abstain)."""


class RequestBudgetExhausted(AnswerGenerationUnavailable):
    """The turn has used its wall-clock or LLM-call budget."""


class ConversationStoreUnavailable(DuocthuError):
    """The conversation store (SQLite file or PostgreSQL server) could not be opened or used."""
