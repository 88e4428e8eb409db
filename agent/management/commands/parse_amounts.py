"""`python manage.py parse_amounts "<text>" [--json]` — the amounts and percentages the verifier sees."""

from agent.management.text_commands import TextFindingsCommand
from agent.verification import parse_quantities
from agent.verification.numbers import format_quantity


class Command(TextFindingsCommand):
    help = "글에서 금액·비율·퍼센트포인트를 찾아 정규화한 값을 보여 줍니다 (텍스트를 주지 않으면 표준 입력)."
    json_help = "JSON 목록으로 출력"
    none_found = "금액·비율 없음"

    def findings(self, text: str) -> list[tuple[dict, str]]:
        found = []
        for quantity in parse_quantities(text):
            approx = " (대략)" if quantity.approx else ""
            start, end = quantity.span
            line = f"{quantity.kind}\t{format_quantity(quantity)}{approx}\t[{start}, {end}]\t{quantity.raw}"
            found.append((quantity.as_dict(), line))
        return found
