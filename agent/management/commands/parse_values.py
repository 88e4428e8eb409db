"""`python manage.py parse_values "<text>" [--json]` — every value the verifier finds in a text: amounts and
percentages (exactly as `parse_amounts` reports them), dates, clock times, quantities and contacts."""

from agent.management.text_commands import TextFindingsCommand
from agent.verification import parse_quantities
from agent.verification.numbers import format_quantity
from agent.verification.values import display, parse_values


class Command(TextFindingsCommand):
    help = (
        "글에서 검증 엔진이 찾는 값을 모두 보여 줍니다: 금액·비율·퍼센트포인트, 날짜, 시각, 수량, 연락처 "
        "(텍스트를 주지 않으면 표준 입력)."
    )
    json_help = "JSON 목록으로 출력 (값 하나에 객체 하나, 위치 순)"
    none_found = "값 없음"

    def findings(self, text: str) -> list[tuple[dict, str]]:
        found = [(quantity.span, quantity.as_dict(), format_quantity(quantity)) for quantity in parse_quantities(text)]
        found += [(value.span, value.as_dict(), display(value)) for value in parse_values(text)]
        found.sort(key=lambda item: item[0])
        return [
            (payload, f"{payload['kind']}\t{shown}\t[{start}, {end}]\t{payload['raw']}")
            for (start, end), payload, shown in found
        ]
