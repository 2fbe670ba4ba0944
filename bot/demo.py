"""An offline demo incident: canned backends and a scripted model, no Slack or LLM account needed.

It shows the kernel's whole path: investigation steps, a side effect held by policy, a final answer.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kernel import LLM, Agent, ScriptedModel, SideEffectMode, SideEffectPolicy, ToolRegistry, text_turn

DEMO_TASK = "order-service 5xx went from 0.1% to 12% in 3 minutes, find the root cause"

_METRICS = {
    "order-service": "order-service http_5xx_rate (sum by service of 5xx / all requests), window 30m, step 3m:\n"
    "t-30m:0.10% t-27m:0.09% t-24m:0.11% t-21m:0.10% t-18m:0.10% t-15m:0.12% t-12m:0.10% t-9m:4.20% "
    "t-6m:11.80% t-3m:12.10% now:12.00%\nSummary: jumped from 0.10% to 4.2% at t-9m, now 12.0%.",
    "payment-service": "payment-service http_5xx_rate, window 30m, step 3m:\n"
    "t-30m:0.02% t-27m:0.01% t-24m:0.02% t-21m:0.02% t-18m:0.01% t-15m:0.02% t-12m:0.02% t-9m:0.02% "
    "t-6m:0.01% t-3m:0.02% now:0.02%\nSummary: flat at about 0.02%; no change point.",
}
_LOGS = (
    "order-service errors since t-12m: 1,482 lines, 2 distinct messages\n"
    "1,290 × upstream connect error or disconnect/reset before headers → payment-service:8443 (pool exhausted)\n"
    "192 × DeployEvent: order-service v2.14.0 rolled out (replaces v2.13.2) at t-10m\n"
    "newest: 2026-11-30T03:38:57Z ERROR order-service pod=order-service-7d9f8b6c4-x2lkq "
    "payment client: pool exhausted (max_connections=4, waiting=212)"
)
_DIFF = (
    "v2.13.2..v2.14.0: 3 files changed\n"
    "config/payment-client.yaml\n"
    "-  max_connections: 64\n"
    "+  max_connections: 4   # TODO: restore after load test\n"
    "src/checkout/handler.py: +12 -3 (retry on 503)\nCHANGELOG.md: +4"
)


def demo_tools() -> ToolRegistry:
    """Canned read-only backends for the demo incident, plus a side-effect rollback."""
    registry = ToolRegistry()

    @registry.register(returns="a downsampled series in relative time and a one-line summary of the change")
    async def query_metrics(
        service: Annotated[str, Field(description="Service name, e.g. order-service.")],
        metric: Annotated[str, Field(description="Metric alias, e.g. http_5xx_rate.")] = "http_5xx_rate",
        window: str = "30m",
    ) -> str:
        """Query a service's metric over a time window. 5xx may come from the gateway: then query service=gateway."""
        return _METRICS.get(service, f"no series for service={service!r}. Known services: {', '.join(_METRICS)}")

    @registry.register(returns="the count, grouped repeated messages, and the newest lines")
    async def search_logs(service: str, query: str = "", since: str = "15m") -> str:
        """Search a service's error logs since a relative time such as 15m."""
        return _LOGS if service == "order-service" else f"{service}: 0 error lines since {since}"

    @registry.register(returns="files changed and the diff, truncated sensibly")
    async def compare_refs(base: str, head: str) -> str:
        """The change between two refs (tags, branches or commits) of the service's repository."""
        return _DIFF if (base, head) == ("v2.13.2", "v2.14.0") else f"no such refs: {base}..{head}"

    async def preview(service: str, to_version: str) -> dict[str, str]:
        return {"POST": "https://deploy.example.internal/hooks/rollback", "service": service, "to_version": to_version}

    @registry.register(side_effect=True, preview=preview, returns="the deployment system's answer")
    async def rollback_deployment(service: str, to_version: str) -> str:
        """Roll a service back to an earlier version. Side effect: runs only after a human approves."""
        return f"rollback of {service} to {to_version} accepted"

    return registry


def demo_script() -> ScriptedModel:
    """What a good model does on the demo incident, turn by turn."""
    return ScriptedModel(
        [
            text_turn(
                "query_metrics",
                "Known: nothing yet. Missing: when and where the 5xx rose. Why: confirm the jump.",
                service="order-service",
            ),
            text_turn(
                "search_logs",
                "Known: jump at t-9m (step 1). Missing: what the errors say. Why: logs name the cause.",
                service="order-service",
            ),
            text_turn(
                "query_metrics",
                "Known: upstream resets to payment-service, deploy v2.14.0 at t-10m (step 2). "
                "Missing: is payment-service itself failing? Why: rule it out.",
                service="payment-service",
            ),
            text_turn(
                "compare_refs",
                "Known: payment-service is healthy (step 3), so the client side is suspect. "
                "Missing: what v2.14.0 changed. Why: the deploy matches the jump.",
                base="v2.13.2",
                head="v2.14.0",
            ),
            text_turn(
                "rollback_deployment",
                "Known: v2.14.0 cut max_connections 64 → 4 (step 4). Why: rolling back restores the pool.",
                service="order-service",
                to_version="v2.13.2",
            ),
            text_turn(
                "finish",
                answer=(
                    "**Root cause**: order-service v2.14.0 (deployed at t-10m) lowered the payment client's "
                    "`max_connections` from 64 to 4 (step 4). The pool is exhausted (step 2), so requests to "
                    "payment-service fail with upstream resets and order-service returns 5xx (step 1). "
                    "payment-service itself is healthy (step 3).\n"
                    "**Confidence**: high — the timing, the log messages and the diff agree.\n"
                    "**Recommendations**: roll back order-service to v2.13.2 (prepared as a dry run in step 5; "
                    "needs approval), then restore `max_connections: 64` and add a config check for pool sizes."
                ),
            ),
        ]
    )


def demo_agent(llm: LLM | None = None) -> Agent:
    """The demo's agent: the scripted model unless another is given; side effects as dry runs."""
    return Agent(llm=llm or demo_script(), tools=demo_tools(), policy=SideEffectPolicy(mode=SideEffectMode.DRY_RUN))
