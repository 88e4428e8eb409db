"""parse_amounts and check_draft: the JSON interface later issues and outside checks rely on."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

CASE = {
    "draft": "대한물산 담당자님, 삼송전자 공급가는 35,000원입니다. 제안서 보내드렸습니다. 할인율은 15%입니다.",
    "evidence": ["삼성전자 공급가 30,000원, 할인율 15%"],
    "known_brands": ["삼성전자", "LG전자"],
    "counterpart": ["대한물산"],
    "other_vendors": ["한빛상사"],
    "confirmed_actions": [],
}


def run(*args, stdin: str | None = None) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, **({"stdin": io.StringIO(stdin)} if stdin is not None else {}))
    return out.getvalue()


def test_parse_amounts_json_lists_each_quantity():
    payload = json.loads(run("parse_amounts", "가격은 1억 2천만 원, 할인 12.5%, 3%p 상승, 2026년 11월 30일", "--json"))
    assert payload == [
        {"kind": "amount", "value": 120000000, "unit": "KRW", "approx": False, "span": [4, 12], "raw": "1억 2천만 원"},
        {"kind": "percent", "value": 12.5, "unit": "%", "approx": False, "span": [17, 22], "raw": "12.5%"},
        {"kind": "percent_point", "value": 3, "unit": "%p", "approx": False, "span": [24, 27], "raw": "3%p"},
    ]


def test_parse_amounts_writes_korean_unescaped_and_reads_stdin():
    output = run("parse_amounts", "--json", stdin="약 3만원")
    assert '"raw": "약 3만원"' in output and json.loads(output)[0]["approx"] is True


def test_parse_amounts_human_output():
    assert "30,000원" in run("parse_amounts", "3만원")
    assert "금액·비율 없음" in run("parse_amounts", "내일 만나요")


def test_parse_amounts_rejects_empty_text():
    with pytest.raises(CommandError, match="비어"):
        run("parse_amounts", "   ")


def test_check_draft_json():
    payload = json.loads(run("check_draft", "--json", stdin=json.dumps(CASE, ensure_ascii=False)))
    assert set(payload) == {"violations", "clean_text", "quantities"}
    assert [(v["kind"], v["value"]) for v in payload["violations"]] == [
        ("brand_misspelt", "삼송전자"),
        ("amount", 35000),
        ("action_claim", None),
    ]
    assert payload["violations"][0]["suggestion"] == "삼성전자"
    assert payload["clean_text"] == "할인율은 15%입니다."
    assert [q["value"] for q in payload["quantities"]] == [35000, 15]


def test_check_draft_optional_lists_default_to_empty():
    payload = json.loads(run("check_draft", "--json", stdin='{"draft": "3만원입니다.", "evidence": ["3만원"]}'))
    assert payload["violations"] == [] and payload["clean_text"] == "3만원입니다."


def test_check_draft_reports_other_vendor_figures_and_references_unless_internal():
    """A figure the evidence states only about a masked vendor, and a sentence about one; `internal` turns both off."""
    case = {
        "draft": "해당 협력사는 결품률 4.2%입니다. 결품률은 4.2%입니다.",
        "evidence": ["[다른 벤더]는 결품률 4.2%입니다."],
        "counterpart": ["대한물산"],
        "other_vendors": ["가온상사"],
    }
    payload = json.loads(run("check_draft", "--json", stdin=json.dumps(case, ensure_ascii=False)))
    kinds = [(violation["kind"], violation["text"]) for violation in payload["violations"]]
    assert kinds == [("other_vendor", "해당 협력사"), ("other_vendor_value", "4.2%"), ("other_vendor_value", "4.2%")]
    assert payload["clean_text"] == ""

    internal = json.loads(
        run("check_draft", "--json", stdin=json.dumps({**case, "internal": True}, ensure_ascii=False))
    )
    assert internal["violations"] == []


def test_check_draft_takes_the_counterparts_brands_and_reports_names_found_nowhere():
    """A misspelling of a brand the counterpart carries counts without the evidence holding the brand."""
    case = {
        "draft": "햇살천도 같은 조건입니다. 별빛농장 제품도 같은 조건입니다.",
        "evidence": ["결제 할인율은 2.5%입니다."],
        "known_brands": ["햇살촌"],
        "counterpart_brands": ["햇살촌"],
    }
    payload = json.loads(run("check_draft", "--json", stdin=json.dumps(case, ensure_ascii=False)))
    found = [(v["kind"], v["text"], v["suggestion"]) for v in payload["violations"]]
    assert found == [("brand_misspelt", "햇살천", "햇살촌"), ("brand_unknown", "별빛농장", None)]
    without = json.loads(run("check_draft", "--json", stdin=json.dumps({**case, "counterpart_brands": []})))
    assert [v["kind"] for v in without["violations"]] == ["brand_unknown"]


def test_check_draft_human_report():
    output = run("check_draft", stdin=json.dumps(CASE, ensure_ascii=False))
    assert "[amount]" in output and "근거에 없는 금액: 35,000원" in output and "할인율은 15%입니다." in output


def test_check_draft_batch_prints_one_result_per_line_in_order(tmp_path):
    cases = [
        {**CASE, "confirmed_actions": ["send"]},
        {"draft": "한빛상사 건입니다.", "other_vendors": ["한빛상사"]},
        {"draft": "문제없습니다.", "evidence": []},
    ]
    batch = tmp_path / "cases.jsonl"
    batch.write_text("\n".join(json.dumps(case, ensure_ascii=False) for case in cases) + "\n\n", encoding="utf-8")
    lines = run("check_draft", "--batch", str(batch)).splitlines()
    results = [json.loads(line) for line in lines]
    assert len(results) == 3
    assert [v["kind"] for v in results[0]["violations"]] == ["brand_misspelt", "amount"]
    assert [v["kind"] for v in results[1]["violations"]] == ["other_vendor"]
    assert results[2] == {"violations": [], "clean_text": "문제없습니다.", "quantities": []}


def test_check_draft_reads_the_fuzzy_brand_length_setting_at_call_time(settings):
    case = {"draft": "농삼 라면", "evidence": ["농심 라면"], "known_brands": ["농심"]}
    assert json.loads(run("check_draft", "--json", stdin=json.dumps(case)))["violations"] == []
    settings.VERIFICATION_MIN_FUZZY_BRAND_LENGTH = 2
    violations = json.loads(run("check_draft", "--json", stdin=json.dumps(case)))["violations"]
    assert [(v["kind"], v["suggestion"]) for v in violations] == [("brand_misspelt", "농심")]


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("not json", "JSON이 아닙니다"),
        ("[1, 2]", "JSON 객체"),
        ("{}", '"draft"'),
        ('{"draft": 3}', '"draft"'),
        ('{"draft": "x", "evidence": "one passage"}', '"evidence"'),
        ('{"draft": "x", "known_brands": [1]}', '"known_brands"'),
        ('{"draft": "x", "counterpart": null}', '"counterpart"'),
        ('{"draft": "x", "brands": []}', "알 수 없는 항목: brands"),
        ('{"draft": "x", "internal": "yes"}', '"internal"'),
    ],
)
def test_check_draft_bad_input_is_a_clear_command_error(stdin, message):
    with pytest.raises(CommandError, match=message):
        run("check_draft", "--json", stdin=stdin)


def test_check_draft_batch_names_the_bad_line(tmp_path):
    batch = tmp_path / "cases.jsonl"
    batch.write_text('{"draft": "좋아요"}\n{"draft": 1}\n', encoding="utf-8")
    out = io.StringIO()
    with pytest.raises(CommandError, match="2번째 줄"):
        call_command("check_draft", "--batch", str(batch), stdout=out)
    assert out.getvalue() == ""  # nothing is printed unless every line is valid


def test_check_draft_missing_batch_file(tmp_path):
    with pytest.raises(CommandError, match="읽을 수 없습니다"):
        run("check_draft", "--batch", str(tmp_path / "missing.jsonl"))


def test_bad_input_exits_non_zero_without_a_traceback():
    """Run as the real CLI: a CommandError prints one line to stderr and exits 1."""
    root = Path(__file__).resolve().parents[2]
    completed = subprocess.run(
        [sys.executable, "manage.py", "check_draft", "--json"],
        input='{"draft": 1}',
        capture_output=True,
        text=True,
        cwd=root,
        env={"DJANGO_SETTINGS_MODULE": "config.settings.test", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert completed.returncode == 1
    assert "Traceback" not in completed.stderr and '"draft"' in completed.stderr


def test_parse_values_json_lists_every_value_in_order():
    text = "단가 3 만원, 할인 10%, 익월 25일 오후 2시까지 100박스, 문의 02-1234-5678"
    payload = json.loads(run("parse_values", text, "--json"))
    assert [(item["kind"], item["value"]) for item in payload] == [
        ("amount", 30000),
        ("percent", 10),
        ("date", "next_month_day:25"),
        ("time", "14:00"),
        ("quantity", {"value": 100, "unit": "박스"}),
        ("contact", "0212345678"),
    ]
    assert payload[0] == json.loads(run("parse_amounts", text, "--json"))[0]  # amounts exactly as parse_amounts
    assert payload[4]["unit"] == "박스" and "unit" not in payload[2]
    for item in payload:
        assert text[item["span"][0] : item["span"][1]] == item["raw"]


def test_parse_values_human_output_and_empty_text():
    assert "14:00" in run("parse_values", "오후 2시")
    assert "값 없음" in run("parse_values", "내일 만나요")
    with pytest.raises(CommandError, match="비어"):
        run("parse_values", " ")


def test_check_draft_takes_the_question_as_support_for_quantities():
    case = {"draft": "100박스 주문 가능합니다.", "evidence": ["주문 안내"]}
    flagged = json.loads(run("check_draft", "--json", stdin=json.dumps(case, ensure_ascii=False)))
    assert [v["kind"] for v in flagged["violations"]] == ["quantity"]
    case["question"] = "100박스 주문 되나요?"
    assert json.loads(run("check_draft", "--json", stdin=json.dumps(case, ensure_ascii=False)))["violations"] == []


def test_check_draft_rejects_a_question_that_is_not_text():
    with pytest.raises(CommandError, match="question"):
        run("check_draft", "--json", stdin=json.dumps({"draft": "x", "question": ["y"]}))
