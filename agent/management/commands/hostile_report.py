"""Run the hostile-model suite in a throwaway test database and print its per-behaviour table."""

import json
import tempfile
from pathlib import Path

from django.db import connection

from agent.hostile_suite import (
    GUARDED_ELSEWHERE,
    hostile_knowledge_stores,
    hostile_suite_run,
    hostile_table,
    hostile_world_create,
    table_markdown,
)
from config.commands import ProjectCommand


class Command(ProjectCommand):
    help = (
        "적대적 모델(agent/llm/hostile_server.py)로 자체 세계의 사례 200여 건을 일회용 테스트 데이터베이스에서 "
        "실제 파이프라인(openai 제공자, HTTP)으로 실행하고, 행동별 표(사례, 전달, 안내 문구, 보류, 잡아냄, "
        "거짓 전달)를 출력합니다. 설정된 데이터베이스에는 아무것도 쓰지 않습니다."
    )

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="행동별 요약과 거짓 전달 사례를 JSON으로 출력")

    def handle(self, *args, **options):
        test_settings = connection.settings_dict.setdefault("TEST", {})
        if connection.vendor != "sqlite":
            # Never the suite's own test database: another run may be using it.
            test_settings["NAME"] = f"{test_settings.get('NAME') or 'test_' + connection.settings_dict['NAME']}_hostile"
        original_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        try:
            with tempfile.TemporaryDirectory() as folder, hostile_knowledge_stores(Path(folder)):
                outcomes = hostile_suite_run(hostile_world_create())
        finally:
            connection.creation.destroy_test_db(original_name, verbosity=0)
        rows = hostile_table(outcomes)
        if options["json"]:
            data = {
                "rows": [row.__dict__ for row in rows],
                "guarded_elsewhere": GUARDED_ELSEWHERE,
                "untrue": [
                    {"row": o.case.row, "vendor": o.case.vendor_code, "question": o.case.question,
                     "status": o.status, "delivered": o.delivered, "problems": o.problems}
                    for o in outcomes if o.problems
                ],
            }  # fmt: skip
            self.stdout.write(json.dumps(data, ensure_ascii=False))
            return
        self.stdout.write(table_markdown(rows))
        for row in rows:
            for example in row.examples[:1]:
                self.stdout.write(f"- {row.row}: {example}")
