"""Request params from keyword helpers."""

from __future__ import annotations

from typing import Any


def params(**fields: Any) -> dict[str, Any]:
    """A request's params: the fields given, without the ones left at None."""
    return {k: v for k, v in fields.items() if v is not None}
