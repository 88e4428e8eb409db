from django.core.management.base import BaseCommand

from demo.scenario import run


class Command(BaseCommand):
    help = "Load the demo dataset and replay a sample conversation through the real edge programs and APIs."

    def handle(self, *args, **options):
        run(self.stdout)
