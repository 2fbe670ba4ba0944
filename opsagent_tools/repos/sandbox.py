"""Path and ref safety shared by both repository backends.

A model-supplied path must stay inside the repository and away from secrets, whatever its encoding.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from kernel import ToolFailure

DEFAULT_DENY_PATTERNS: tuple[str, ...] = tuple(
    """
    .env .env.* *.env .envrc
    *.pem *.key *.p8 *.p12 *.pfx *.jks *.keystore *.ppk *.keytab *.kdbx
    id_rsa* id_dsa* id_ecdsa* id_ed25519*
    secrets.* secret.* *.secret *.secrets
    *-secret.yaml *-secret.yml *-secrets.yaml *-secrets.yml *_secret.yaml *_secret.yml *_secrets.yaml *_secrets.yml
    credentials credentials.* .git-credentials *service-account*.json
    .npmrc .pypirc .netrc _netrc .pgpass .htpasswd .dockercfg .docker/config.json .s3cfg .vault-token
    kubeconfig kubeconfig.* *.kubeconfig .kube/config *.tfstate *.tfstate.backup
    secrets/ .ssh/ .gnupg/
    """.split()  # noqa: SIM905 - one family per line reads better than a 50-item literal
)
"""Matched case-insensitively. A pattern with no '/' matches the file name; one ending in '/' matches a
directory anywhere in the path; any other pattern with a '/' matches the end of the path."""

DEFAULT_ALLOW_PATTERNS: tuple[str, ...] = (".env.example", ".env.sample", ".env.template", ".env.dist", "*.env.example")
"""Templates that document settings without values: exceptions to the deny list (file names only)."""

ALLOWED_PATHS_HINT = (
    "Paths are relative to the repository root and written plainly with '/' between parts, "
    "e.g. 'config/app.yaml' or 'src/orders/handler.py' ('' or '.' is the root)."
)

_PERCENT_ESCAPE = re.compile(r"%[0-9a-f]{2}", re.IGNORECASE)
"""Any percent-escape: '%2f', '%2e%2e', '%5c', '%00' and double encodings like '%252f' all start like this."""


@dataclass(frozen=True)
class PathPolicy:
    """Which repository paths a tool may read: `check` normalises a path or refuses it with advice."""

    deny_patterns: tuple[str, ...] = DEFAULT_DENY_PATTERNS
    allow_patterns: tuple[str, ...] = DEFAULT_ALLOW_PATTERNS

    def with_extra_deny(self, patterns: Iterable[str]) -> PathPolicy:
        """This policy with more deny patterns (same syntax as the defaults)."""
        extra = tuple(p for p in patterns if p and p not in self.deny_patterns)
        return PathPolicy(deny_patterns=self.deny_patterns + extra, allow_patterns=self.allow_patterns)

    def denied_by(self, path: PurePosixPath | str) -> str | None:
        """The deny pattern `path` (already normalised) matches, or None when it may be read."""
        parts = [part.lower() for part in PurePosixPath(path).parts]
        if not parts:
            return None
        name = parts[-1]
        if any(fnmatchcase(name, allowed.lower()) for allowed in self.allow_patterns):
            return None
        joined = "/".join(parts)
        for pattern in self.deny_patterns:
            lowered = pattern.lower()
            if lowered.endswith("/"):
                if lowered.rstrip("/") in parts:
                    return pattern
            elif "/" in lowered:
                if fnmatchcase(joined, lowered) or fnmatchcase(joined, "*/" + lowered):
                    return pattern
            elif fnmatchcase(name, lowered):
                return pattern
        return None

    def check(self, path: str, *, allow_root: bool = False) -> PurePosixPath:
        """`path` normalised (no '.', '..' or empty parts), or a `ToolFailure` saying what is allowed.

        The root is `PurePosixPath('.')`, accepted only with `allow_root` (for directory listings).
        """
        shown = _shown(path)
        if not path.strip() and not allow_root:
            raise ToolFailure("Refused an empty path.", hint=ALLOWED_PATHS_HINT)
        _refuse_unsafe_text(path, shown)
        raw = path.strip()
        if raw.startswith("/"):
            raise ToolFailure(f"Refused path {shown}: absolute paths are not allowed.", hint=ALLOWED_PATHS_HINT)
        if raw.startswith("~"):
            raise ToolFailure(f"Refused path {shown}: '~' (a home directory) is not allowed.", hint=ALLOWED_PATHS_HINT)
        parts: list[str] = []
        for part in raw.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    raise ToolFailure(f"Refused path {shown}: it leaves the repository.", hint=ALLOWED_PATHS_HINT)
                parts.pop()
                continue
            parts.append(part)
        if any(part.lower() == ".git" for part in parts):
            raise ToolFailure(
                f"Refused path {shown}: git's internal '.git' directory is not readable.",
                hint="Read tracked files instead; compare_refs shows what changed between versions.",
            )
        if not parts:
            if allow_root:
                return PurePosixPath(".")
            raise ToolFailure(f"Refused path {shown}: it names no file.", hint=ALLOWED_PATHS_HINT)
        normalised = PurePosixPath(*parts)
        pattern = self.denied_by(normalised)
        if pattern is not None:
            raise ToolFailure(
                f"Refused path '{normalised}': files that usually hold secrets (matching '{pattern}') are not "
                "readable here.",
                hint="Read the configuration that references the secret instead (config files, Helm values, "
                "deployment manifests), or ask a human for the value.",
            )
        return normalised


DEFAULT_PATH_POLICY = PathPolicy()


def git_path(path: PurePosixPath) -> str:
    """The path as git and the GitHub API spell it: '' for the root."""
    return "" if path == PurePosixPath(".") else str(path)


def resolve_link(link: PurePosixPath, target: str) -> PurePosixPath | None:
    """Where a symlink at `link` pointing to `target` lands inside the repository, or None if it escapes."""
    if not target or target.startswith(("/", "~")) or "\\" in target or "\x00" in target:
        return None
    parts = list(link.parent.parts) if link.parent != PurePosixPath(".") else []
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
    return PurePosixPath(*parts) if parts else None


def _refuse_unsafe_text(path: str, shown: str) -> None:
    if "\x00" in path:
        raise ToolFailure(f"Refused path {shown}: it contains a NUL byte.", hint=ALLOWED_PATHS_HINT)
    if any(unicodedata.category(ch) == "Cc" for ch in path):
        raise ToolFailure(f"Refused path {shown}: it contains control characters.", hint=ALLOWED_PATHS_HINT)
    if "\\" in path:
        raise ToolFailure(f"Refused path {shown}: backslashes are not path separators here.", hint=ALLOWED_PATHS_HINT)
    if _PERCENT_ESCAPE.search(path):
        raise ToolFailure(f"Refused path {shown}: percent-encoding is not accepted.", hint=ALLOWED_PATHS_HINT)
    for ch in path:
        if ch not in "/.\\" and any(c in "/.\\" for c in unicodedata.normalize("NFKC", ch)):
            raise ToolFailure(
                f"Refused path {shown}: it contains a look-alike of '/', '.' or '\\' ({ch!r}).",
                hint=ALLOWED_PATHS_HINT,
            )


def _shown(path: str) -> str:
    text = path if len(path) <= 120 else path[:117] + "..."
    return repr(text)


# --- refs and suggestions --------------------------------------------------------------------------

REF_HINT = "Pass a tag (e.g. 'v2.14.0'), a branch (e.g. 'main') or a commit SHA."
ROOT_HINT = "Paths are relative to the repository root; read_repo_file with path '' lists the root."
"""The model's hint when a path names nothing."""


def check_ref(ref: str) -> None:
    """Refuse refs that could be read as options, ranges or paths; git and GitHub resolve the rest."""
    shown = _shown(ref)
    if not ref:
        raise ToolFailure("Refused an empty ref.", hint=REF_HINT)
    if ref.startswith("-"):
        raise ToolFailure(f"Refused ref {shown}: refs cannot start with '-'.", hint=REF_HINT)
    if len(ref) > 200 or any(ch.isspace() or unicodedata.category(ch) == "Cc" for ch in ref):
        raise ToolFailure(f"Refused ref {shown}: refs have no spaces or control characters.", hint=REF_HINT)
    if ".." in ref or ":" in ref or "\\" in ref or "//" in ref or ref.startswith(".") or "/." in ref:
        raise ToolFailure(
            f"Refused ref {shown}: a ref has no '..', ':', backslashes or parts starting with '.'.",
            hint="Pass one ref (compare_refs takes base and head separately; the path is its own argument). "
            + REF_HINT,
        )


def close_paths(target: str, names: Sequence[str], limit: int = 5) -> list[str]:
    """Paths in `names` that `target` probably meant: the same file name elsewhere, then similar paths."""
    names = names[:50_000]
    wanted = PurePosixPath(target).name.lower()
    same_name = [n for n in names if PurePosixPath(n).name.lower() == wanted]
    similar = difflib.get_close_matches(target, names, n=limit, cutoff=0.75)
    by_name: dict[str, list[str]] = {}
    for n in names:
        by_name.setdefault(PurePosixPath(n).name.lower(), []).append(n)
    similar_names = difflib.get_close_matches(wanted, list(by_name), n=limit, cutoff=0.75)
    found = same_name + similar + [p for name in similar_names for p in by_name[name]]
    return list(dict.fromkeys(found))[:limit]
