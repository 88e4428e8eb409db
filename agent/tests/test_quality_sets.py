"""The quality sets in demo/data are read by the eval_agent loader and each case can be scored.

A set is measured once on the final answerer, so a case that cannot be scored (no expectation that tells right from
wrong, a room that names no demo vendor) would only show up as a silent miss in that one run.
"""

import csv
from pathlib import Path

import pytest

from agent.evaluation import evaluation_cases_read

DEMO_DATA = Path(__file__).resolve().parents[2] / "demo" / "data"
QUALITY_SETS = sorted(DEMO_DATA.glob("quality*.jsonl"))
REFUSING = ("no_evidence", "held", "blocked")


def _demo_rooms() -> set[str]:
    with (DEMO_DATA / "vendors.csv").open(encoding="utf-8") as file:
        return {f"({row['code']}) {row['name']}" for row in csv.DictReader(file)}


def test_there_are_quality_sets():
    assert len(QUALITY_SETS) >= 2


@pytest.mark.parametrize("path", QUALITY_SETS, ids=[path.name for path in QUALITY_SETS])
def test_every_case_reads_and_can_be_scored(path):
    rooms = _demo_rooms()
    cases = evaluation_cases_read(path)
    assert cases
    for number, case in cases:
        expect = case.get("expect", {})
        assert case["room"] in rooms, f"line {number}: {case['room']!r} is not a demo vendor's room"
        assert case.get("topic"), f"line {number}: no topic for the per-topic table"
        answerable = bool(expect.get("must_contain"))
        assert answerable or expect.get("expect_status") in REFUSING, (
            f"line {number}: neither a right fact (must_contain) nor a refusing expect_status"
        )
        for wanted in expect.get("must_contain", []):
            options = wanted if isinstance(wanted, list) else [wanted]
            assert options and all(isinstance(option, str) and option for option in options), f"line {number}"
        for entry in case.get("history", []):
            assert isinstance(entry, str) or entry.get("role") in ("user", "assistant"), f"line {number}"
