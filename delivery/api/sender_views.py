"""Send jobs over HTTP: staff and the agent submit them, sender devices claim, report and download items.

The device side follows docs/edge-api.md exactly; the rules live in `delivery.services.send_jobs`.
"""

import mimetypes

from django.http import FileResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, OpenApiTypes, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import Base64Field, JSONIntegerField, JSONStringField
from delivery import selectors
from delivery.api.authentication import DeviceTokenAuthentication, StaffSessionAuthentication
from delivery.api.permissions import IsSenderDevice
from delivery.api.sender_serializers import (
    PROGRESS_STATE_CHOICES,
    RESULT_OUTCOME_CHOICES,
    SendCountsSerializer,
    SenderJobSerializer,
    SendErrorSerializer,
    StaffJobSerializer,
)
from delivery.models import SendJob, SendJobItem
from delivery.services import (
    IDEMPOTENCY_KEY_MAX_LENGTH,
    IdempotencyKeyReused,
    LeaseNotHeld,
    SendJobStateConflict,
    SendRequestInvalid,
    SendStateUnknown,
    SubmitOutcome,
    send_job_claim,
    send_job_heartbeat,
    send_job_lease_check,
    send_job_progress,
    send_job_report,
    send_request_submit,
)

IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"
_DEVICE_ERRORS = {
    401: OpenApiResponse(SendErrorSerializer, description='`{"error": "DEVICE_TOKEN_INVALID"}`'),
    403: OpenApiResponse(SendErrorSerializer, description='`{"error": "DEVICE_ROLE_FORBIDDEN"}`'),
}
_JOB_ERRORS = {
    **_DEVICE_ERRORS,
    404: OpenApiResponse(
        SendErrorSerializer, description='`{"error": "SEND_JOB_NOT_FOUND"}`: no such job, or not this device\'s'
    ),
    409: OpenApiResponse(
        SendErrorSerializer, description='`{"error": "LEASE_NOT_HELD"}`: this device\'s lease on the job is gone'
    ),
}


def _error(code: str, http_status: int, **details) -> Response:
    return Response({"error": code, **details}, status=http_status)


def _invalid(detail) -> Response:
    return _error(SendRequestInvalid.code, status.HTTP_400_BAD_REQUEST, detail=detail)


# --- staff and the agent ---


class SendRequestApi(APIView):
    """Create a send job under an `Idempotency-Key`; a retry with the same key answers from the job's real state."""

    authentication_classes = [StaffSessionAuthentication]
    permission_classes = [IsAdminUser]

    class InputSerializer(serializers.Serializer):
        class ItemSerializer(serializers.Serializer):
            kind = serializers.ChoiceField(choices=SendJobItem.Kind.choices)
            text = JSONStringField(required=False, trim_whitespace=False, help_text="Text items.")
            name = JSONStringField(required=False, trim_whitespace=False, help_text="Photo and file items.")
            content_base64 = Base64Field(required=False, help_text="Photo and file items: the bytes.")

            class Meta:
                ref_name = "SendRequestItemInput"

            def validate(self, attrs):
                content = attrs.pop("content_base64", b"")
                if attrs["kind"] != SendJobItem.Kind.TEXT:
                    attrs["content"] = content
                return attrs

        room_key = JSONStringField(max_length=200)
        question_id = JSONIntegerField(required=False, allow_null=True)
        items = serializers.ListField(child=ItemSerializer(), allow_empty=False, min_length=1)

        class Meta:
            ref_name = "SendRequestInput"

    class OutputSerializer(serializers.Serializer):
        outcome = serializers.ChoiceField(choices=[outcome.value for outcome in SubmitOutcome])
        job = StaffJobSerializer()

        class Meta:
            ref_name = "SendRequestOutput"

    @extend_schema(
        operation_id="send_requests_create",
        summary="Request a send (staff and the agent)",
        description=(
            "The same `Idempotency-Key` again checks the job's real state: queued, claimed, sending, verifying or "
            "sent → 200 with the job as it is; failed → queued again (200, `requeued`); unknown → 409 "
            "`SEND_STATE_UNKNOWN`, never success. The same key with a different body → 422 "
            "`IDEMPOTENCY_KEY_REUSED`."
        ),
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_KEY_HEADER,
                {"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX_LENGTH, "pattern": "\\S"},
                OpenApiParameter.HEADER,
                required=True,
            )
        ],
        request=InputSerializer,
        responses={
            201: OutputSerializer,
            200: OpenApiResponse(OutputSerializer, description="A retry: `replayed` or `requeued`."),
            400: OpenApiResponse(
                SendErrorSerializer, description="`IDEMPOTENCY_KEY_REQUIRED`, `INVALID_SEND_REQUEST`, `ROOM_NOT_FOUND`"
            ),
            409: OpenApiResponse(SendErrorSerializer, description="`SEND_STATE_UNKNOWN`"),
            422: OpenApiResponse(SendErrorSerializer, description="`IDEMPOTENCY_KEY_REUSED`"),
        },
    )
    def post(self, request):
        idempotency_key = request.headers.get(IDEMPOTENCY_KEY_HEADER, "")
        if not idempotency_key:
            return _error("IDEMPOTENCY_KEY_REQUIRED", status.HTTP_400_BAD_REQUEST)
        serializer = self.InputSerializer(data=request.data)
        if not serializer.is_valid():
            return _invalid(serializer.errors)
        data = serializer.validated_data
        room = selectors.send_request_room_get(room_key=data["room_key"])
        if room is None:
            return _error("ROOM_NOT_FOUND", status.HTTP_400_BAD_REQUEST)
        question = None
        if data.get("question_id") is not None:
            question = selectors.send_request_question_get(question_id=data["question_id"])
            if question is None:
                return _invalid({"question_id": "No such question."})
        try:
            job, outcome = send_request_submit(
                room=room, items=data["items"], idempotency_key=idempotency_key, question=question, actor=request.user
            )
        except SendRequestInvalid as exc:
            return _invalid({"index": exc.index, "field": exc.field, "message": exc.message})
        except IdempotencyKeyReused as exc:
            return _error(exc.code, status.HTTP_422_UNPROCESSABLE_ENTITY, job_id=exc.job.pk)
        except SendStateUnknown as exc:
            return _error(exc.code, status.HTTP_409_CONFLICT, job_id=exc.job.pk, state=exc.job.state)
        job = selectors.send_job_get(job_id=job.pk)
        http_status = status.HTTP_201_CREATED if outcome == SubmitOutcome.CREATED else status.HTTP_200_OK
        return Response(self.OutputSerializer({"outcome": outcome.value, "job": job}).data, status=http_status)


# --- sender devices ---


class _SenderApi(APIView):
    authentication_classes = [DeviceTokenAuthentication]
    permission_classes = [IsSenderDevice]


class _SenderJobApi(_SenderApi):
    """A job endpoint: 404 for a job that does not exist or is not this device's, 409 when the device's own lease
    on it is gone."""

    def job_or_not_found(self, job_id: int) -> tuple[SendJob | None, Response | None]:
        job = selectors.sender_job_get(job_id=job_id, device=self.request.user)
        if job is None:
            return None, _error("SEND_JOB_NOT_FOUND", status.HTTP_404_NOT_FOUND)
        return job, None

    def handle_exception(self, exc):
        if isinstance(exc, LeaseNotHeld):
            return _error(exc.code, status.HTTP_409_CONFLICT)
        if isinstance(exc, SendJobStateConflict):
            return _error(exc.code, status.HTTP_409_CONFLICT, state=exc.job.state)
        return super().handle_exception(exc)


class SenderClaimApi(_SenderApi):
    class OutputSerializer(serializers.Serializer):
        job = SenderJobSerializer()

        class Meta:
            ref_name = "SenderClaimOutput"

    @extend_schema(
        operation_id="sender_claim",
        summary="Claim the next queued job for a room this device serves",
        request=None,
        responses={
            200: OutputSerializer,
            204: OpenApiResponse(description="No job waiting."),
            **_DEVICE_ERRORS,
        },
    )
    def post(self, request):
        job = send_job_claim(device=request.user)
        if job is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        job = selectors.send_job_get(job_id=job.pk)
        return Response(self.OutputSerializer({"job": job}).data)


class SenderJobHeartbeatApi(_SenderJobApi):
    class OutputSerializer(serializers.Serializer):
        lease_expires_at = serializers.DateTimeField()

        class Meta:
            ref_name = "SenderJobHeartbeatOutput"

    @extend_schema(
        operation_id="sender_job_heartbeat",
        summary="Extend the lease",
        request=None,
        responses={200: OutputSerializer, **_JOB_ERRORS},
    )
    def post(self, request, job_id: int):
        job, refused = self.job_or_not_found(job_id)
        if refused:
            return refused
        job = send_job_heartbeat(job=job, device=request.user)
        return Response(self.OutputSerializer(job).data)


class SenderJobProgressApi(_SenderJobApi):
    class InputSerializer(serializers.Serializer):
        state = serializers.ChoiceField(choices=PROGRESS_STATE_CHOICES)
        note = JSONStringField(required=False, allow_blank=True, default="")

        class Meta:
            ref_name = "SenderJobProgressInput"

    @extend_schema(
        operation_id="sender_job_progress",
        summary="Report that the device is sending or verifying",
        request=InputSerializer,
        responses={200: SenderJobSerializer, 400: SendErrorSerializer, **_JOB_ERRORS},
    )
    def post(self, request, job_id: int):
        job, refused = self.job_or_not_found(job_id)
        if refused:
            return refused
        serializer = self.InputSerializer(data=request.data)
        if not serializer.is_valid():
            return _invalid(serializer.errors)
        job = send_job_progress(job=job, device=request.user, **serializer.validated_data)
        return Response(SenderJobSerializer(selectors.send_job_get(job_id=job.pk)).data)


class SenderJobResultApi(_SenderJobApi):
    class InputSerializer(serializers.Serializer):
        outcome = serializers.ChoiceField(choices=RESULT_OUTCOME_CHOICES)
        observed = SendCountsSerializer(required=False)
        resent = SendCountsSerializer(required=False)
        reason = JSONStringField(required=False, allow_blank=True, default="")

        class Meta:
            ref_name = "SenderJobResultInput"

    @extend_schema(
        operation_id="sender_job_result",
        summary="Report how the send ended, with the counts observed in the client DB",
        description="`sent` with fewer observed items than the job has is recorded as `unknown`.",
        request=InputSerializer,
        responses={200: SenderJobSerializer, 400: SendErrorSerializer, **_JOB_ERRORS},
    )
    def post(self, request, job_id: int):
        job, refused = self.job_or_not_found(job_id)
        if refused:
            return refused
        serializer = self.InputSerializer(data=request.data)
        if not serializer.is_valid():
            return _invalid(serializer.errors)
        data = serializer.validated_data
        job = send_job_report(
            job=job,
            device=request.user,
            outcome=data["outcome"],
            observed=data.get("observed", {}),
            resent=data.get("resent", {}),
            reason=data["reason"],
        )
        return Response(SenderJobSerializer(selectors.send_job_get(job_id=job.pk)).data)


class SenderJobItemContentApi(_SenderJobApi):
    @extend_schema(
        operation_id="sender_job_item_content",
        summary="Download a photo or file item's bytes",
        responses={
            # The content type is guessed from the item's name (image/png, application/pdf, ...).
            (200, "*/*"): OpenApiTypes.BINARY,
            **_JOB_ERRORS,
            404: OpenApiResponse(SendErrorSerializer, description="`SEND_JOB_NOT_FOUND`, `ITEM_NOT_FOUND`"),
        },
    )
    def get(self, request, job_id: int, index: int):
        job, refused = self.job_or_not_found(job_id)
        if refused:
            return refused
        send_job_lease_check(job=job, device=request.user)
        item = selectors.send_job_item_get(job=job, index=index)
        if item is None or not item.file:
            return _error("ITEM_NOT_FOUND", status.HTTP_404_NOT_FOUND)
        content_type = mimetypes.guess_type(item.name)[0] or "application/octet-stream"
        return FileResponse(item.file.open("rb"), as_attachment=True, filename=item.name, content_type=content_type)
