"""Credentials where Kubernetes keeps them (env literals, exec probes, a container's command, its log) come out of the
real tools masked, through the fake API server's REST shapes, in what the model reads and in the trace."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kernel import Agent, ScriptedModel, ToolRegistry, text_turn
from samples.credentials import CLEAR, COOKIE_LINES, ENV_LITERALS, fake
from samples.kube_objects import NOW, meta, pod, stamp
from testkit.fakes.kube_api import LogLines
from worlds.kube_tools import text_of, tools_for

POD = "ledger-5c8d7f9b4-q7w2e"
LITERALS = [(name, value, why) for name, value, why in ENV_LITERALS if "\n" not in value]
"""The env literals of the corpus (a PEM does not fit one env line; the redactor's own tests cover it)."""
MASKED = [(name, value) for name, value, why in LITERALS if why != CLEAR]
KEPT = [(name, value) for name, value, why in LITERALS if why == CLEAR]
REDIS_PW, MYSQL_PW, CURL_PW, INIT_TOKEN, DEBUG_PW = "r3d1s-Pw", "My-R00t", "curl-Pw1", "in1t-T0ken", "d3bug-Pw"
COOKIE = "c00kie-" + fake("", 24)
LOGGED = {"HMAC_KEY": fake("", 64, "0123456789abcdef"), "LDAP_BIND_PW": "ld4p-Logged", "APP_KEY": "app-K3y-logged"}


def exec_probe(command: list[str]) -> dict[str, Any]:
    return {"exec": {"command": command}, "periodSeconds": 10, "timeoutSeconds": 2, "failureThreshold": 3}


def ledger_pod() -> dict[str, Any]:
    """A pod with every place a credential hides: env literals, probes, command and args, init and debug containers."""
    found = pod(POD, "node-a", app="ledger", rs="ledger-5c8d7f9b4", state={"running": {"startedAt": stamp(5)}})
    app = found["spec"]["containers"][0]
    app["env"] = [{"name": name, "value": value} for name, value, _ in LITERALS]
    app["env"].append({"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "ledger-db", "key": "password"}}})
    app["command"] = ["/app/ledger"]
    app["args"] = ["--db-password", "arg-Pw-1", "--listen", ":8080"]
    app["livenessProbe"] = exec_probe(["redis-cli", "-h", "127.0.0.1", "-a", REDIS_PW, "ping"])
    app["readinessProbe"] = exec_probe(["sh", "-c", f"mysql -uroot -p{MYSQL_PW} -e 'select 1'"])
    app["startupProbe"] = exec_probe(["curl", "-fsS", "-u", f"ops:{CURL_PW}", "http://127.0.0.1:8080/healthz"])
    found["spec"]["initContainers"] = [
        {"name": "migrate", "image": "registry.example.com/ledger-migrate:v2", "command": ["migrate", "--token", INIT_TOKEN],
         "env": [{"name": "LICENSE_KEY", "value": "ACME-INIT-99QX-P2LM"}]},
    ]  # fmt: skip
    found["spec"]["ephemeralContainers"] = [
        {"name": "debugger", "image": "redis:7", "command": ["redis-cli", "-a", DEBUG_PW], "targetContainerName": "app",
         "env": [{"name": "ADMIN_PW", "value": "debug-Admin-pw"}]},
    ]  # fmt: skip
    return found


def ledger_deployment() -> dict[str, Any]:
    """A deployment whose pod template holds the same: describe shows templates as they are, not only pods."""
    spec = ledger_pod()["spec"]
    spec.pop("ephemeralContainers"), spec.pop("nodeName")
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": meta("ledger", "shop", 600, annotations={"deployment.kubernetes.io/revision": "2"}),
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "ledger"}},
                 "template": {"metadata": {"labels": {"app": "ledger"}}, "spec": spec}},
        "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1},
    }  # fmt: skip


def ledger_log() -> LogLines:
    """What the container printed: its environment at start-up, then requests with cookies mid-line."""
    lines = [
        f"HMAC_KEY={LOGGED['HMAC_KEY']}",
        f"+ export LDAP_BIND_PW={LOGGED['LDAP_BIND_PW']}",
        f'env: {{"APP_KEY": "{LOGGED["APP_KEY"]}", "PORT": "8080"}}',
        f"APP_KEY: {LOGGED['APP_KEY']}",
        f"GET /ledger 200 4ms cookie: sid={COOKIE}; theme=dark ua=kube-probe/1.31",
        *(line for line, _, _ in COOKIE_LINES),
        f'{{"level":"warn","msg":"retrying","cookie":"sid={COOKIE}","attempt":2}}',
    ]
    return LogLines([(NOW - timedelta(seconds=60 - i), line) for i, line in enumerate(lines)])


def all_secrets() -> list[str]:
    cookie_secrets = [secret for _, secrets, _ in COOKIE_LINES for secret in secrets]
    by_position = [
        REDIS_PW,
        MYSQL_PW,
        CURL_PW,
        INIT_TOKEN,
        DEBUG_PW,
        "arg-Pw-1",
        "ACME-INIT-99QX-P2LM",
        "debug-Admin-pw",
    ]
    return [*(value for _, value in MASKED), *by_position, COOKIE, *LOGGED.values(), *cookie_secrets]


async def test_describe_masks_every_env_literal_probe_and_command_credential_and_keeps_the_rest(cluster, tmp_path):
    cluster.objects += [ledger_pod(), ledger_deployment()]
    tools = tools_for(cluster, tmp_path)
    for kind, name in (("pod", POD), ("deployment", "ledger")):
        text = await text_of(tools, "k8s_describe", kind=kind, name=name)
        for secret in all_secrets():
            assert secret not in text, f"{kind}: {secret!r} leaked"
        for name_, _ in MASKED:
            assert f"{name_}=[REDACTED:" in text, name_
        for name_, value in KEPT:
            assert f"{name_}={value}" in text, f"{kind}: a near-miss must stay: {name_}={value}"
        assert "DB_PASSWORD=<secret ledger-db key password>" in text, "a reference names its secret and key"
        assert "liveness exec redis-cli -h 127.0.0.1 -a [REDACTED:password] ping (" in text
        assert "readiness exec sh -c mysql -uroot -p[REDACTED:password] -e 'select 1' (" in text
        assert "startup exec curl -fsS -u ops:[REDACTED:basic_auth] http://127.0.0.1:8080/healthz (" in text
        assert "  command: /app/ledger --db-password [REDACTED:password] --listen :8080" in text
        assert "init container migrate: image registry.example.com/ledger-migrate:v2" in text
        assert "  command: migrate --token [REDACTED:token]" in text
    pod_text = await text_of(tools, "k8s_describe", kind="pod", name=POD)
    assert "ephemeral container debugger: image redis:7" in pod_text
    assert "  command: redis-cli -a [REDACTED:password]" in pod_text


async def test_a_containers_logged_env_and_mid_line_cookies_are_masked_in_its_log(cluster, tmp_path):
    cluster.objects.append(ledger_pod())
    cluster.logs[("shop", POD, "app", False)] = ledger_log()
    text = await text_of(tools_for(cluster, tmp_path), "k8s_logs", pod=POD, limit=50)
    for secret in [COOKIE, *LOGGED.values(), *(s for _, secrets, _ in COOKIE_LINES for s in secrets)]:
        assert secret not in text
    assert "cookie: sid=[REDACTED:cookie]; theme=[REDACTED:cookie] ua=kube-probe/1.31" in text
    assert "HMAC_KEY=[REDACTED:api_key]" in text
    assert "export LDAP_BIND_PW=[REDACTED:password]" in text
    assert "APP_KEY: [REDACTED:api_key]" in text
    assert "attempt=2" in text or '"attempt":2' in text, "the rest of a JSON line is kept"


async def test_what_the_model_and_the_trace_read_holds_none_of_them(cluster, tmp_path):
    cluster.objects += [ledger_pod(), ledger_deployment()]
    cluster.logs[("shop", POD, "app", False)] = ledger_log()
    model = ScriptedModel(
        [
            text_turn("k8s_describe", "The pod first.", kind="pod", name=POD),
            text_turn("k8s_describe", "Its template.", kind="deployment", name="ledger"),
            text_turn("k8s_logs", "What it printed.", pod=POD, limit=50),
            text_turn("finish", answer="ledger restarts on a failing readiness probe"),
        ]
    )
    result = await Agent(llm=model, tools=ToolRegistry(tools_for(cluster, tmp_path))).run("ledger is flapping")
    seen = "\n".join(message.content for request in model.requests for message in request.messages)
    trace = result.to_json()
    assert [step.error for step in result.steps[:3]] == [None, None, None]
    for secret in all_secrets():
        assert secret not in seen, f"the model read {secret!r}"
        assert secret not in trace, f"the trace holds {secret!r}"
    assert "[REDACTED:cookie]" in seen
    assert "exec redis-cli -h 127.0.0.1 -a [REDACTED:password] ping" in seen
