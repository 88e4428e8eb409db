from config.commands import ProjectCommand
from demo.scenario import demo_data_load, run


class Command(ProjectCommand):
    help = "데모 데이터를 적재하고, 실제 엣지 프로그램과 API로 예시 대화를 재생합니다."

    def add_arguments(self, parser):
        parser.add_argument(
            "--load-only",
            action="store_true",
            help="데모 데이터만 반영합니다 (대화 재생, 엣지 프로그램, 발송 없이). ask / eval_agent로 시험할 때.",
        )

    def handle(self, *args, **options):
        if options["load_only"]:
            demo_data_load(self.stdout)
        else:
            run(self.stdout)
