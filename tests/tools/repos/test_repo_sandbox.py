"""The repository path sandbox: every escape we could think of is refused, ordinary paths pass normalised.

Also the ref check and the symlink resolver that both backends share.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernel import ToolFailure
from opsagent_tools.repos.sandbox import (
    DEFAULT_PATH_POLICY,
    PathPolicy,
    check_ref,
    close_paths,
    resolve_link,
)
from opsagent_tools.repos.shapes import Diff, FileChange

ESCAPES = [
    "../etc/passwd",
    "..",
    "a/../../b",
    "./../x",
    "config/./../../x",
    "src/orders/../../../etc/shadow",
    "/etc/passwd",
    "//etc/passwd",
    "~/.ssh/config",
    "~root/notes",
    "..\\windows\\system32",
    "config\\..\\..\\x",
    "%2e%2e/etc/passwd",
    "..%2Fetc%2Fpasswd",
    "..%2fetc",
    "config%2F..%2F..%2Fetc",
    "%2E%2E%5Cetc",
    "..%5cetc",
    "%252e%252e%252fetc",
    "..%252Fetc",
    "config/app.yaml%00.png",
    "config/app.yaml\x00.png",
    "config/\napp.yaml",
    "\uff0e\uff0e\uff0fetc/passwd",  # fullwidth ../
    "a\u2024\u2024/b",  # one-dot leaders that NFKC turns into '.'
]


@pytest.mark.parametrize("path", ESCAPES)
def test_escapes_are_refused_with_what_is_allowed(path: str) -> None:
    with pytest.raises(ToolFailure) as caught:
        DEFAULT_PATH_POLICY.check(path)
    assert str(caught.value).startswith("Refused"), "people read what was refused"
    assert "relative to the repository root" in caught.value.hint, "the model, what a path looks like"


@pytest.mark.parametrize("path", [".git/config", ".GIT/config", "sub/.git/HEAD", "./.git/hooks/pre-commit", ".git"])
def test_git_internals_are_refused(path: str) -> None:
    with pytest.raises(ToolFailure, match=r"'\.git' directory is not readable"):
        DEFAULT_PATH_POLICY.check(path)


@pytest.mark.parametrize("path", ["", "   ", ".", "./", "a/.."])
def test_a_path_that_names_nothing_is_refused_unless_the_root_is_allowed(path: str) -> None:
    with pytest.raises(ToolFailure, match="Refused"):
        DEFAULT_PATH_POLICY.check(path)
    assert DEFAULT_PATH_POLICY.check(path, allow_root=True) == PurePosixPath(".")


DENIED = {
    ".env": ".env",
    "config/.env": ".env",
    ".ENV": ".env",
    "services/api/.Env": ".env",
    ".env.production": ".env.*",
    "deploy/prod.env": "*.env",
    "id_rsa": "id_rsa*",
    "keys/id_ed25519.pub": "id_ed25519*",
    "tls/server.pem": "*.pem",
    "tls/server.KEY": "*.key",
    "certs/client.p12": "*.p12",
    "certs/client.pfx": "*.pfx",
    "secrets.yaml": "secrets.*",
    "config/Secrets.JSON": "secrets.*",
    "k8s/db-secret.yaml": "*-secret.yaml",
    "deploy/secrets/db.yaml": "secrets/",
    "credentials": "credentials",
    ".aws/credentials": "credentials",
    "config/credentials.yml.enc": "credentials.*",
    ".npmrc": ".npmrc",
    ".pypirc": ".pypirc",
    "ops/passwords.kdbx": "*.kdbx",
    "kubeconfig": "kubeconfig",
    ".kube/config": ".kube/config",
    "home/.docker/config.json": ".docker/config.json",
    "infra/terraform.tfstate": "*.tfstate",
    "gcp-service-account.json": "*service-account*.json",
    "home/.ssh/known_hosts": ".ssh/",
}


@pytest.mark.parametrize(("path", "pattern"), DENIED.items())
def test_secret_files_are_refused_case_insensitively(path: str, pattern: str) -> None:
    assert DEFAULT_PATH_POLICY.denied_by(PurePosixPath(path)) == pattern
    with pytest.raises(ToolFailure) as caught:
        DEFAULT_PATH_POLICY.check(path)
    assert f"matching '{pattern}'" in str(caught.value)
    assert "not readable here" in str(caught.value)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("config/app.yaml", "config/app.yaml"),
        ("./config//app.yaml", "config/app.yaml"),
        ("config/", "config"),
        ("config/../README.md", "README.md"),
        (" config/app.yaml ", "config/app.yaml"),
        (".env.example", ".env.example"),
        ("config/.ENV.sample", "config/.ENV.sample"),
        ("src/secret_manager.py", "src/secret_manager.py"),
        ("pkg/credentials_provider.go", "pkg/credentials_provider.go"),
        ("docker/config.json", "docker/config.json"),
        (".github/workflows/deploy.yml", ".github/workflows/deploy.yml"),
        (".gitignore", ".gitignore"),
        ("docs/file with spaces.md", "docs/file with spaces.md"),
        ("src/--output=x.py", "src/--output=x.py"),
        ("..hidden/file", "..hidden/file"),
    ],
)
def test_ordinary_paths_pass_normalised(path: str, expected: str) -> None:
    assert DEFAULT_PATH_POLICY.check(path) == PurePosixPath(expected)


def test_extra_deny_patterns_add_to_the_defaults() -> None:
    policy = PathPolicy().with_extra_deny(["*.sqlite", "internal/", "config/prod.yaml"])
    for path in ["data/app.SQLITE", "internal/billing/rates.go", "config/prod.yaml", ".env"]:
        with pytest.raises(ToolFailure, match="not readable"):
            policy.check(path)
    assert policy.check("config/staging.yaml") == PurePosixPath("config/staging.yaml")


@given(
    st.text(alphabet=st.sampled_from(["a", ".", "/", "\\", "%", "2", "5", "c", "e", "f", "~", "g", "t", " ", "\x00"]))
)
def test_whatever_passes_stays_inside_the_repository(path: str) -> None:
    try:
        result = DEFAULT_PATH_POLICY.check(path, allow_root=True)
    except ToolFailure:
        return
    assert not result.is_absolute()
    assert ".." not in result.parts
    assert ".git" not in [p.lower() for p in result.parts]
    assert not {"\\", "\x00"} & set(str(result))
    assert not re.search(r"%[0-9a-f]{2}", str(result), re.IGNORECASE)


@pytest.mark.parametrize(
    ("link", "target", "expected"),
    [
        ("config/current.yaml", "app.yaml", "config/app.yaml"),
        ("config/x", "../README.md", "README.md"),
        ("config/x", "./nested/../app.yaml", "config/app.yaml"),
        ("leak", "/etc/passwd", None),
        ("config/x", "../../etc/hostname", None),
        ("x", "~/secrets", None),
        ("x", "..\\y", None),
        ("config/x", "..", None),
    ],
)
def test_symlink_targets_resolve_only_inside_the_repository(link: str, target: str, expected: str | None) -> None:
    resolved = resolve_link(PurePosixPath(link), target)
    assert resolved == (PurePosixPath(expected) if expected else None)


@pytest.mark.parametrize(
    "ref",
    [
        "--output=/tmp/x",
        "-p",
        "",
        "v2.13.2 v2.14.0",
        "v2.13.2..v2.14.0",
        "v1...v2",
        "HEAD:config/app.yaml",
        "a\nb",
        ".x",
    ],
)
def test_refs_that_could_be_options_ranges_or_paths_are_refused(ref: str) -> None:
    with pytest.raises(ToolFailure, match="Refused") as caught:
        check_ref(ref)
    assert "Pass a tag" in caught.value.hint


@pytest.mark.parametrize("ref", ["v2.14.0", "main", "release/2.14", "HEAD", "HEAD~1", "0123abcd" * 5])
def test_ordinary_refs_pass(ref: str) -> None:
    check_ref(ref)


def test_close_paths_prefers_the_same_file_name_elsewhere() -> None:
    names = ["config/app.yaml", "deploy/helm/values.yaml", "src/app.py", "README.md"]
    assert close_paths("app.yaml", names)[0] == "config/app.yaml"
    assert "config/app.yaml" in close_paths("config/app.yml", names)
    assert close_paths("nothing/like/this.txt", names) == []


def test_a_diff_over_budget_keeps_every_file_header_and_says_where_it_cut() -> None:
    big = "diff --git a/{0} b/{0}\n--- a/{0}\n+++ b/{0}\n@@ -1,300 +1,300 @@\n" + "".join(
        f"-old {i}\n+new {i}\n" for i in range(300)
    )
    changes = [FileChange(f"src/m{i}.py", "modified", 300, 300, patch=big.format(f"src/m{i}.py")) for i in range(5)]
    changes.append(FileChange("config/app.yaml", "modified", 1, 1, patch=big.format("config/app.yaml")[:120]))
    text = Diff("svc", "v1", "v2", changes, max_bytes=4000, max_patch_bytes_per_file=2000).render()
    assert text.splitlines()[0] == "v1..v2 in svc: 6 files changed, +1501 -1501"
    for change in changes:
        assert f"diff --git a/{change.path} b/{change.path}" in text
    assert text.count("…[patch cut: showing") == 5
    assert text.index("diff --git a/config/app.yaml") < text.index("diff --git a/src/m0.py")
    patches = text[text.index("diff --git") :]
    assert len(patches.encode()) < 4000 + 6 * 400  # the budget, plus headers and markers
