from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "에이전트"

    def ready(self):
        from celery.signals import worker_process_init

        from agent.warmup import celery_process_init

        worker_process_init.connect(celery_process_init, dispatch_uid="agent.warmup")
