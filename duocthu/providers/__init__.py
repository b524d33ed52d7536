"""Providers behind protocols: embedding, rerank and LLM. Each SDK is imported only in its adapter.

Each kind has a registry beside its ``get_…`` function — a dict of name → factory taking the
:class:`~duocthu.config.Settings` — and the settings read the valid names from those registries.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TypeVar

from duocthu.errors import ProviderConfigError

T = TypeVar("T")


def require_name(name: str, names: Collection[str], setting: str) -> None:
    """Raise the one error for a ``setting`` whose value is not a registered name."""
    if name not in names:
        raise ProviderConfigError(f"{setting}={name!r} is not one of: {', '.join(names)}")


def lookup(registry: Mapping[str, T], name: str, setting: str) -> T:
    """The registry's entry for ``name``, or the error listing every name it knows."""
    require_name(name, registry, setting)
    return registry[name]
