"""What the crawl learns about a site, in one object with one home: `SiteModel`.

- `versions`: version signals every page of the scope shares (`extract.site_versions`);
- `fragment_params`: query parameters that act as in-page anchors (`discovery.fragment_params`);
- `template`: the blocks the site's template repeats (`extract.template.table`).

Kept in one compact JSON file, `site_model.json`, next to `state.sqlite3`, replaced
atomically now and then, when the crawl pauses and at its end; a resumed or incremental
crawl starts from it, so its pages are judged by what the crawl before learned. A missing
file is a cold start; an unreadable part is logged and learned again.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from docscrawl.discovery.fragment_params import FragmentParams
from docscrawl.extract.site_versions import SiteVersions
from docscrawl.extract.template.table import TemplateTable
from docscrawl.jsonl import write_json_atomic

logger = logging.getLogger(__name__)

__all__ = ["SITE_MODEL_FILE", "SiteModel"]

SITE_MODEL_FILE = "site_model.json"


@dataclass
class SiteModel:
    """The site's versions, fragment-like parameters and template, saved in `path`."""

    path: Path
    versions: SiteVersions
    fragment_params: FragmentParams = field(default_factory=FragmentParams)
    template: TemplateTable = field(default_factory=TemplateTable)

    @classmethod
    def load(cls, state_dir: Path, site: str) -> SiteModel:
        """The model saved in `state_dir`, or a new one."""
        path = Path(state_dir) / SITE_MODEL_FILE
        model = cls(path, SiteVersions(site))
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return model
        except (OSError, ValueError) as exc:
            logger.warning("docscrawl: site model %s unreadable (%s); learning it again",
                           path, exc)
            return model
        if not isinstance(data, dict):
            return model
        model.versions.restore(data.get("versions") or {})
        model.fragment_params.restore(data.get("fragment_params") or {})
        if data.get("template"):
            try:
                model.template = TemplateTable.from_json(data["template"])
            except ValueError as exc:
                logger.warning("docscrawl: %s: %s; learning the template again", path, exc)
        return model

    def save(self) -> None:
        """Replace the saved model atomically; a failure is logged, never raised."""
        data = {"versions": self.versions.state(),
                "fragment_params": self.fragment_params.state(),
                "template": self.template.to_json()}
        try:  # compact: the template's block counts take a quarter less than indented
            write_json_atomic(self.path, data, compact=True)
        except OSError as exc:
            logger.warning("docscrawl: could not save %s: %s", self.path, exc)
