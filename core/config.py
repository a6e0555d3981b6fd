"""All engine parameters in one place (paper Table 5 defaults)."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Config:
    # schema induction (paper 3.3.2)
    theta_s: int = 4
    theta_a: float = 0.60
    theta_e: float = 0.80
    max_pattern_attrs: int = 12  # subsets of larger attribute sets are bounded (see induction.py)
    min_schema_attrs: int = 2  # a 1-attribute schema would absorb every pattern containing it
    block_fragments: bool = True  # a schema's usual companions are not a new schema (induction.py)
    delta_all_conf: bool = True  # attributes added by evolution must pass all-conf too
    # retrieval memory (appendix A)
    theta_epi: float = 0.60
    theta_topic: float = 0.65
    w_text: float = 0.60
    w_visual: float = 0.40
    episode_max_gap_hours: float = 24.0
    # planning (3.5)
    lambda_meta: float = 0.70
    k_tab: int = 5
    k_epi: int = 5
    max_steps: int = 3
    evidence_budget: int = 10
    event_window: int = 1
    # DG-Mem utility
    utility_alpha: float = 0.80
    # input limits a person can see and change
    max_upload_bytes: int = 200 * 1024 * 1024
    max_image_pixels: int = 40_000_000
    max_rounds_per_upload: int = 200_000
    max_zip_entries: int = 10_000

    def with_(self, **changes) -> "Config":
        """A copy with some parameters changed; unknown names raise TypeError."""
        known = {f.name for f in fields(self)}
        bad = set(changes) - known
        if bad:
            raise TypeError(f"unknown config parameter(s): {', '.join(sorted(bad))}")
        return replace(self, **changes)


DEFAULT = Config()
