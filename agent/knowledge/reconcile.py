"""Two values for one subject: one of them is evidence, the other is not given to the model.

Sources disagree: the vendor's contract says one payment day and the shared policy another, an FAQ answer was
updated while a hub document still states the old deadline. Shown both, a model (or the local answerer) picks
one at random or repeats both. So, before the model reads a turn's evidence, each statement of a shared item
(FAQ answer sentence, hub passage line) is compared with the statements of the other items:

- two statements are about one subject when they carry a value of the same unit (`3영업일` / `5영업일`, `15%` /
  `18%`, `25,000원` / `30,000원`) that differs, and share at least CONFLICT_MIN_OVERLAP of their nouns (the
  item's context — FAQ question, section path — counts as the statement's own words);
- a statement of a bound (`최대 50%`, `최소 20박스`, `이상`) states a limit, not the value: it conflicts with nothing;
- the winner: the vendor's own record over shared knowledge; between shared items the newer (`extra["as_of"]`:
  an FAQ entry's source date, a hub document's registration); a tie keeps both.

The losing statement is removed from its item; an item left without statements is dropped. Records are never
cut: they are the counterpart's own terms, and their periods were already filtered to the question's dates.
"""

import re
from dataclasses import dataclass, replace

from agent.knowledge.passages import unit_from_line
from agent.knowledge.types import EvidenceItem
from agent.llm.focus import noun_words
from agent.verification.sentences import split_sentences

CONFLICT_MIN_OVERLAP = 0.4
_VALUE_RE = re.compile(r"(?P<number>\d+(?:[.,]\d+)*)\s*(?P<unit>영업일|개월|시간|박스|%|퍼센트|원|일|주|분|개|kg|ml|L)")
_BOUND_WORDS = ("최대", "최소", "이상", "이하", "한도", "초과", "미만", "까지입니다", "넘는", "넘을")
_SOURCE_RANK = {"record": 2}  # everything else is shared knowledge (rank 0)


@dataclass(frozen=True)
class _Statement:
    item_index: int
    text: str
    words: frozenset[str]
    values: frozenset[tuple[str, str]]  # (unit, number)


def _values(text: str) -> frozenset[tuple[str, str]]:
    return frozenset((match["unit"], match["number"].replace(",", "")) for match in _VALUE_RE.finditer(text))


def _words(text: str) -> frozenset[str]:
    return noun_words(text)


def _statements(item: EvidenceItem) -> tuple[str, list[str]]:
    """(context, statements) of an item as the reconciliation reads it."""
    if item.source_kind == "faq":
        question, _, answer = item.text.partition("\n답변:")
        return question.removeprefix("질문:").strip(), [sentence.text for sentence in split_sentences(answer)]
    if item.source_kind == "hub":
        return "", [line for line in item.text.split("\n") if line.strip()]
    return item.title, [sentence.text for sentence in split_sentences(item.text)]


def _rank(item: EvidenceItem) -> tuple[int, str]:
    return _SOURCE_RANK.get(item.source_kind, 0), str(item.extra.get("as_of") or "")


def _numbers(statement: _Statement, unit: str) -> set[str]:
    return {number for value_unit, number in statement.values if value_unit == unit}


def _conflict(first: _Statement, second: _Statement) -> bool:
    if not first.values or not second.values:
        return False
    units = {unit for unit, _ in first.values} & {unit for unit, _ in second.values}
    if not units:
        return False
    if all(_numbers(first, unit) == _numbers(second, unit) for unit in units):
        return False
    union = first.words | second.words
    return bool(union) and len(first.words & second.words) / len(union) >= CONFLICT_MIN_OVERLAP


def evidence_reconcile(items: list[EvidenceItem]) -> tuple[list[EvidenceItem], list[dict]]:
    """`items` with the losing statement of every conflict removed, and what was removed (for the audit trail:
    `{"reference", "text", "kept_reference", "kept_text"}`). Order is kept."""
    statements: list[_Statement] = []
    for index, item in enumerate(items):
        context, texts = _statements(item)
        for text in texts:
            unit = unit_from_line(text) if item.source_kind == "hub" else None
            body = unit.text if unit else text
            if any(word in body for word in _BOUND_WORDS):
                continue
            words = _words(body) | _words(unit.path.split(" > ")[-1] if unit and unit.path else context)
            statements.append(_Statement(index, text, words, _values(body)))
    losers: dict[int, set[str]] = {}
    removed: list[dict] = []
    for position, first in enumerate(statements):
        for second in statements[position + 1 :]:
            if first.item_index == second.item_index or not _conflict(first, second):
                continue
            first_rank, second_rank = _rank(items[first.item_index]), _rank(items[second.item_index])
            if first_rank == second_rank:
                continue
            loser, winner = (first, second) if first_rank < second_rank else (second, first)
            if items[loser.item_index].source_kind == "record" or loser.text in losers.get(loser.item_index, set()):
                continue
            losers.setdefault(loser.item_index, set()).add(loser.text)
            removed.append(
                {
                    "reference": items[loser.item_index].reference,
                    "text": loser.text,
                    "kept_reference": items[winner.item_index].reference,
                    "kept_text": winner.text,
                }
            )
    if not losers:
        return list(items), []
    kept = []
    for index, item in enumerate(items):
        if index not in losers:
            kept.append(item)
            continue
        text = _without(item, losers[index])
        if text:
            kept.append(replace(item, text=text))
    return kept, removed


def _without(item: EvidenceItem, statements: set[str]) -> str:
    """The item's text without the given statements; "" when no statement is left."""
    if item.source_kind == "hub":
        return "\n".join(line for line in item.text.split("\n") if line.strip() and line not in statements)
    question, _, answer = item.text.partition("\n답변:")
    left = [sentence.text for sentence in split_sentences(answer) if sentence.text not in statements]
    return f"{question}\n답변: {' '.join(left)}" if left else ""
