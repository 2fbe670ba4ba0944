"""Fixtures of every part of the suite: a small tool set that behaves like real backends (including badly), the
scripted fake model server, and the session's real Prometheus and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Annotated

import pytest
from pydantic import Field

from kernel import ToolFailure, ToolRegistry
from testkit.fakes.model_server import FakeModelServer
from testkit.fakes.slack_api import SlackFake
from testkit.model_words import slack_leaks
from testkit.servers.postgres import PostgresServer, running_postgres
from testkit.servers.prometheus import PrometheusServer, incident_prometheus


class Backend:
    """Records what the tools were asked, so tests can assert side effects happened (or not)."""

    def __init__(self) -> None:
        self.rollbacks: list[tuple[str, str]] = []
        self.metric_queries: list[tuple[str, str]] = []
        self.flaky_failures_left = 0


@pytest.fixture(autouse=True)
def no_words_for_the_model_reach_slack() -> Iterator[None]:
    """After every test: nothing any fake Slack was sent speaks to the model (a hint such as "tell the user" or
    "call `finish`"); people read Slack, and a failure's words for them are its `said`, never its `hint`."""
    before = {id(fake): len(fake.calls) for fake in SlackFake.made}  # a fake shared by tests: only this test's calls
    yield
    for fake in list(SlackFake.made):
        if leaks := slack_leaks(fake, before.get(id(fake), 0)):
            pytest.fail("words for the model reached Slack:\n" + "\n".join(leaks))


@pytest.fixture
def backend() -> Backend:
    return Backend()


@pytest.fixture
def tools(backend: Backend) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    async def query_metrics(
        service: Annotated[str, Field(description="Service name, e.g. order-service.")],
        metric: Annotated[str, Field(description="Metric alias such as http_5xx_rate.")] = "http_5xx_rate",
        window: str = "30m",
    ) -> str:
        """Query a service's metric over a window; the summary names the change point."""
        backend.metric_queries.append((service, metric))
        if backend.flaky_failures_left > 0:
            backend.flaky_failures_left -= 1
            raise ConnectionError("prometheus: connection reset by peer")
        return f"{service} {metric} over {window}: jumped from 0.10% to 12.0% at t-10m"

    @registry.register(timeout=0.05)
    async def search_logs(service: str, query: str = "") -> str:
        """Search a service's logs; slow queries time out."""
        if query == "slow":
            await asyncio.sleep(10)
        if query == "huge":
            return "\n".join(f"2026-11-30T03:{i % 60:02d}:00Z ERROR upstream connect error #{i}" for i in range(3000))
        if query == "secret":
            return "connecting with password=hunter2hunter2 to db"
        if query == "bad":
            raise ToolFailure("LogQL parse error at char 7.", hint="Quote label values.")
        if query == "dict":
            return {"count": 3, "messages": ["a", "b"]}  # type: ignore[return-value]
        return f"3 errors in {service}: upstream connect error -> payment-service"

    async def preview_rollback(service: str, to_version: str) -> dict[str, str]:
        return {"POST": "https://deploy.example/rollback", "service": service, "to_version": to_version}

    @registry.register(side_effect=True, preview=preview_rollback, summary="Roll a service back to an earlier version")
    async def rollback_deployment(service: str, to_version: str) -> str:
        """Roll a service back to an earlier version. Side effect: needs approval."""
        backend.rollbacks.append((service, to_version))
        return f"rolled back {service} to {to_version}"

    return registry


@pytest.fixture
async def server():
    """A fake model/API server on 127.0.0.1 that tests script reply by reply."""
    async with FakeModelServer() as fake:
        yield fake


@pytest.fixture(scope="session")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    """The session's Prometheus: the incident data backfilled, served on a free port, stopped at the end."""
    with incident_prometheus(tmp_path_factory.mktemp("prometheus")) as server:
        yield server


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """The session's PostgreSQL (`running_postgres`); `new_database()` gives each test its own database."""
    with running_postgres() as server:
        yield server
