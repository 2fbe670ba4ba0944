"""`[verification]` settings: whether and when an approved action is checked (did the symptom go away?)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class VerificationSettings(BaseModel):
    """`[verification]`: after an approved side effect succeeds, its symptom is read again `after_s` seconds later,
    and again at `recheck_after_s` ("is it still holding?")."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    after_s: float = Field(120.0, gt=0, description="Seconds after the action of the first check.")
    recheck_after_s: float = Field(900.0, ge=0, description="Seconds after the action of the second check; 0: none.")

    @model_validator(mode="after")
    def _recheck_after_the_check(self) -> VerificationSettings:
        if self.recheck_after_s and self.recheck_after_s <= self.after_s:
            raise ValueError(
                f"recheck_after_s ({self.recheck_after_s:g}) must come after after_s ({self.after_s:g}): "
                "make it larger, or 0 for no second check"
            )
        return self
