"""Optional parts of duocthu (the extras in ``pyproject.toml``): import one, or say what to install.

The core (``duocthu ask | index | batch``) needs none of them. Each adapter that needs one asks
for it here, so a missing package is a :class:`~duocthu.errors.MissingExtraError` naming the
extra, never a bare ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from duocthu.errors import MissingExtraError


def require_extra(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` (part of ``extra``) or raise an error saying how to install it.

    Example:
        >>> require_extra("json", "app", "a doctest").__name__
        'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{purpose} needs {module.split('.')[0]}, from the optional extra '{extra}': "
            f"`uv sync --extra {extra}` in a checkout, or `pip install 'duocthu[{extra}]'`"
        ) from exc
