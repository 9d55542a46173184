"""A resolution profile: attribute comparisons and extra blocking rules as one JSON document.

    {"rules": [{"family": "attribute", "attributes": ["date_of_birth"]}, ...],
     "attributes": {"comparisons": [{"attribute": "postcode", "exact_weight": 8.0, ...}]}}

:meth:`ResolutionProfile.config` puts the comparisons into a :class:`ResolutionConfig`;
:meth:`ResolutionProfile.blocking_rules` adds the rules to the default name rules.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from knotwork.resolution.attributes import AttributeModel
from knotwork.resolution.blocking import DEFAULT_RULES, BlockingRule
from knotwork.resolution.scoring import ResolutionConfig


class ResolutionProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    note: str = ""
    rules: tuple[BlockingRule, ...] = ()
    attributes: AttributeModel = Field(default_factory=AttributeModel)

    def config(self, base: ResolutionConfig | None = None) -> ResolutionConfig:
        return (base or ResolutionConfig()).model_copy(
            update={"attributes": self.attributes, "blocking_rules": self.rules})

    def blocking_rules(self) -> tuple[BlockingRule, ...]:
        return (*DEFAULT_RULES, *self.rules)  # what a Resolver of :meth:`config` uses


def load_profile(path: Path) -> ResolutionProfile:
    return ResolutionProfile.model_validate_json(path.read_text(encoding="utf-8"))
