"""The one place a ``bedrock-runtime`` client is built (boto3 imported only here)."""

from __future__ import annotations

from typing import Any

from duocthu.config import Settings
from duocthu.errors import ProviderConfigError

READ_TIMEOUT_S = 20  # bounds a call the request budget cannot cancel once in flight
TOTAL_MAX_ATTEMPTS = 2


def bedrock_runtime_client(settings: Settings, purpose: str) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError as exc:  # pragma: no cover - boto3 is a core dependency
        raise ProviderConfigError(f"{purpose} needs boto3: uv sync") from exc
    return boto3.client(
        "bedrock-runtime",
        region_name=settings.aws_region,
        config=Config(
            read_timeout=READ_TIMEOUT_S, retries={"total_max_attempts": TOTAL_MAX_ATTEMPTS, "mode": "standard"}
        ),
    )
