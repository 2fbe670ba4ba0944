"""The deployment files under deploy/: valid for their formats, and consistent with the code they ship.

Schemas come from packages that vendor them, so nothing is downloaded at test time:
- docker-compose.yml against the Compose Specification schema vendored by check-jsonschema;
- deploy/k8s against the strict Kubernetes schemas vendored by kubernetes-validate, for the oldest and the
  newest Kubernetes version that it ships;
- compose/prometheus.yml with `promtool check config` (the Debian package the metrics tests already need).

What no schema covers is checked against pyproject.toml and the code: the Dockerfile (base image against
requires-python, ENTRYPOINT and CMD against the console script and its parser, the HEALTHCHECK against the
route bot/serve.py serves, the COPY list against the packages the wheel includes), the Alertmanager config,
the kustomization, the wiring between Compose services, the environment variable names, and both shipped
configurations, which are loaded by the bot's settings model and served by a real `opsagent serve --http`.
No image is built and no container runs here: Docker is not available to the tests.
"""

from __future__ import annotations

import ast
import asyncio
import copy
import fnmatch
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any, get_args
from urllib.parse import urlsplit

import aiohttp
import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import all_versions
from packaging.specifiers import SpecifierSet
from pydantic import BaseModel

from bot.agent import build_llm
from bot.cli.commands import serve
from bot.cli.main import build_parser
from bot.serve import SHUTDOWN_TIMEOUT_S
from bot.settings import Settings, load_settings
from opsagent_tools.kubernetes.api import METRICS_ROUTES, ROUTES
from opsagent_tools.toolset import build_tools
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_workspace import BOT_TOKEN
from testkit.servers.local_server import free_port
from testkit.servers.prometheus import binary

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE_FILE = DEPLOY / "docker-compose.yml"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CODE_PACKAGES = ("bot", "kernel", "opsagent_tools")
K8S_VERSIONS = sorted({all_versions()[0], kubernetes_validate.latest_version()})
POSTGRES_IMAGE_VARIABLES = {"POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DB"}
"""The variables the postgres image reads to create its first user and database."""


# --- helpers --------------------------------------------------------------------------------------------


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def compose() -> dict[str, Any]:
    return load_yaml(COMPOSE_FILE)


def k8s(name: str) -> dict[str, Any]:
    return load_yaml(K8S / name)


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order: continuation lines joined, comment lines dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in (DEPLOY / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pending = f"{pending} {line}" if pending else line
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        keyword, _, rest = pending.partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    return instructions


def stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's stages, each starting with its FROM."""
    found: list[list[tuple[str, str]]] = []
    for instruction in dockerfile():
        if instruction[0] == "FROM":
            found.append([])
        found[-1].append(instruction)
    return found


def instruction(stage: list[tuple[str, str]], keyword: str) -> list[str]:
    return [args for name, args in stage if name == keyword]


def healthcheck_command() -> list[str]:
    (healthcheck,) = instruction(stages()[-1], "HEALTHCHECK")
    _options, _, command = healthcheck.partition(" CMD ")
    assert command, f"HEALTHCHECK has no CMD: {healthcheck}"
    return json.loads(command)


def health_url(command: list[str]) -> str:
    (url,) = re.findall(r"https?://[^'\"\s]+", " ".join(command))
    return url


def exposed_port() -> int:
    (port,) = instruction(stages()[-1], "EXPOSE")
    return int(port)


def serve_args(argv: list[str]) -> Any:
    """The namespace `opsagent` builds from these arguments; it must be HTTP mode of `serve`."""
    args = build_parser().parse_args(argv)
    assert args.run is serve.run, f"{argv} does not run `opsagent serve`"
    assert args.http, f"{argv} is not HTTP mode"
    return args


def code_strings() -> set[str]:
    """Every string literal in the shipped packages, docstrings left out."""
    strings: set[str] = set()
    for package in CODE_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(), filename=str(path))
            bare = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
            strings.update(
                node.value
                for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare
            )
    return strings


CODE_STRINGS = code_strings()


def env_file_names(path: Path) -> dict[str, str | None]:
    """NAME -> value for `NAME=value` lines, and NAME -> None for commented-out `# NAME=value` ones."""
    names: dict[str, str | None] = {}
    for line in path.read_text().splitlines():
        if match := re.match(r"^([A-Z][A-Z0-9_]*)=(.*)$", line):
            names[match[1]] = match[2]
        elif match := re.match(r"^#\s*([A-Z][A-Z0-9_]*)=", line):
            names.setdefault(match[1], None)
    return names


def compose_env_example() -> Path:
    (env_file,) = compose()["services"]["opsagent"]["env_file"]
    return DEPLOY / f"{env_file['path']}.example"


def deployment_container() -> dict[str, Any]:
    (container,) = k8s("deployment.yaml")["spec"]["template"]["spec"]["containers"]
    return container


def container_port(container: dict[str, Any], port: int | str) -> int:
    """A port number, or the number a container port name stands for."""
    if isinstance(port, int):
        return port
    (number,) = [p["containerPort"] for p in container["ports"] if p.get("name") == port]
    return number


def seconds(duration: str) -> float:
    """A Compose duration such as '30s' or '1m30s'."""
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", duration)
    assert parts, f"not a duration: {duration!r}"
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(value) * scale[unit] for value, unit in parts)


# --- every file ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(DEPLOY.rglob("*.y*ml")), ids=lambda path: str(path.relative_to(DEPLOY)))
def test_every_yaml_file_parses(path):
    documents = list(yaml.safe_load_all(path.read_text()))
    assert documents
    assert all(isinstance(document, dict) for document in documents)


# --- Dockerfile ---------------------------------------------------------------------------------------


def test_dockerfile_is_multi_stage_on_a_python_that_pyproject_allows():
    builder, runtime = stages()
    requires = SpecifierSet(PYPROJECT["project"]["requires-python"])
    images = []
    for stage in (builder, runtime):
        image = stage[0][1].split()[0]
        match = re.fullmatch(r"python:(\d+\.\d+)-slim(-\w+)?", image)
        assert match, f"expected an official python:X.Y-slim image, found {image}"
        assert requires.contains(f"{match[1]}.0"), f"{image} is outside requires-python {requires}"
        images.append(image)
    # The builder downloads CPython-specific wheels (aiohttp, pydantic-core): the runtime must be the same.
    assert images[0] == images[1]
    assert builder[0][1].split()[-2:] == ["AS", "builder"]
    (install,) = [run for run in instruction(runtime, "RUN") if "pip install" in run]
    assert "from=builder" in install
    assert "--no-index" in install


def test_dockerfile_copies_exactly_what_the_wheel_is_built_from():
    builder = stages()[0]
    copied = {source.rstrip("/") for args in instruction(builder, "COPY") for source in args.split()[:-1]}
    patterns = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if any(fnmatch.fnmatch(path.parent.name, pattern) for pattern in patterns)
    }
    assert packages == set(CODE_PACKAGES)
    assert copied == {"pyproject.toml", PYPROJECT["project"]["readme"], *packages}
    # The allowlist in Dockerfile.dockerignore lets through exactly what is copied.
    ignore = [line for line in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines() if line.strip()]
    rules = [line for line in ignore if not line.startswith("#")]
    assert rules[0] == "*"
    assert {rule[1:].rstrip("/") for rule in rules if rule.startswith("!")} == copied


def test_dockerfile_runs_the_console_script_in_http_mode_on_the_exposed_port():
    runtime = stages()[-1]
    (entrypoint,) = instruction(runtime, "ENTRYPOINT")
    (cmd,) = instruction(runtime, "CMD")
    (script,) = json.loads(entrypoint)
    assert PYPROJECT["project"]["scripts"][script] == "bot.cli.main:main"
    args = serve_args(json.loads(cmd))
    assert args.port == exposed_port()


def test_dockerfile_healthcheck_asks_healthz_on_the_exposed_port_with_python():
    command = healthcheck_command()
    assert command[0] == "python"  # slim images have no curl or wget
    url = urlsplit(health_url(command))
    assert (url.hostname, url.port, url.path) == ("127.0.0.1", exposed_port(), "/healthz")


def test_image_runs_as_a_fixed_non_root_user_with_git():
    runtime = stages()[-1]
    (user,) = instruction(runtime, "USER")
    uid, gid = (int(part) for part in user.split(":"))
    assert uid != 0
    assert gid != 0
    (create,) = [run for run in instruction(runtime, "RUN") if "useradd" in run]
    assert f"--uid {uid}" in create
    assert f"--gid {gid}" in create
    assert any(re.search(r"apt-get install\b.*\bgit\b", run) for run in instruction(runtime, "RUN"))
    pod = k8s("deployment.yaml")["spec"]["template"]["spec"]["securityContext"]
    assert (pod["runAsUser"], pod["runAsGroup"], pod["fsGroup"]) == (uid, gid, gid)


# --- Compose -------------------------------------------------------------------------------------------


def check_compose_schema(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_compose_file_matches_the_compose_specification():
    result = check_compose_schema(COMPOSE_FILE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_schema_check_catches_a_misspelled_key(tmp_path):
    broken = copy.deepcopy(compose())
    broken["services"]["opsagent"]["enviroment"] = broken["services"]["opsagent"].pop("environment")
    path = tmp_path / "docker-compose.yml"
    path.write_text(yaml.safe_dump(broken))
    result = check_compose_schema(path)
    assert result.returncode != 0
    assert "enviroment" in result.stdout


def test_compose_images_are_pinned_and_the_bot_is_built_from_this_tree():
    services = compose()["services"]
    assert set(services) == {"opsagent", "prometheus", "loki", "alertmanager", "postgres"}
    for name, service in services.items():
        image, _, tag = service["image"].rpartition(":")
        assert image, f"{name}: image {service['image']} has no tag"
        assert tag != "latest"
        assert re.search(r"\d", tag), f"{name}: tag {tag} names no version"
    build = services["opsagent"]["build"]
    assert (DEPLOY / build["context"]).resolve() == ROOT
    assert (ROOT / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    assert services["opsagent"]["image"] == f"opsagent:{PYPROJECT['project']['version']}"


def test_compose_files_it_mounts_exist_and_its_secrets_stay_out_of_git():
    for name, service in compose()["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).is_file(), f"{name} mounts {source}, which does not exist"
        for env_file in service.get("env_file", []):
            path = DEPLOY / env_file["path"]
            assert Path(f"{path}.example").is_file(), f"{name}: commit {env_file['path']}.example"
            ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT, check=False)
            assert ignored.returncode == 0, f"{env_file['path']} holds real secrets: git must ignore it"
    for name, secret in compose().get("secrets", {}).items():
        ignored = subprocess.run(["git", "check-ignore", "-q", str(DEPLOY / secret["file"])], cwd=ROOT, check=False)
        assert ignored.returncode == 0, f"secret {name} ({secret['file']}): git must ignore it"


def test_compose_publishes_ports_on_loopback_only():
    for name, service in compose()["services"].items():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), f"{name} publishes {port} beyond this machine"


def test_compose_bot_service_runs_http_mode_with_its_mounted_config():
    bot = compose()["services"]["opsagent"]
    args = serve_args(bot["command"])
    assert any(port.endswith(f":{args.port}") for port in bot["ports"])
    mounts = {target: source for source, target, *_ in (volume.split(":") for volume in bot["volumes"])}
    assert mounts[bot["environment"]["OPSAGENT_CONFIG"]] == "./compose/opsagent.toml"
    assert seconds(bot["stop_grace_period"]) > SHUTDOWN_TIMEOUT_S


def test_compose_services_point_at_each_other():
    services = compose()["services"]
    bot_port = serve_args(services["opsagent"]["command"]).port

    def service_at(url: str) -> str:
        parts = urlsplit(url if "//" in url else f"//{url}")
        assert parts.hostname in services, f"{url} names no Compose service"
        published = {int(port.rsplit(":", 1)[1]) for port in services[parts.hostname].get("ports", [])}
        assert parts.port in published, f"{url}: {parts.hostname} listens on {sorted(published)}"
        return parts.hostname

    config = tomllib.loads((DEPLOY / "compose" / "opsagent.toml").read_text())
    assert service_at(config["tools"]["metrics"]["url"]) == "prometheus"
    assert service_at(config["tools"]["logs"]["loki"]["url"]) == "loki"
    prometheus = load_yaml(DEPLOY / "compose" / "prometheus.yml")
    (alertmanagers,) = prometheus["alerting"]["alertmanagers"]
    (targets,) = alertmanagers["static_configs"]
    assert [service_at(target) for target in targets["targets"]] == ["alertmanager"]
    # Alertmanager: every route ends at a receiver that exists, and that receiver is the bot's /alertmanager,
    # with the bearer token from the secret Compose mounts into the alertmanager service.
    alertmanager = load_yaml(DEPLOY / "compose" / "alertmanager.yml")
    receivers = {receiver["name"]: receiver for receiver in alertmanager["receivers"]}
    routes = [alertmanager["route"], *alertmanager["route"].get("routes", [])]
    assert all(route["receiver"] in receivers for route in routes)
    (webhook,) = receivers[alertmanager["route"]["receiver"]]["webhook_configs"]
    url = urlsplit(webhook["url"])
    assert (url.hostname, url.port, url.path) == ("opsagent", bot_port, "/alertmanager")
    authorization = webhook["http_config"]["authorization"]
    assert authorization.get("type", "Bearer") == "Bearer"
    mounted = {f"/run/secrets/{name}" for name in services["alertmanager"]["secrets"]}
    assert authorization["credentials_file"] in mounted


def test_prometheus_config_passes_promtool():
    result = subprocess.run(
        [binary("promtool"), "check", "config", str(DEPLOY / "compose" / "prometheus.yml")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_postgres_credentials_are_the_ones_its_image_and_healthcheck_use():
    postgres = compose()["services"]["postgres"]
    (env_file,) = postgres["env_file"]
    names = env_file_names(DEPLOY / f"{env_file['path']}.example")
    assert set(names) == POSTGRES_IMAGE_VARIABLES
    check = " ".join(postgres["healthcheck"]["test"])
    assert set(re.findall(r"\$\$(\w+)", check)) <= set(names)


# --- Kubernetes ----------------------------------------------------------------------------------------


K8S_MANIFESTS = sorted(path.name for path in K8S.glob("*.yaml") if path.name != "kustomization.yaml")


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("name", K8S_MANIFESTS)
def test_k8s_manifest_matches_the_strict_kubernetes_schema(name, version):
    for document in yaml.safe_load_all((K8S / name).read_text()):
        kubernetes_validate.validate(document, version, strict=True)


def test_k8s_schema_check_catches_a_misspelled_field():
    broken = k8s("deployment.yaml")
    broken["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesytem"] = True
    with pytest.raises(kubernetes_validate.ValidationError, match="readOnlyRootFilesytem"):
        kubernetes_validate.validate(broken, K8S_VERSIONS[-1], strict=True)


def test_kustomization_applies_every_manifest_but_the_secret_template():
    kustomization = k8s("kustomization.yaml")
    assert kustomization["kind"] == "Kustomization"
    assert sorted(kustomization["resources"]) == sorted(set(K8S_MANIFESTS) - {"secret.example.yaml"})
    namespace = k8s("namespace.yaml")["metadata"]["name"]
    assert kustomization["namespace"] == namespace
    for name in K8S_MANIFESTS:
        assert k8s(name)["metadata"].get("namespace", namespace) == namespace
    (image,) = kustomization["images"]
    assert deployment_container()["image"].rpartition(":")[0] == image["name"]
    assert image["newTag"] == PYPROJECT["project"]["version"]


def test_deployment_runs_http_mode_locked_down_with_probes_on_healthz():
    deployment = k8s("deployment.yaml")
    pod = deployment["spec"]["template"]["spec"]
    container = deployment_container()
    args = serve_args(container["args"])
    assert container_port(container, "http") == args.port == exposed_port()
    for probe in ("livenessProbe", "readinessProbe"):
        check = container[probe]["httpGet"]
        assert check["path"] == urlsplit(health_url(healthcheck_command())).path == "/healthz"
        assert container_port(container, check["port"]) == args.port
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    mounts = {mount["mountPath"]: mount["name"] for mount in container["volumeMounts"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]
    assert {"requests", "limits"} <= set(container["resources"])
    assert pod["terminationGracePeriodSeconds"] > SHUTDOWN_TIMEOUT_S
    # OPSAGENT_CONFIG names the ConfigMap's key where it is mounted.
    env = {variable["name"]: variable["value"] for variable in container["env"]}
    config_path = Path(env["OPSAGENT_CONFIG"])
    config_volume = volumes[mounts[str(config_path.parent)]]
    assert config_volume["configMap"]["name"] == k8s("configmap.yaml")["metadata"]["name"]
    assert config_path.name in k8s("configmap.yaml")["data"]
    (source,) = container["envFrom"]
    assert source["secretRef"]["name"] == k8s("secret.example.yaml")["metadata"]["name"]


def test_service_and_pdb_select_the_deployments_pods():
    deployment = k8s("deployment.yaml")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    service = k8s("service.yaml")
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["selector"].items() <= labels.items()
    (port,) = service["spec"]["ports"]
    assert port["port"] == 80
    assert container_port(deployment_container(), port["targetPort"]) == 3000
    pdb = k8s("poddisruptionbudget.yaml")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["minAvailable"] < deployment["spec"]["replicas"]


def test_the_read_only_role_grants_exactly_what_the_kubernetes_tools_read():
    """get and list on the resources opsagent_tools/kubernetes/api.py can request (pods/log for logs), no more:
    no other verb, no Secret, no ConfigMap; bound to the service account the deployment runs as."""
    role = k8s("clusterrole.yaml")
    granted = {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    routes = [*ROUTES.values(), *METRICS_ROUTES.values()]
    groups = {route.prefix: "" if route.prefix == "api/v1" else route.prefix.split("/")[1] for route in routes}
    read = {(groups[route.prefix], route.plural) for route in routes} | {("", "pods/log")}
    assert granted == {(group, resource, verb) for group, resource in read for verb in ("get", "list")}
    assert not {resource for _, resource, _ in granted} & {"secrets", "configmaps", "*"}
    binding = k8s("clusterrolebinding.yaml")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": role["metadata"]["name"],
    }
    (subject,) = binding["subjects"]
    account = k8s("serviceaccount.yaml")["metadata"]
    assert (subject["kind"], subject["name"], subject["namespace"]) == (
        "ServiceAccount",
        account["name"],
        account["namespace"],
    )
    pod = k8s("deployment.yaml")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == account["name"]
    assert pod["automountServiceAccountToken"] is True, "in_cluster = true reads the mounted token"


def test_secret_template_holds_placeholders_only():
    secret = k8s("secret.example.yaml")
    assert "NOT FOR REAL USE" in (K8S / "secret.example.yaml").read_text()
    assert secret["stringData"]
    assert all("REPLACE_ME" in value for value in secret["stringData"].values())
    for value in env_file_names(compose_env_example()).values():
        assert value is None or "replace-me" in value


# --- names and configurations shared with the code ------------------------------------------------------


def deployed_env_names() -> list[str]:
    names = set(env_file_names(compose_env_example()))
    names |= set(compose()["services"]["opsagent"]["environment"])
    names |= set(k8s("secret.example.yaml")["stringData"])
    names |= {variable["name"] for variable in deployment_container()["env"]}
    return sorted(names)


def settings_env_names() -> set[str]:
    """`OPSAGENT_<SECTION>__<KEY>`: the nested settings pydantic-settings reads from the environment."""
    names = set()
    for section, field in Settings.model_fields.items():
        model = next((a for a in (field.annotation, *get_args(field.annotation)) if isinstance(a, type)), None)
        if model is not None and issubclass(model, BaseModel):
            names |= {f"OPSAGENT_{section.upper()}__{key.upper()}" for key in model.model_fields}
    return names


@pytest.mark.parametrize("name", deployed_env_names())
def test_environment_variable_is_one_the_code_reads(name):
    assert name in CODE_STRINGS or name in settings_env_names(), (
        f"{name} is set by a deploy file, but no code in {CODE_PACKAGES} names it and it is no [section] key"
    )


def shipped_config(kind: str, tmp_path: Path) -> tuple[Path, dict[str, str], list[str]]:
    """The configuration file, the secrets' environment and the `opsagent` arguments a deployment ships."""
    if kind == "compose":
        bot = compose()["services"]["opsagent"]
        secrets = {name: value for name, value in env_file_names(compose_env_example()).items() if value}
        return DEPLOY / "compose" / "opsagent.toml", secrets, bot["command"]
    path = tmp_path / "opsagent.toml"
    path.write_text(k8s("configmap.yaml")["data"]["opsagent.toml"])
    return path, dict(k8s("secret.example.yaml")["stringData"]), deployment_container()["args"]


def clean_environ() -> dict[str, str]:
    prefixes = ("OPSAGENT_", "SLACK_", "OPENAI_", "ANTHROPIC_")
    return {key: value for key, value in os.environ.items() if not key.startswith(prefixes)}


@pytest.mark.parametrize("kind", ["compose", "k8s"])
def test_shipped_config_loads_with_the_bot_settings(kind, tmp_path, monkeypatch):
    config, secrets, _ = shipped_config(kind, tmp_path)
    keep = clean_environ()
    for key in list(os.environ):
        if key not in keep:
            monkeypatch.delenv(key)
    for key, value in {**secrets, "OPSAGENT_CONFIG": str(config)}.items():
        monkeypatch.setenv(key, value)
    settings = load_settings()
    assert build_llm(settings.llm) is not None
    assert {"query_metrics", "search_logs"} <= {tool.name for tool in build_tools(settings.tools)}
    assert settings.policy.mode == "read_only"
    assert settings.store.url.startswith("postgresql://")  # replicas share the PostgreSQL run store


@pytest.mark.parametrize("kind", ["compose", "k8s"])
async def test_serve_with_shipped_config_passes_the_image_healthcheck(kind, tmp_path):
    """`opsagent <args>` as the deployment runs it, on a free loopback port, against a fake Slack: it serves
    the probes' path, the Dockerfile's HEALTHCHECK command passes, and SIGTERM ends it in the grace period."""
    config, secrets, argv = shipped_config(kind, tmp_path)
    serve_args(argv)
    port = free_port()
    at = argv.index("--port") + 1
    argv = [*argv[:at], str(port), *argv[at + 1 :]]
    command = healthcheck_command()
    template = f":{exposed_port()}/"
    assert template in " ".join(command)
    healthcheck = [sys.executable, *(part.replace(template, f":{port}/") for part in command[1:])]
    grace = k8s("deployment.yaml")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    probe = deployment_container()["readinessProbe"]["httpGet"]["path"]

    async def run_healthcheck() -> int:
        process = await asyncio.create_subprocess_exec(*healthcheck, stdin=asyncio.subprocess.DEVNULL)
        return await asyncio.wait_for(process.wait(), 10)

    async with SlackFake() as slack:
        env = {
            **clean_environ(),
            **secrets,
            "OPSAGENT_CONFIG": str(config),
            "OPSAGENT_STORE__URL": f"sqlite:///{tmp_path}/runs.db",
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_API_URL": slack.api_url,
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot.cli.main",
            *argv,
            "--host",
            "127.0.0.1",
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            async with aiohttp.ClientSession() as http, asyncio.timeout(30):
                while True:
                    if proc.returncode is not None:
                        output = (await proc.communicate())[0].decode()
                        pytest.fail(f"opsagent serve exited with {proc.returncode}:\n{output}", pytrace=False)
                    try:
                        async with http.get(f"http://127.0.0.1:{port}{probe}") as response:
                            if response.status == 200:
                                break
                    except aiohttp.ClientError:
                        pass
                    await asyncio.sleep(0.1)
            assert await run_healthcheck() == 0
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            output = (await asyncio.wait_for(proc.communicate(), grace))[0].decode()
    assert proc.returncode == 0, output
    assert await run_healthcheck() != 0, f"{shlex.join(healthcheck)} passed with nothing listening"
