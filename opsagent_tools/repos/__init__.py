"""Code: read a file at any ref and compare two refs, in local git clones or on GitHub, inside a path sandbox.

Both backends share one interface and one sandbox, so a path the model invents cannot leave the repository.
"""

from opsagent_tools.repos.family import ReposFamily
from opsagent_tools.repos.settings import RepoConfig, RepoSettings
from opsagent_tools.repos.tools import RepoBackend, build_backends, repo_tools

__all__ = ["RepoBackend", "RepoConfig", "RepoSettings", "ReposFamily", "build_backends", "repo_tools"]
