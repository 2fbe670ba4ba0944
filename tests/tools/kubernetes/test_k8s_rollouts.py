"""k8s_rollout_history against the fake API server, and the pod-template diff between revisions."""

from __future__ import annotations

from lightkube.models.core_v1 import PodTemplateSpec

from opsagent_tools.kubernetes.rollouts import template_changes
from samples.kube_objects import template
from worlds.kube_tools import error_of, text_of


async def test_revisions_newest_first_with_what_changed_and_why(tools, cluster):
    text = await text_of(tools, "k8s_rollout_history", deployment="checkout")
    lines = text.splitlines()
    assert lines[0] == "deployment/checkout in shop: revision 4; 3 desired, 3 up to date, 1 ready, 2 unavailable"
    assert lines[1].startswith("condition Available=False MinimumReplicasUnavailable")
    assert lines[2] == "revisions, newest first (3):"
    assert lines[3] == (
        "  #4 checkout-7d9f8c6b5 created 42m ago; 3 pods, 1 ready; app=registry.example.com/checkout:v3.8.0"
    )
    assert lines[4] == "     change-cause: kubectl set resources deployment/checkout --limits=memory=256Mi"
    assert lines[5] == "     changed from #3: app memory limit 512Mi → 256Mi; app memory request 512Mi → 256Mi"
    assert (
        "changed from #2: app image registry.example.com/checkout:v3.7.4 → registry.example.com/checkout:v3.8.0" in text
    )
    assert lines[-1].startswith("  #2 checkout-6b7c5d8e2 created 9d ago; 0 pods")
    assert cluster.requests[-1].query["labelSelector"] == "app=checkout"


async def test_only_the_deployments_own_replicasets_count(tools, cluster):
    stranger = next(o for o in cluster.objects if o["metadata"]["name"] == "checkout-6b7c5d8e2")
    stranger["metadata"]["ownerReferences"][0]["uid"] = "uid-someone-else"
    text = await text_of(tools, "k8s_rollout_history", deployment="deployment/checkout")
    assert "revisions, newest first (2):" in text
    assert "checkout-6b7c5d8e2" not in text


async def test_an_unknown_deployment_names_the_close_ones(tools):
    error = await error_of(tools, "k8s_rollout_history", deployment="chekout")
    assert "No deployment \"chekout\" in namespace 'shop'. Nearest: checkout, checkout-api." in error
    assert "Known deployments (2): checkout, checkout-api." in error


def test_env_changes_name_the_variables_but_never_their_values():
    before = template("checkout", "v1", "256Mi")
    after = template("checkout", "v1", "256Mi")
    env = after["spec"]["containers"][0]["env"]
    env[1]["value"] = "tok_live_a-new-secret-value-0000"
    env.append({"name": "FEATURE_X", "value": "on"})
    after["spec"]["containers"][0]["args"] = ["--fast"]
    after["spec"]["nodeSelector"] = {"pool": "big"}
    changes = template_changes(PodTemplateSpec.from_dict(before), PodTemplateSpec.from_dict(after))
    assert changes == [
        "app env added: FEATURE_X",
        "app env changed (values not shown): API_TOKEN",
        "app command or args changed",
        "pod spec fields changed: nodeSelector",
    ]
    assert not any("a-new-secret" in change for change in changes)
