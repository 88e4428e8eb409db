"""Check a quality set's expectations against the demo data each line cites in its `source` field.

    python scripts/check_quality_sources.py demo/data/quality_heldout6.jsonl [--near 0.8]

`source` is `records:<source_id>`, `faq:<source_id>` or `hub:<path under demo/data/knowledge>` (several joined
with " + "); a record not in force on the question's date is accepted only when the source says
"the question names its period". Unanswerable lines cite `none`, or `other vendor: records:<source_id>` when the
question asks for another vendor's fact (the must_not_contain values must come from that record).

Checks: the room is a demo vendor's; every must_contain (one option of a choice) is in the cited text and a cited
record belongs to the room's vendor; must_not_contain values occur somewhere in the demo data (a real rival
value) and, when they are in the cited text too, are listed as another item of the same source; no question is
the same as, or close (difflib ratio >= --near) to, a question of another set, an FAQ question or an FAQ tuning
query (another set's question is named by its set only, never quoted: a new set is written blind to the others).
Exit status 1 when a check fails. Runs on the files alone: no database, no answerer.
"""

import argparse
import csv
import difflib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "demo" / "data"
NAMED_PERIOD = "names its period"
REFUSING = ("no_evidence", "held", "blocked")


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _record_text(record: dict) -> str:
    values = " ".join(f"{key}: {value}" for key, value in record.get("values", {}).items())
    return f"{record['body']} {values}"


def _in_force(record: dict, day: str) -> bool:
    start, end = record.get("effective_from"), record.get("effective_to")
    return (not start or start <= day) and (not end or day <= end)


class Sources:
    def __init__(self):
        with (DATA / "vendors.csv").open(encoding="utf-8") as file:
            self.vendors = {row["code"]: row["name"] for row in csv.DictReader(file)}
        self.records = {r["source_id"]: r for r in _jsonl(DATA / "records.jsonl") if r.get("kind")}
        self.faq = {r["source_id"]: r for r in _jsonl(DATA / "faq.jsonl")}
        knowledge = DATA / "knowledge"
        self.hub = {p.relative_to(knowledge).as_posix(): p.read_text(encoding="utf-8") for p in knowledge.rglob("*.md")}
        raw = [(DATA / name).read_text(encoding="utf-8") for name in ("records.jsonl", "faq.jsonl", "company.jsonl")]
        self.everything = "\n".join(raw + list(self.hub.values()))

    def other_questions(self, target: Path) -> list[tuple[str, str]]:
        questions = []
        for path in [*sorted(DATA.glob("quality*.jsonl")), DATA / "eval.jsonl"]:
            if path.resolve() != target.resolve():
                questions += [(path.name, row["question"]) for row in _jsonl(path)]
        questions += [("faq.jsonl", r.get("question") or r.get("q")) for r in self.faq.values()]
        for path in sorted((ROOT / "agent" / "tests" / "data").glob("faq_*.jsonl")):
            questions += [(path.name, row["query"]) for row in _jsonl(path)]
        return questions


def check(target: Path, near: float) -> tuple[list[str], list[str], list[dict]]:
    sources = Sources()
    rows = _jsonl(target)
    problems, notes = [], []
    for number, row in enumerate(rows, start=1):
        where = f"line {number} ({row['question']})"
        match = re.fullmatch(r"\((\d{4})\) (.+)", row["room"])
        if not match or sources.vendors.get(match.group(1)) != match.group(2):
            problems.append(f"{where}: room {row['room']!r} is not a demo vendor's")
            continue
        code, expect, source = match.group(1), row["expect"], row.get("source", "")
        must, must_not = expect.get("must_contain", []), expect.get("must_not_contain", [])
        day = row.get("date")
        if not day:
            problems.append(f"{where}: no date (the records in force depend on it)")
            continue
        if not must:
            problems += [f"{where}: {p}" for p in _check_unanswerable(sources, code, expect, source)]
            continue
        texts = []
        for part in source.split(" + "):
            kind, _, ref = part.partition(":")
            ref = ref.split(" (")[0].strip()
            if kind == "records" and ref in sources.records:
                record = sources.records[ref]
                if record["vendor_code"] != code:
                    problems.append(f"{where}: {ref} belongs to {record['vendor_code']}, not {code}")
                if not _in_force(record, day) and NAMED_PERIOD not in source:
                    problems.append(f"{where}: {ref} is not in force on {day}")
                texts.append(_record_text(record))
            elif kind == "faq" and ref in sources.faq:
                texts.append(sources.faq[ref].get("answer") or sources.faq[ref].get("a"))
            elif kind == "hub" and ref in sources.hub:
                texts.append(sources.hub[ref])
            else:
                problems.append(f"{where}: unknown source {part!r}")
        text = "\n".join(texts)
        for wanted in must:
            options = wanted if isinstance(wanted, list) else [wanted]
            if not any(option in text for option in options):
                problems.append(f"{where}: must_contain {wanted!r} is not in {source}")
        for forbidden in must_not:
            if forbidden not in sources.everything:
                problems.append(f"{where}: must_not_contain {forbidden!r} occurs nowhere in the demo data")
            elif forbidden in text:
                notes.append(f"line {number}: must_not_contain {forbidden!r} is another item of the same source")
    for number, row in enumerate(rows, start=1):
        for name, question in sources.other_questions(target):
            ratio = difflib.SequenceMatcher(None, row["question"], question).ratio()
            if ratio >= near:
                # Another quality set's question is not quoted: the set being checked may be written blind to it.
                other = f"a question of {name}" if name.startswith(("quality", "eval")) else f"{name} {question!r}"
                problems.append(f"line {number} ({row['question']}): close to {other} ({ratio:.2f})")
    keys = [row["question"] + json.dumps(row.get("history", []), ensure_ascii=False) for row in rows]
    problems += [f"repeated in the set: {key}" for key in sorted({k for k in keys if keys.count(k) > 1})]
    return problems, notes, rows


def _check_unanswerable(sources: Sources, code: str, expect: dict, source: str) -> list[str]:
    if expect.get("expect_status") not in REFUSING:
        return ["neither must_contain nor a refusing expect_status"]
    if source == "none":
        return []
    if not source.startswith("other vendor: records:"):
        return [f"unanswerable source {source!r}"]
    ref = source.removeprefix("other vendor: records:").split()[0]
    record = sources.records.get(ref)
    if not record or record["vendor_code"] == code:
        return [f"{ref} is not another vendor's record"]
    missing = [text for text in expect.get("must_not_contain", []) if text not in _record_text(record)]
    return [f"must_not_contain {missing} is not in {ref}"] if missing else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--near", type=float, default=0.8, help="difflib ratio from which a question is too close")
    args = parser.parse_args()
    problems, notes, rows = check(args.file, args.near)
    topics, rooms = {}, {}
    for row in rows:
        topics[row["topic"]] = topics.get(row["topic"], 0) + 1
        rooms[row["room"]] = rooms.get(row["room"], 0) + 1
    answerable = sum(1 for row in rows if row["expect"].get("must_contain"))
    print(
        f"{len(rows)} lines: {answerable} answerable, {len(rows) - answerable} unanswerable, "
        f"{sum(1 for row in rows if row.get('history'))} with history"
    )
    print("per topic:", topics)
    print("rooms:", dict(sorted(rooms.items())))
    for note in notes:
        print("note:", note)
    print(f"problems: {len(problems)}")
    for problem in problems:
        print(" -", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
