"""OpenAPI links of the send API: which response's job id the next call of a send takes, so a client (and the fuzz
suite's stateful phase) can follow a job from its request through the claim to its result.

drf-spectacular has no way to declare links on a response, so a postprocessing hook (`SPECTACULAR_SETTINGS`) adds
them to the responses named here by operation id and status.
"""

_CLAIMED_JOB = {"job_id": "$response.body#/job/id"}  # the claim answers {"job": {...}}
_REPORTED_JOB = {"job_id": "$response.body#/id"}  # progress and result answer the job itself
_SAME_JOB = {"job_id": "$request.path.job_id"}  # the lease heartbeat answers only the new expiry


def _job_links(job_id: dict, *names: str) -> dict:
    calls = {
        "ExtendTheLease": ("sender_job_heartbeat", "The sender keeps its lease on the job while it sends."),
        "ReportProgress": ("sender_job_progress", "The sender reports that it is sending or verifying the job."),
        "DownloadAnItem": ("sender_job_item_content", "The sender downloads a photo or file item of the job."),
        "ReportTheResult": ("sender_job_result", "The sender reports how the send ended."),
    }
    return {
        name: {"operationId": calls[name][0], "parameters": dict(job_id), "description": calls[name][1]}
        for name in names
    }


_CLAIM = {
    "ClaimTheJob": {
        "operationId": "sender_claim",
        "description": "A sender serving the job's room claims the next queued job (this one when it is the oldest).",
    }
}

RESPONSE_LINKS = {
    ("send_requests_create", "201"): _CLAIM,
    ("send_requests_create", "200"): _CLAIM,
    ("sender_claim", "200"): _job_links(
        _CLAIMED_JOB, "ExtendTheLease", "ReportProgress", "DownloadAnItem", "ReportTheResult"
    ),
    ("sender_job_heartbeat", "200"): _job_links(_SAME_JOB, "ReportProgress", "DownloadAnItem", "ReportTheResult"),
    ("sender_job_progress", "200"): _job_links(
        _REPORTED_JOB, "ExtendTheLease", "ReportProgress", "DownloadAnItem", "ReportTheResult"
    ),
    # A result reported again is answered from the job's final state (or refused as a conflict).
    ("sender_job_result", "200"): _job_links(_REPORTED_JOB, "ReportTheResult"),
    ("devices_token_rotate", "200"): {
        "ReadTheNewTokensStatus": {
            "operationId": "devices_token",
            "description": "The device, now calling with the new token, reads its status.",
        }
    },
}


def schema_document_links(result, generator, request, public):
    """drf-spectacular postprocessing hook: the links of `RESPONSE_LINKS` on their responses."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for status_code, response in operation.get("responses", {}).items():
                links = RESPONSE_LINKS.get((operation.get("operationId"), str(status_code)))
                if links:
                    response["links"] = links
    return result
