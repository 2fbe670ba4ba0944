"""The OpenAPI document: served at /v1/openapi.json without a token, equal to the copy kept in the repository, and
naming every route the API serves."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp

KEPT = Path(__file__).resolve().parents[3] / "docs" / "api" / "openapi.json"


async def test_the_served_document_is_the_one_kept_in_the_repository(harness):
    async with aiohttp.ClientSession() as http, http.get(f"{harness.url}/v1/openapi.json") as response:
        assert response.status == 200
        served = await response.json()
    assert served == json.loads(KEPT.read_text()), "run `python -m bot.api.openapi > docs/api/openapi.json`"


def test_the_document_names_every_route_the_api_serves(harness):
    [api] = harness.services.doors
    served = {(route.method, route.path) for route in api.rest.routes()}
    documented = {
        (method.upper(), path) for path, item in json.loads(KEPT.read_text())["paths"].items() for method in item
    }
    assert served - {("GET", "/v1/openapi.json")} == documented
    schemas = json.loads(KEPT.read_text())["components"]["schemas"]
    assert schemas["InvestigateBody"]["properties"]["task"]["maxLength"] == 8000
    assert schemas["InvestigationStatus"]["enum"] == [
        "running",
        "waiting_for_approval",
        "finished",
        "failed",
        "stopped",
    ]
