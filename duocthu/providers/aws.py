"""The one place a ``bedrock-runtime`` client is built (boto3 imported only here)."""

from __future__ import annotations

from typing import Any

from duocthu.config import Settings
from duocthu.extras import require_extra

READ_TIMEOUT_S = 20  # bounds a call the request budget cannot cancel once in flight
TOTAL_MAX_ATTEMPTS = 2


def bedrock_runtime_client(settings: Settings, purpose: str) -> Any:
    """A ``bedrock-runtime`` client (the ``aws`` extra) with duocthu's timeout and retries."""
    boto3 = require_extra("boto3", "aws", purpose)
    config = require_extra("botocore.config", "aws", purpose)
    return boto3.client(
        "bedrock-runtime",
        region_name=settings.aws_region,
        config=config.Config(
            read_timeout=READ_TIMEOUT_S, retries={"total_max_attempts": TOTAL_MAX_ATTEMPTS, "mode": "standard"}
        ),
    )
