"""Per-site selector overrides (`-a config=FILE`): `{"selectors": {...}}` of a site profile.

    {"selectors": {"main": "div.article", "exclude": ["div.ad", ".feedback"],
                   "breadcrumb": "ol.crumbs", "version": "span.release"}}

Each key takes one CSS selector or a list of them. `main` is tried before every built-in
rule; `exclude` subtrees are skipped like chrome in the Markdown; `breadcrumb` names the
visible trail container (tried before the built-in ones); `version` names elements whose
text holds the version (evidence source `selector`, tried first). Unknown keys are
refused, so a typo does not silently do nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cssselect import SelectorError

from docscrawl.extract.profiles import compiled

__all__ = ["SELECTOR_KEYS", "SiteSelectors"]

SELECTOR_KEYS = ("main", "exclude", "breadcrumb", "version")


@dataclass(frozen=True, slots=True)
class SiteSelectors:
    """Validated selector overrides of one site; empty tuples when not given."""

    main: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    breadcrumb: tuple[str, ...] = ()
    version: tuple[str, ...] = ()

    @classmethod
    def from_profile(cls, profile: Mapping[str, Any] | None) -> SiteSelectors:
        """Read `profile["selectors"]`; ValueError naming the key on a bad value."""
        raw = (profile or {}).get("selectors") or {}
        if not isinstance(raw, Mapping):
            raise ValueError("selectors: expected an object of CSS selectors")
        unknown = sorted(set(raw) - set(SELECTOR_KEYS))
        if unknown:
            raise ValueError(f"selectors: unknown key {unknown[0]!r} "
                             f"(known: {', '.join(SELECTOR_KEYS)})")
        return cls(**{key: _selectors(key, raw.get(key)) for key in SELECTOR_KEYS})

    def __bool__(self) -> bool:
        return bool(self.main or self.exclude or self.breadcrumb or self.version)


def _selectors(key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError(f"selectors.{key}: expected a CSS selector or a list of them")
    for css in values:
        try:
            compiled(css)
        except SelectorError as exc:
            raise ValueError(f"selectors.{key}: bad CSS selector {css!r} ({exc})") from None
    return tuple(values)
