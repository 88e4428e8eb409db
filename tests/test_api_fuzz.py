"""Schemathesis on the project's own OpenAPI schema against the live test server (PostgreSQL, Redis): every
operation, with the credentials it documents (device tokens of both roles, a staff session with its CSRF token),
answers no 5xx and only responses its schema describes (status, content type, headers, body).

Two tests, both bounded: a fixed number of generated requests per operation (examples, coverage and fuzzing
phases), and the stateful phase, which follows the schema's OpenAPI links (`delivery.api.schema_links`) through
sequences of calls — a send request, the claim of the job, its lease heartbeat, progress, item download and result,
and a token rotation followed by a call with the new token. Requests the schema allows are pointed at a real send
job and room, so the job endpoints answer more than 404; the rate limits are raised so the generated requests reach
the views instead of stopping at 429 after a few.
"""

import copy
from collections import Counter

import pytest
import schemathesis
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from conversations.tests.factories import RoomFactory
from delivery.models import Device
from delivery.services import device_heartbeat, send_job_claim, send_request_submit
from delivery.tests.factories import StaffUserFactory, active_device

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

OPENAPI = SchemaGenerator().get_schema(request=None, public=True)
# Only the links the schema declares: the inferred ones would hand the id of a job that a staff request created to a
# sender that never claimed it (a 404 by design, which schemathesis would report as a resource missing after its
# creation).
config = schemathesis.Config.from_dict({"phases": {"stateful": {"inference": {"algorithms": []}}}})
schema = schemathesis.openapi.from_dict(OPENAPI, config=config)


def _without_send_request_question_id(openapi: dict) -> dict:
    """The schema for the stateful phase: schemathesis takes the optional `question_id` of a send request for a
    reference to a resource no operation creates, and would then never start a sequence with a send request.
    Requests steered to the real room leave it out anyway."""
    openapi = copy.deepcopy(openapi)
    body = openapi["components"]["schemas"]["SendRequestInputRequest"]
    body["properties"].pop("question_id")
    body["required"] = [name for name in body.get("required", []) if name != "question_id"]
    return openapi


stateful_schema = schemathesis.openapi.from_dict(_without_send_request_question_id(OPENAPI), config=config)

UPLOADS = "/api/v1/uploads"
SEND_REQUESTS = "/api/v1/send-requests"
ROTATE = "/api/v1/devices/token/rotate"
CSRF_TOKEN = "fuzzcsrf" * 4


class Credentials:
    """What each operation is called with: the token of the device role it serves, or the staff session."""

    def __init__(self, base_url: str):
        _, self.uploader_token = active_device(role=Device.Role.UPLOADER)
        sender, self.sender_token = active_device(role=Device.Role.SENDER)
        browser = Client()
        browser.force_login(StaffUserFactory(is_superuser=True))
        self.session_id = browser.cookies["sessionid"].value
        self.base_url = base_url
        self.room = RoomFactory(stable_key="chat-fuzz", name="(1234) 대한물산")
        device_heartbeat(device=sender, rooms=[{"room_key": self.room.stable_key, "room_name": self.room.name}])
        send_request_submit(
            room=self.room,
            items=[
                {"kind": "text", "text": "단가표 보내드립니다."},
                {"kind": "file", "name": "단가.pdf", "content": b"%PDF"},
            ],
            idempotency_key="fuzz-job",
            actor="agent",
        )
        self.job = send_job_claim(device=sender)

    def headers(self, path: str) -> dict:
        if path == SEND_REQUESTS:
            # Schemathesis writes its own Cookie header for the documented session cookie: ours replaces it.
            return {
                "Cookie": f"sessionid={self.session_id}; csrftoken={CSRF_TOKEN}",
                "X-CSRFToken": CSRF_TOKEN,
                "Referer": self.base_url + path,
            }
        if path.startswith("/api/v1/sender/"):
            return {"Authorization": f"Bearer {self.sender_token}"}
        return {"Authorization": f"Bearer {self.uploader_token}"}

    def steer(self, case, *, to_the_job: bool = True) -> None:
        """A request the schema allows is sent to the real job (unless `to_the_job` is false: a link chose the job)
        and room, and to the job's items 0 and 1."""
        if case.meta is None or case.meta.generation.mode.is_negative:
            return
        parameters = case.path_parameters or {}
        if "job_id" in parameters and to_the_job:
            parameters["job_id"] = self.job.pk
        if "index" in parameters:
            parameters["index"] = parameters["index"] % 2 if isinstance(parameters["index"], int) else 0
        if case.operation.path == SEND_REQUESTS and isinstance(case.body, dict):
            case.body["room_key"] = self.room.stable_key
            case.body.pop("question_id", None)

    def make_sendable(self, case) -> None:
        """A send request the schema allows becomes one the send rules take too (a text and a file: items 0 and 1),
        so the sequence after it has a job to claim and a file to download: generated items are nearly always
        refused by those rules (a photo or file without a file name)."""
        positive = case.meta is not None and not case.meta.generation.mode.is_negative
        if positive and case.operation.path == SEND_REQUESTS and isinstance(case.body, dict):
            case.body["items"] = [
                {"kind": "text", "text": "발주서 확인 부탁드립니다."},
                {"kind": "file", "name": "발주서.pdf", "content_base64": "JVBERi0xLjQK"},
            ]

    def after(self, path: str, response) -> None:
        """A rotated token replaces the old one, as the edge programs do."""
        if path == ROTATE and response.request.method == "POST" and response.status_code == 200:
            self.uploader_token = response.json()["token"]


def upload_refuses_messages_one_by_one(ctx, response, case):
    """Uploads refuse a bad message on its own, not its batch: a body the schema refuses may be answered 200,
    but then with at least one message refused. An envelope or message the server took although the schema
    refuses it is still a failure."""
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    stored = response.request.method == "POST" and response.status_code == 200
    if negative and stored and response.json()["rejected"] == 0:
        raise AssertionError(f"A body the schema refuses was stored whole: {case.body!r}")


# Refusals of a schema-valid request that no schema can express: a pairing code the server never issued, an
# idempotency key used before with another body, an item the send rules refuse (a photo that is not an image, a
# text item without text: reported with the item's index, field and message).
BUSINESS_REFUSALS = {
    "/api/v1/devices/pair": {"PAIRING_CODE_INVALID"},
    SEND_REQUESTS: {"IDEMPOTENCY_KEY_REUSED", "INVALID_SEND_REQUEST:item"},
}


def _refusal_code(body: dict) -> str:
    detail = body.get("detail")
    if isinstance(detail, dict) and {"index", "field", "message"} <= set(detail):
        return f"{body.get('error')}:item"
    return str(body.get("error"))


def refused_only_for_a_business_rule(ctx, response, case):
    """Where a schema-valid request can be refused for what the schema cannot know, that refusal has its own
    code, and no other 400 or 422 happens (a lax schema would show up as one)."""
    positive = case.meta is not None and not case.meta.generation.mode.is_negative
    if positive and response.request.method == case.method.upper() and response.status_code in (400, 422):
        code = _refusal_code(response.json())
        if code not in BUSINESS_REFUSALS[case.operation.path]:
            raise AssertionError(f"A schema-valid request was refused with {code}: {response.text[:300]}")


@pytest.fixture
def credentials(live_server, settings):
    settings.UPLOAD_RATE_PER_MINUTE = 100_000
    settings.PAIRING_FAILURES_PER_ADDRESS = 100_000
    settings.PAIRING_FAILURES_GLOBAL = 100_000
    return Credentials(live_server.url)


def checks_for(path: str) -> tuple[list, list]:
    """The checks an operation is spared and the ones it adds: (excluded, additional)."""
    if path == UPLOADS:
        return [negative_data_rejection], [upload_refuses_messages_one_by_one]
    if path in BUSINESS_REFUSALS:
        return [positive_data_acceptance], [refused_only_for_a_business_rule]
    return [], []


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
def test_every_operation_answers_without_5xx_and_as_its_schema_says(case, live_server, credentials):
    credentials.steer(case)
    excluded, additional = checks_for(case.operation.path)
    response = case.call_and_validate(
        base_url=live_server.url,
        headers=credentials.headers(case.operation.path),
        excluded_checks=excluded,
        additional_checks=additional,
        timeout=30,
    )
    credentials.after(case.operation.path, response)


STATEFUL_SCENARIOS = 40
STATEFUL_STEPS = 8
STATEFUL_SUITES = 10
STATEFUL_TOP_UP = 10  # scenarios per further suite once the first ones ran without following every link
LINKED_OPERATIONS = (
    "POST /api/v1/sender/claim",
    *(f"POST /api/v1/sender/jobs/{{job_id}}/{operation}" for operation in ("heartbeat", "progress", "result")),
)


def test_call_sequences_along_the_schema_links_answer_without_5xx_and_as_the_schema_says(live_server, credentials):
    """Scenarios of up to `STATEFUL_STEPS` calls, each step taking its job id from the response before it (most of
    the time; schemathesis sometimes generates a fresh one to reach the ids nobody was given).

    The server's state moves on between scenarios (a claimed job is not claimable again), so the same generated
    choices can lead to other responses and Hypothesis stops a suite as flaky; as schemathesis' own runner does, a
    suite that ended so without a failing step counts, and the next suite starts from another seed until
    `STATEFUL_SCENARIOS` scenarios ran."""
    answered: Counter = Counter()  # (operation, status, followed a link)
    failures: list = []
    scenarios = 0

    class CallSequences(stateful_schema.as_state_machine()):
        def step(self, input):
            linked = input.transition is not None and input.is_applied
            credentials.steer(input.case, to_the_job=not linked)
            credentials.make_sendable(input.case)
            try:
                output = super().step(input)
            except (Exception, FailureGroup) as error:  # a failed check is a FailureGroup, not an Exception
                failures.append(f"{input.case.operation.label} {input.case.body!r:.300}: {error}")
                raise
            answered[(input.case.operation.label, output.response.status_code, linked)] += 1
            return output

        def get_call_kwargs(self, case):
            return {"base_url": live_server.url, "headers": credentials.headers(case.operation.path), "timeout": 30}

        def after_call(self, response, case):
            super().after_call(response, case)
            credentials.after(case.operation.path, response)

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            excluded, additional = checks_for(case.operation.path)
            case.validate_response(
                response,
                excluded_checks=excluded,
                additional_checks=[*(additional_checks or []), *additional],
                transport_kwargs=kwargs or None,
                recorder=self.recorder,
            )

        def teardown(self):
            nonlocal scenarios
            scenarios += 1
            super().teardown()

    def links_not_followed_to_success() -> list[str]:
        return [operation for operation in LINKED_OPERATIONS if not answered[(operation, 200, True)]]

    suites = 0
    # Which links a scenario follows to a success is up to generation and to where the server's state has moved:
    # suites go on, a few scenarios at a time, until every link carried a whole send once.
    while (scenarios < STATEFUL_SCENARIOS or links_not_followed_to_success()) and suites < STATEFUL_SUITES:
        try:
            hypothesis_seed(suites)(CallSequences).run(
                settings=settings(
                    max_examples=max(STATEFUL_SCENARIOS - scenarios, STATEFUL_TOP_UP),
                    stateful_step_count=STATEFUL_STEPS,
                    phases=[Phase.generate],  # a scenario cannot be replayed on a server that moved on
                    deadline=None,
                    suppress_health_check=list(HealthCheck),
                    database=None,
                )
            )
        except Flaky:
            pass
        finally:
            suites += 1
        assert failures == []

    print(f"{scenarios} scenarios in {suites} suites:", sorted(answered.items()))
    assert scenarios >= STATEFUL_SCENARIOS
    # The links carry a whole send: a job requested, claimed, its lease kept and its result reported by its id.
    assert links_not_followed_to_success() == []
