"""Links to a repository's files and comparisons at a ref: GitHub's own pages, or a local clone's web home when
`[links] git_web_url` names one; a local clone without it has none (a file:// link would open nowhere useful).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from kernel import SourceLink
from opsagent_tools.links import LinkSettings, page_url, public_base
from opsagent_tools.repos.github_api import repository_web_url


@dataclass(frozen=True, slots=True)
class RepoLinks:
    """One repository's pages for people, in GitHub's layout (`/blob/REF/PATH`, `/tree/…`, `/compare/A...B`)."""

    web: str | None
    """The repository's page, public and credential-free; None: the repository has no web pages."""

    @classmethod
    def of(cls, name: str, github: str | None, api_url: str, links: LinkSettings) -> RepoLinks:
        """For a GitHub repository (`github` is owner/name), its page on the API's host; for a local clone named
        `name`, `[links] git_web_url` with `{repo}` replaced, if set."""
        if github is not None:
            return cls(public_base(repository_web_url(api_url, github)))
        template = links.git_web_url
        return cls(public_base(template.replace("{repo}", quote(name, safe=""))) if template else None)

    def file(self, ref: str, path: str) -> SourceLink | None:
        """The file at `ref`."""
        return self._page("file", f"blob/{ref}/{path}")

    def directory(self, ref: str, path: str) -> SourceLink | None:
        """The directory (the root for "") at `ref`."""
        return self._page("tree", f"tree/{ref}/{path}".rstrip("/"))

    def compare(self, base: str, head: str) -> SourceLink | None:
        """What changed from `base` to `head` (three dots: the changes on `head` since the two diverged)."""
        return self._page("diff", f"compare/{base}...{head}")

    def _page(self, label: str, path: str) -> SourceLink | None:
        return SourceLink(label, page_url(self.web, path)) if self.web is not None else None
