from config.commands import ProjectCommand
from demo.scenario import run


class Command(ProjectCommand):
    help = "데모 데이터를 적재하고, 실제 엣지 프로그램과 API로 예시 대화를 재생합니다."

    def handle(self, *args, **options):
        run(self.stdout)
