"""Prometheus metrics of the bot itself, served at `GET /metrics`: runs, steps, tools, tokens, approvals, Slack calls.

Fed by the kernel's event stream (a `RunObserver`), the approval broker's settlements and the Slack client's retry
handlers. Each bot has its own registry, so two bots in one process (the tests) never share counts. Labels are closed
sets (outcomes, stop reasons, error kinds, decisions, the registered tools) or bounded ones (Slack methods): never run or
user ids, nor a tool name the model made up.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Any, assert_never
from urllib.parse import urlsplit

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from bot.app import SlackServices
from bot.approvals.store import PendingApproval
from bot.runs.active import ActiveRun
from kernel import (
    FINISH_TOOL,
    READ_OUTPUT_TOOL,
    ErrorKind,
    Event,
    GuidanceTaken,
    RunFinished,
    RunResult,
    RunStarted,
    Step,
    StepCompleted,
    StepStarted,
)

STEP_BUCKETS_S = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
"""Tool calls take from milliseconds (a file) to minutes (a slow query, or a side effect waiting for approval)."""
BUILT_IN_TOOLS = frozenset({FINISH_TOOL, READ_OUTPUT_TOOL})
"""The kernel's own tools, offered to every run besides the registered ones."""
TOOL_RAN = frozenset({None, ErrorKind.TIMEOUT, ErrorKind.EXCEPTION, ErrorKind.CANCELLED})
"""Step outcomes in which the tool itself ran, so the step's duration is the tool's latency."""
RETRY_REASONS = {
    "AsyncRateLimitErrorRetryHandler": "rate_limited",
    "AsyncServerErrorRetryHandler": "server_error",
    "AsyncConnectionErrorRetryHandler": "connection_error",
}
"""The `reason` label of a Slack retry, by the slack_sdk handler that asked for it."""


class BotMetrics:
    """The bot's metrics and how they are fed: `observe` (a `RunObserver`), `attach` (Slack client, broker, route).

    `tools` are the registered tools (the runs' `ToolRegistry`): the only tool names used as label values.
    """

    def __init__(self, *, tools: Container[str], registry: CollectorRegistry | None = None) -> None:
        self._tools = tools
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.runs_started = Counter(
            "opsagent_runs_started", "Investigations started (a resumed run counts again).", registry=r
        )
        self.runs_finished = Counter(
            "opsagent_runs_finished",
            "Investigations ended, by outcome (ok/failed) and stop reason.",
            ["outcome", "stop_reason"],
            registry=r,
        )
        self.runs_in_flight = Gauge("opsagent_runs_in_flight", "Investigations running now.", registry=r)
        self.step_duration = Histogram(
            "opsagent_step_duration_seconds",
            "Tool call latency per step, by tool (a side effect's includes the wait for its approval).",
            ["tool"],
            buckets=STEP_BUCKETS_S,
            registry=r,
        )
        self.tool_errors = Counter(
            "opsagent_tool_errors", "Failed steps, by tool and the kernel's error kind.", ["tool", "kind"], registry=r
        )
        self.llm_tokens = Counter(
            "opsagent_llm_tokens",
            "Model tokens (reported, or estimated when the endpoint reports none), by type.",
            ["model", "type"],
            registry=r,
        )
        self.llm_cost = Counter(
            "opsagent_llm_cost_usd", "Model spend in USD (priced models only).", ["model"], registry=r
        )
        self.approvals = Counter(
            "opsagent_approvals",
            "Approvals settled, by decision (approved/denied/expired/voided).",
            ["decision"],
            registry=r,
        )
        self.slack_errors = Counter(
            "opsagent_slack_api_errors",
            "Slack Web API error responses (every attempt), by method and error.",
            ["method", "error"],
            registry=r,
        )
        self.slack_retries = Counter(
            "opsagent_slack_api_retries",
            "Slack Web API calls retried by the client, by method and reason.",
            ["method", "reason"],
            registry=r,
        )

    def observe(self, run: ActiveRun, event: Event) -> None:
        """Count one event of a run (the `RunObserver` seam)."""
        match event:
            case RunStarted():
                self.runs_started.inc()
            case StepCompleted(step=step):
                self._count_step(step)
            case RunFinished(result=result):
                self._count_finish(result)
            case StepStarted() | GuidanceTaken():
                pass
            case _:
                assert_never(event)

    def attach(self, services: SlackServices) -> None:
        """Feed the rest from the app's services and serve `/metrics` among their routes (before the server starts)."""
        self.watch_slack(services.client)
        services.broker.on_settled(self.count_approval)
        self.runs_in_flight.set_function(lambda: len(services.investigations.active))
        services.routes.append(web.get("/metrics", self.serve))

    def watch_slack(self, client: AsyncWebClient) -> None:
        """Count the client's Slack error responses and retries, keeping its retry behaviour exactly as it was."""
        client.retry_handlers = [SlackCallWatch(self, client.retry_handlers)]

    def count_approval(self, approval: PendingApproval) -> None:
        """Count a settled approval by its final state (the broker's `on_settled` listener)."""
        self.approvals.labels(str(approval.state)).inc()

    async def serve(self, request: web.Request) -> web.Response:
        """`GET /metrics`: the exposition format the scraper asks for (Prometheus text by default)."""
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        return web.Response(body=encoder(self.registry), headers={"Content-Type": content_type})

    def _count_step(self, step: Step) -> None:
        if step.pending:
            return  # counted when it is settled
        tool = self._tool_label(step)
        if step.error is not None:
            self.tool_errors.labels(tool, str(step.error)).inc()
        if step.call is not None and step.call.name != FINISH_TOOL and step.error in TOOL_RAN:
            self.step_duration.labels(tool).observe(step.ms / 1000)

    def _count_finish(self, result: RunResult) -> None:
        self.runs_finished.labels("ok" if result.ok else "failed", str(result.stop_reason)).inc()
        usage = result.usage
        self.llm_tokens.labels(result.model, "prompt").inc(usage.prompt_tokens)
        self.llm_tokens.labels(result.model, "completion").inc(usage.completion_tokens)
        self.llm_cost.labels(result.model).inc(usage.cost_usd)

    def _tool_label(self, step: Step) -> str:
        """The step's tool as a label value: a registered (or built-in) tool's name; `unknown` for any name the
        model made up, whatever became of its step (refused as unknown, bad arguments, not run); `none` for a
        turn without a call."""
        if step.call is None:
            return "none"
        name = step.call.name
        return name if name in self._tools or name in BUILT_IN_TOOLS else "unknown"


class SlackCallWatch(AsyncRetryHandler):
    """The client's only retry handler: counts each error response, then lets the real handlers decide on a retry.

    slack_sdk asks its handlers about every response, so this sees all of them; it delegates to the wrapped
    handlers in order, as the client would, and counts the retry one of them asks for.
    """

    def __init__(self, metrics: BotMetrics, handlers: Sequence[AsyncRetryHandler]) -> None:
        super().__init__(max_retry_count=0)
        self._metrics = metrics
        self._handlers = tuple(handlers)

    async def can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        """Count an error response or failure, then whether a wrapped handler will retry (it is remembered)."""
        method = _slack_method(request.url)
        failure = _slack_error(response, error)
        if failure is not None:
            self._metrics.slack_errors.labels(method, failure).inc()
        for handler in self._handlers:
            if await handler.can_retry_async(state=state, request=request, response=response, error=error):
                state.custom_values = {**(state.custom_values or {}), "opsagent_retry_handler": handler}
                return True
        return False

    async def prepare_for_next_attempt_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        """Count the retry and let the handler that asked for it wait as it would."""
        handler: AsyncRetryHandler = (state.custom_values or {})["opsagent_retry_handler"]
        reason = RETRY_REASONS.get(type(handler).__name__, "other")
        self._metrics.slack_retries.labels(_slack_method(request.url), reason).inc()
        await handler.prepare_for_next_attempt_async(state=state, request=request, response=response, error=error)


def _slack_method(url: str) -> str:
    """`chat.postMessage` from `https://slack.com/api/chat.postMessage`; file uploads go elsewhere and say so."""
    path = urlsplit(url).path
    return path.rsplit("/", 1)[-1] if "/api/" in path else "file_upload"


def _slack_error(response: HttpResponse | None, error: Exception | None) -> str | None:
    """What went wrong with one attempt: Slack's error code, the HTTP status, or the exception's type; None if ok."""
    if error is not None:
        return type(error).__name__
    if response is None:
        return None
    body: Any = response.body
    if isinstance(body, dict) and body.get("ok") is False:
        return str(body.get("error") or f"http_{response.status_code}")
    return f"http_{response.status_code}" if response.status_code >= 400 else None
