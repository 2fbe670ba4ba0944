"""A body nested 200,000 deep from the API server is a tool error that says so, never a raw RecursionError; and
the bounded loader every backend body goes through keeps what `json` read before (a lone surrogate, a BOM)."""

from __future__ import annotations

import json

import pytest

from kernel import ErrorKind
from opsagent_tools.bounded_json import MAX_JSON_DEPTH, JsonTooDeep, load_json
from worlds.kube_tools import call

DEEP = b"[" * 200_000 + b"]" * 200_000


@pytest.mark.parametrize(
    ("path", "tool", "args"),
    [
        ("/api/v1/namespaces/shop/pods", "k8s_pods", {}),
        ("/apis/apps/v1/namespaces/shop/deployments/checkout", "k8s_describe", {"kind": "deployment", "name": "checkout"}),
    ],
    ids=["list", "get"],
)  # fmt: skip
async def test_a_body_nested_200k_deep_is_a_clear_tool_error(tools, cluster, path, tool, args):
    cluster.bodies[path] = (200, DEEP)
    outcome = await call(tools, tool, **args)
    assert outcome.error is not None
    assert outcome.error.kind is ErrorKind.EXCEPTION
    assert f"answered the request to {'list pods' if tool == 'k8s_pods' else 'get deployment'}" in outcome.text
    assert f"with JSON nested deeper than {MAX_JSON_DEPTH} levels, deeper than any Kubernetes object" in outcome.text
    assert "Tell the user, and use other evidence" in outcome.text, "the model is told what to do"
    assert outcome.error is not None
    assert "Tell the user" not in outcome.error.said, "a person is told what is wrong, not what the model should do"
    assert outcome.error.said.endswith("may be broken or hostile.")
    assert "Recursion" not in outcome.text
    assert "Traceback" not in outcome.text


async def test_an_error_status_nested_deep_still_reads_as_its_http_status(tools, cluster):
    # A 503 whose body is no Status object: the code decides the message, the body's start is only quoted.
    cluster.bodies["/api/v1/namespaces/shop/pods"] = (503, DEEP)
    outcome = await call(tools, "k8s_pods")
    assert outcome.error is not None
    assert "The Kubernetes API server failed to list pods in namespace 'shop' (HTTP 503: [[[[" in outcome.text
    assert "Recursion" not in outcome.text


@pytest.mark.parametrize(
    ("text", "depth_ok"),
    [
        ("[" * MAX_JSON_DEPTH + "1" + "]" * MAX_JSON_DEPTH, True),
        ("[" * (MAX_JSON_DEPTH + 1) + "1" + "]" * (MAX_JSON_DEPTH + 1), False),
        ('["\\ud83d", ' + "[" * (MAX_JSON_DEPTH - 1) + "1" + "]" * MAX_JSON_DEPTH, True),
        ('["\\ud83d", ' + "[" * MAX_JSON_DEPTH + "1" + "]" * (MAX_JSON_DEPTH + 1), False),
        ('["\\ud83d", ' + "[" * 200_000 + "]" * 200_001, False),
    ],
    ids=["at-the-bound", "past-it", "fallback-at-the-bound", "fallback-past-it", "fallback-200k"],
)
def test_the_bound_is_the_same_whichever_parser_reads_the_text(text, depth_ok):
    if depth_ok:
        assert load_json(text) == json.loads(text)
    else:
        with pytest.raises(JsonTooDeep, match=f"^JSON nested deeper than {MAX_JSON_DEPTH} levels$"):
            load_json(text)


@pytest.mark.parametrize(
    "text",
    [
        b'{"msg": "card declined \\ud83d"}',
        b'\xef\xbb\xbf{"kind": "PodList"}',
        b'{"n": 1e400, "big": 123456789012345678901}',
    ],
    ids=["lone-surrogate", "bom", "numbers"],
)
def test_what_json_read_before_reads_the_same(text):
    assert load_json(text) == json.loads(text)


def test_text_that_is_not_json_is_a_value_error_as_before():
    with pytest.raises(ValueError, match=r"expected value|Expecting value") as caught:
        load_json(b"<html>please log in</html>")
    assert not isinstance(caught.value, JsonTooDeep)
