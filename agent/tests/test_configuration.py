"""Misconfiguration fails loudly and at once: a system check refuses to start a web or worker process with an
incomplete LLM, embeddings or rerank configuration, and a permanent provider error (over real HTTP) fails the
question at once with an alert, while a transient one keeps the retry path."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from celery.signals import worker_init

from agent.checks import (
    configuration_require,
    embeddings_configuration_check,
    llm_configuration_check,
    rerank_configuration_check,
)
from agent.llm.base import LlmTransientError
from agent.llm.fake_server import FakeOpenAIServer, error_body
from agent.models import AnswerRun
from agent.services import question_process
from conversations.models import Question
from monitoring.models import Alert

ROOT = Path(__file__).resolve().parents[2]


def _ids(messages) -> list[str]:
    return [message.id for message in messages]


def test_the_default_configuration_passes(settings):
    assert llm_configuration_check() + embeddings_configuration_check() + rerank_configuration_check() == []
    configuration_require()


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"OPENAI_BASE_URL": "http://vllm:8000/v1", "LLM_MODEL": ""}, "agent.E002"),
        ({"LLM_PROVIDER": "openai", "LLM_MODEL": ""}, "agent.E002"),
        ({"LLM_PROVIDER": "scripted"}, "agent.E001"),
        ({"LLM_PROVIDER": "vllm"}, "agent.E001"),
        ({"OPENAI_BASE_URL": "vllm:8000", "LLM_MODEL": "m"}, "agent.E003"),
        ({"LLM_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": ""}, "agent.E004"),
    ],
)
def test_an_incomplete_llm_configuration_is_an_error(settings, overrides, expected):
    for name, value in overrides.items():
        setattr(settings, name, value)
    assert expected in _ids(llm_configuration_check())


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"LLM_PROVIDER": "local", "LLM_MODEL": "m", "OPENAI_BASE_URL": "http://x/v1"}, "agent.W005"),
        ({"OPENAI_API_KEY": "sk-1"}, "agent.W006"),
    ],
)
def test_an_endpoint_the_agent_will_not_use_is_a_warning_that_does_not_stop_a_process(settings, overrides, expected):
    for name, value in overrides.items():
        setattr(settings, name, value)
    [warning] = llm_configuration_check()
    assert warning.id == expected and not warning.is_serious()
    configuration_require()


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"EMBEDDINGS_BASE_URL": "http://tei/v1", "EMBEDDINGS_MODEL": ""}, "agent.E011"),
        ({"EMBEDDINGS_BASE_URL": "tei"}, "agent.E010"),
        ({"EMBEDDINGS_API_KEY": "k"}, "agent.E012"),
    ],
)
def test_an_incomplete_embeddings_configuration_is_an_error(settings, overrides, expected):
    for name, value in overrides.items():
        setattr(settings, name, value)
    assert expected in _ids(embeddings_configuration_check())


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [({"RERANK_URL": "rerank"}, "agent.E020"), ({"RERANK_MODEL": "bge-reranker"}, "agent.E021")],
)
def test_an_incomplete_rerank_configuration_is_an_error(settings, overrides, expected):
    for name, value in overrides.items():
        setattr(settings, name, value)
    assert expected in _ids(rerank_configuration_check())


def test_a_worker_refuses_to_start(settings):
    settings.OPENAI_BASE_URL = "http://vllm:8000/v1"
    settings.LLM_MODEL = ""
    with pytest.raises(SystemExit, match="LLM_MODEL is empty"):
        worker_init.send(sender=None)


def test_a_web_process_refuses_to_start():
    """The WSGI entry point itself (what gunicorn imports) stops with the check's message."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "OPENAI_BASE_URL": "http://vllm:8000/v1"}
    env.pop("LLM_MODEL", None)
    result = subprocess.run(
        [sys.executable, "-c", "import config.wsgi"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "agent.E002" in result.stderr


# --- provider errors at run time, over real HTTP -------------------------------------------------------------


@pytest.fixture
def fake_endpoint(settings):
    with FakeOpenAIServer() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.LLM_MODEL = "fake-model"
        settings.LLM_MAX_RETRIES = 0
        yield server


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, "Incorrect API key provided"),
        (403, "Forbidden"),
        (404, "The model `fake-model` does not exist"),
        (400, "model 'fake-model' not found"),
    ],
)
def test_a_permanent_provider_error_fails_the_question_at_once_with_an_alert(
    answerable_question, fake_endpoint, status, message, django_capture_on_commit_callbacks
):
    fake_endpoint.enqueue(status, error_body(message, kind="invalid_request_error"))
    with django_capture_on_commit_callbacks(execute=True):
        run = question_process(answerable_question.pk)

    answerable_question.refresh_from_db()
    assert answerable_question.status == Question.Status.FAILED
    assert run.outcome == AnswerRun.Outcome.FAILED and f"HTTP {status}" in run.error
    assert AnswerRun.objects.filter(question=answerable_question).count() == 1
    alert = Alert.objects.get(kind=Alert.Kind.LLM_PROVIDER_FAILED)
    assert alert.status == Alert.Status.OPEN and alert.key == "llm:openai"


@pytest.mark.django_db
def test_a_missing_model_fails_the_question_at_once_instead_of_waiting_for_the_sweep(
    answerable_question, settings, django_capture_on_commit_callbacks
):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.LLM_MODEL = ""
    with django_capture_on_commit_callbacks(execute=True):
        question_process(answerable_question.pk)
    answerable_question.refresh_from_db()
    assert answerable_question.status == Question.Status.FAILED
    assert Alert.objects.filter(kind=Alert.Kind.LLM_PROVIDER_FAILED).exists()


@pytest.mark.django_db
def test_a_transient_provider_error_keeps_the_retry_path(
    answerable_question, fake_endpoint, django_capture_on_commit_callbacks
):
    fake_endpoint.enqueue(503, error_body("overloaded"))
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(LlmTransientError):
        question_process(answerable_question.pk)
    answerable_question.refresh_from_db()
    assert answerable_question.status == Question.Status.ACCEPTED
    assert "HTTP 503" in AnswerRun.objects.get(question=answerable_question).error
    assert not Alert.objects.filter(kind=Alert.Kind.LLM_PROVIDER_FAILED).exists()
