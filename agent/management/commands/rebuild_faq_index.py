"""python manage.py rebuild_faq_index — drop the FAQ collection and index every active entry from the database."""

import time

from django.core.management.base import BaseCommand, CommandError

from agent.knowledge.faq_index import FaqIndexUnavailable, faq_collection_name, faq_index_rebuild


class Command(BaseCommand):
    help = "Rebuild the Qdrant FAQ index from the database (the database is the source of truth)."

    def handle(self, *args, **options):
        started = time.monotonic()
        try:
            count = faq_index_rebuild()
        except FaqIndexUnavailable as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"{faq_collection_name()}: {count} entries indexed in {time.monotonic() - started:.1f} s")
