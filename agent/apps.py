from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "에이전트"

    def ready(self):
        from celery.signals import worker_init, worker_process_init

        from agent import checks  # noqa: F401  (registers the configuration checks)
        from agent.warmup import celery_process_init, celery_worker_init

        worker_process_init.connect(celery_process_init, dispatch_uid="agent.warmup")
        worker_init.connect(_worker_configuration_require, dispatch_uid="agent.configuration")
        # after the configuration check: a worker that must not start does not load the analyser first
        worker_init.connect(celery_worker_init, dispatch_uid="agent.analyser_preload")


def _worker_configuration_require(**kwargs):
    # A worker with an incomplete model configuration would fail every question: it must not start. SystemExit,
    # because Celery logs and swallows a signal receiver's ordinary exceptions.
    from django.core.exceptions import ImproperlyConfigured

    from agent.checks import configuration_require

    try:
        configuration_require()
    except ImproperlyConfigured as error:
        raise SystemExit(str(error)) from error
