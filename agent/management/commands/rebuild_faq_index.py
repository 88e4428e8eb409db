"""python manage.py rebuild_faq_index — drop the FAQ collection and index every active entry from the database."""

import threading
import time

from django.core.management.base import CommandError
from django.db import connection

from agent.knowledge.faq_index import FaqIndexUnavailable, faq_collection_name, faq_index_rebuild
from agent.models import FaqEntry
from config.commands import ProjectCommand
from config.progress import command_progress

_POLL_SECONDS = 0.5


class Command(ProjectCommand):
    help = "데이터베이스의 사용 중인 FAQ로 Qdrant FAQ 색인을 다시 만듭니다 (데이터베이스가 원본입니다)."

    def handle(self, *args, **options):
        active = FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE)
        bar = command_progress(self, total=active.count(), description="FAQ 색인")
        watcher = _IndexedCountWatcher(bar) if not bar.disable else None
        started = time.monotonic()
        try:
            count = faq_index_rebuild()
        except FaqIndexUnavailable as error:
            raise CommandError(f"FAQ 색인을 다시 만들 수 없습니다: {error}") from error
        finally:
            if watcher:
                watcher.stop()
            bar.close()
        self.stdout.write(f"{faq_collection_name()}: FAQ {count}건 색인 ({time.monotonic() - started:.1f}초)")


class _IndexedCountWatcher:
    """Moves the bar as the rebuild marks entries indexed (it clears `indexed_at` first and sets it batch by
    batch, each batch committed), read on a second connection while the rebuild runs."""

    def __init__(self, bar):
        self._bar, self._stopped = bar, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        try:
            while not self._stopped.wait(_POLL_SECONDS):
                indexed = FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE, indexed_at__isnull=False).count()
                self._bar.update(max(0, min(indexed, self._bar.total) - self._bar.n))
        finally:
            connection.close()

    def stop(self):
        self._stopped.set()
        self._thread.join()
        self._bar.update(self._bar.total - self._bar.n)
