"""The OpenAPI links of the served schema lead to operations that exist, fill parameters those operations have,
and read the job id from where the response schema has it: a renamed operation, parameter or field breaks a test
here instead of silently leaving the fuzz suite's stateful phase without sequences."""

import pytest
from django.urls import reverse

from delivery.api.schema_links import RESPONSE_LINKS

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(client):
    response = client.get(reverse("schema"), {"format": "json"})
    assert response.status_code == 200
    return response.json()


def _operations(schema) -> dict:
    return {
        operation["operationId"]: operation
        for operations in schema["paths"].values()
        for operation in operations.values()
        if isinstance(operation, dict) and "operationId" in operation
    }


def _resolve(schema, node):
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def test_every_declared_link_is_on_its_response_and_leads_to_a_real_parameter(schema):
    operations = _operations(schema)
    for (operation_id, status_code), links in RESPONSE_LINKS.items():
        response = operations[operation_id]["responses"][status_code]
        assert response["links"] == links
        for link in links.values():
            target = operations[link["operationId"]]
            names = {parameter["name"] for parameter in target.get("parameters", [])}
            assert set(link.get("parameters", {})) <= names, link


def test_a_job_id_taken_from_a_response_body_is_an_integer_field_of_that_body(schema):
    operations = _operations(schema)
    checked = 0
    for (operation_id, status_code), links in RESPONSE_LINKS.items():
        for link in links.values():
            expression = link.get("parameters", {}).get("job_id", "")
            if not expression.startswith("$response.body#/"):
                continue
            content = operations[operation_id]["responses"][status_code]["content"]["application/json"]
            node = _resolve(schema, content["schema"])
            for name in expression.removeprefix("$response.body#/").split("/"):
                node = _resolve(schema, node["properties"][name])
            assert node["type"] == "integer", (operation_id, expression)
            checked += 1
    assert checked >= 8  # the claim's and the job responses' links


def test_the_heartbeat_keeps_the_job_of_its_own_path(schema):
    heartbeat = _operations(schema)["sender_job_heartbeat"]
    for link in heartbeat["responses"]["200"]["links"].values():
        assert link["parameters"] == {"job_id": "$request.path.job_id"}
