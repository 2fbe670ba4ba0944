"""A tool family as the toolset sees it: the tools it offers, what it adds to `discover` and to the change timeline,
and what `opsagent check` says about its backend.

Each family (metrics, logs, repos, kubernetes, actions, runbooks, memory, mcp) builds its own clients, once, from its
own settings, and shares them between its tools, its listings, its change sources and its check. The toolset only
iterates the configured families: building the catalogue asks each for `tools()`, `opsagent check` for `check()`.
A family that holds connections while its tools are in use (the MCP servers) is also an async context manager:
the caller enters it for as long as the tools may be called (`opsagent check` enters it for the check).

Two families are made of the others' contributions: `discover` (`opsagent_tools.discovery`) lists what their
`discovery()` sources offer, and `recent_changes` (`opsagent_tools.changes`) reads their `change_sources()`. Each of
those two owns the port the others implement, so it sits below this module and conforms to it without inheriting.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Protocol

from kernel import Tool
from opsagent_tools.changes import ChangeSource, ChangesSettings
from opsagent_tools.check_result import CheckResult
from opsagent_tools.discovery import DiscoverySettings, DiscoverySource


class ToolFamily(Protocol):
    """One configured family of tools. Families subclass it to inherit "nothing to list" and "no changes"."""

    keywords: tuple[str, ...] = ()
    """Words a task about what the family covers uses ("pods", "crashloop"): with each tool's name and description
    they choose which tools a run offers in full from its first turn (the others are in `load_tools`' index)."""

    @abstractmethod
    def tools(self) -> Sequence[Tool]:
        """The tools it offers the model, in catalogue order. A backend that cannot be set up (a missing secret, an
        unreadable kubeconfig) raises a ValueError that says what to fix, here, at start-up."""

    def discovery(self, settings: DiscoverySettings) -> DiscoverySource | None:
        """What it adds to `discover` (its kinds of listing), over the same client as its tools; None: nothing."""
        return None

    def change_sources(self, settings: ChangesSettings) -> Sequence[ChangeSource]:
        """What it adds to `recent_changes`, as far as `settings` leave each source on, in its own order."""
        return ()

    @abstractmethod
    async def check(self) -> list[CheckResult]:
        """What `opsagent check` says of it: one result per backend it reaches (none when it reaches none of its
        own). Never raises: a backend that fails, or cannot even be set up, is a failed result."""
