"""A real Celery worker process for the fault tests, with a scripted model installed through `provider_override`.

`python -m agent.tests.fault_worker hang|answer` with the Django settings in the environment (the test passes its
database, Redis and small lease settings). `hang`: after the search, the model call blocks until the process is
killed, having created the file named by `FAULT_WORKER_HANG_FILE` — the test's sign that it is mid-question.
`answer`: the search, then the answer (twice over, for a retried run).
"""

import os
import sys
import threading
from pathlib import Path

import django


def main(mode: str) -> None:
    django.setup()
    from agent.llm.base import provider_override
    from agent.llm.scripted import ScriptedProvider
    from agent.tests.faults import ANSWER, SEARCH
    from config.celery import app

    def hang(messages, tools):
        Path(os.environ["FAULT_WORKER_HANG_FILE"]).touch()
        threading.Event().wait()  # until SIGKILL

    steps = {"hang": [SEARCH, hang], "answer": ANSWER * 2}[mode]
    # The test settings run tasks in the caller; this process is a worker, and its retries go through the broker.
    app.conf.task_always_eager = False
    with provider_override(ScriptedProvider(steps)):
        app.worker_main(
            [
                "worker",
                "--pool=solo",
                "--queues=agent",
                "--without-mingle",
                "--without-gossip",
                "--without-heartbeat",
                "--loglevel=WARNING",
                f"--hostname=fault-{mode}-{os.getpid()}@%h",
            ]
        )


if __name__ == "__main__":
    main(sys.argv[1])
