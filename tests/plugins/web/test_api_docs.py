"""docs/api.md lists exactly the endpoints of the generated OpenAPI document."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[3]


def test_docs_api_md_lists_every_endpoint_of_the_openapi_document(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    documented = set(
        re.findall(
            r"^\| `([A-Z]+)` \| `(/api/v1/[^`]*)` \|", (ROOT / "docs/api.md").read_text(), re.M
        )
    )
    served = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert documented == served


def test_docs_api_md_statuses_agree_with_the_openapi_document(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    rows = re.findall(
        r"^\| `([A-Z]+)` \| `(/api/v1/[^`]*)` \|.*\| ([\d, ]+) \|$",
        (ROOT / "docs/api.md").read_text(),
        re.M,
    )
    for method, path, statuses in rows:
        declared = set(doc["paths"][path][method.lower()]["responses"]) - {"401", "403", "500"}
        assert {s.strip() for s in statuses.split(",")} == declared, (method, path)
