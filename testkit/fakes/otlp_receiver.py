"""A minimal OTLP/HTTP trace receiver on 127.0.0.1: what an OpenTelemetry collector does with `POST /v1/traces`."""

from __future__ import annotations

from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from testkit.servers.local_server import LocalServer


class OtlpReceiver(LocalServer):
    """Decodes each protobuf export request it gets, as the collector would, and keeps them for the test."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[ExportTraceServiceRequest] = []
        self.content_types: list[str] = []

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/traces", self._traces)

    async def _traces(self, request: web.Request) -> web.Response:
        self.content_types.append(request.headers.get("Content-Type", ""))
        decoded = ExportTraceServiceRequest()
        decoded.ParseFromString(await request.read())
        self.requests.append(decoded)
        return web.Response(status=200, content_type="application/x-protobuf", body=b"")

    def spans(self) -> list[Span]:
        """Every span received, in arrival order."""
        return [span for r in self.requests for rs in r.resource_spans for ss in rs.scope_spans for span in ss.spans]
