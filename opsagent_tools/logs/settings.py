"""The `[tools.logs]` section: which log store `search_logs` reads (files, Loki or Elasticsearch/OpenSearch) and
how much one search fetches. Each backend's own keys are its settings class; secrets are environment variable names."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from opsagent_tools.logs.elasticsearch import ElasticsearchSettings
from opsagent_tools.logs.files import FileLogSettings
from opsagent_tools.logs.loki import LokiSettings
from opsagent_tools.logs.search import SAMPLE_SIZE


class LogsSettings(BaseModel):
    """Where `search_logs` looks. Only the selected backend's section is used; secrets are environment variable names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["files", "loki", "elasticsearch"] = "files"
    files: FileLogSettings | None = None
    """Required when backend is "files" (it has no sensible default directory)."""
    loki: LokiSettings = Field(default_factory=LokiSettings)
    elasticsearch: ElasticsearchSettings = Field(default_factory=ElasticsearchSettings)
    sample_size: int = Field(default=SAMPLE_SIZE, ge=1, le=5000)
    """Newest lines fetched per search for grouping, and never fewer than `limit` (Loki caps a query at 5000)."""
    timeout_s: float = Field(default=30.0, gt=0)
    """Seconds one search may take in all (Loki may need two requests; keep it above the backend's timeout_s)."""

    @model_validator(mode="after")
    def _selected_backend_is_configured(self) -> LogsSettings:
        if self.backend == "files" and self.files is None:
            raise ValueError('tools.logs.backend is "files" but tools.logs.files.directory is not set')
        return self
