"""`[tools.changes]`: settings that would not make a query are refused when the configuration loads."""

from __future__ import annotations

import pytest

from opsagent_tools.changes import ChangesSettings


def test_settings_refuse_what_would_not_be_a_query():
    with pytest.raises(ValueError, match="not a regular expression"):
        ChangesSettings(build_info_metric="app_(build")
    with pytest.raises(ValueError, match="without quotes or backslashes"):
        ChangesSettings(build_info_metric='x"}')
    with pytest.raises(ValueError, match="is not a Prometheus label name"):
        ChangesSettings(version_label="app.version")
