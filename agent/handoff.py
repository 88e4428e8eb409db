"""Sentences that hand the vendor to a person: the agent answers from its evidence and never does that.

A draft may promise that someone will get back (`확인 후 연락드리겠습니다`), route the vendor to a person
(`담당자에게 연결해 드리겠습니다`, `직원에게 전달하겠습니다`) or announce a person's later answer (`상담원이 안내해
드릴 예정입니다`). None of that will happen — the bot routes nothing — so code removes those sentences, whatever
the model was told. Three kinds of entries in one table, matched with one Aho-Corasick automaton over the
sentence without spaces and in lower case (so `연결해드리겠습니다` and `연결해 드리겠습니다`, `MD` and `md` match
alike):

- `promise`: a phrase that is a handoff on its own (later contact, routing);
- `person` + `person_verb`: a handoff when both are in one sentence (`직원에게 … 전달하겠습니다`);
- `person` + `instruction`: telling the vendor to go to a person (`담당자에게 문의해 주세요`) is a handoff too,
  unless the evidence itself names that person — then it is the documented procedure
  (`반품은 담당 MD에게 요청해 주세요` copied from a policy), not the bot passing the vendor on.

A contact detail (`담당자 연락처는 02-…입니다`) is an answer, not a handoff: `연락처` never counts as `연락`.
"""

from dataclasses import dataclass
from functools import cache

import ahocorasick

from agent.verification import split_sentences
from agent.verification.sentences import text_without

HANDOFF_REASON = "사람에게 넘기는 문장"

PROMISE = "promise"
PERSON = "person"
PERSON_VERB = "person_verb"
INSTRUCTION = "instruction"

# Written without spaces: the sentence is matched without them.
HANDOFF_TABLE: dict[str, tuple[str, ...]] = {
    PROMISE: (
        "연결해드리",
        "연결해드릴",
        "연결시켜드리",
        "연결하겠",
        "연결드리겠",
        "연락드리겠",
        "연락드릴",
        "연락을드리겠",
        "연락을드릴",
        "연락주실것",
        "연락주실예정",
        "연락이갈",
        "연락이가도록",
        "회신드리겠",
        "회신드릴",
        "회신해드리겠",
        "답변드리도록하겠",
        "확인후연락",
        "확인후안내",
        "확인후답변",
        "확인후회신",
        "확인후알려",
        "확인해서알려드리겠",
        "확인하여알려드리겠",
        "알아보고알려",
        "추후연락",
        "추후안내",
        "추후회신",
        "추후답변",
        "다시연락드리",
        "별도로연락",
        "따로연락",
        "이관하겠",
        "이관해드리",
        "넘겨드리겠",
        "전달해두겠",
        "전달해놓겠",
    ),
    PERSON: (
        "담당자",
        "담당직원",
        "담당부서",
        "담당팀",
        "담당md",
        "담당엠디",
        "담당바이어",
        "상담원",
        "상담사",
        "상담직원",
        "직원",
        "매니저",
        "관리자",
        "실무자",
        "책임자",
        "팀장",
        "고객센터",
        "콜센터",
        "영업사원",
        "영업담당",
        "md가",
        "md께",
        "md에게",
        "엠디",
        "바이어",
        "사람이",
        "사람에게",
    ),
    PERSON_VERB: (
        "전달하겠",
        "전달해드리",
        "전달드리",
        "전달했",
        "전달하였",
        "전달해드렸",
        "전달드렸",
        "안내해드릴",
        "안내드릴",
        "안내할예정",
        "안내해줄",
        "답변드릴",
        "답변해드릴",
        "답변할예정",
        "답변을드릴",
        "확인해드릴",
        "확인할예정",
        "처리해드릴",
        "도와드릴",
        "배정해드리",
        "배정하겠",
        "넘기겠",
        "넘겨드",
        "연결해",
        "연결될",
        "연결되도록",
        "연락이",
        "연락을드",
        "연락할",
        "연락해드",
        "연락드",
        "회신할",
        "회신이",
        "회신을드",
        "회신드",
    ),
    INSTRUCTION: (
        "문의해주",
        "문의하시",
        "문의바랍",
        "문의주시",
        "문의해보",
        "연락주시",
        "연락해주",
        "연락하시",
        "연락바랍",
        "연락해보",
        "요청해주",
        "요청하시",
        "상담받",
        "상담해주",
    ),
}
# Masked before matching: a contact detail names a person and 연락 without handing anything off.
_NOT_HANDOFF = ("연락처", "연락번호")


@dataclass(frozen=True)
class Handoff:
    sentence: str
    kind: str  # PROMISE, PERSON_VERB or INSTRUCTION
    phrases: tuple[str, ...]


@cache
def _automaton() -> ahocorasick.Automaton:
    automaton = ahocorasick.Automaton()
    for kind, phrases in HANDOFF_TABLE.items():
        for phrase in phrases:
            kinds = automaton.get(phrase, ())
            automaton.add_word(phrase, (*kinds, (kind, phrase)))
    automaton.make_automaton()
    return automaton


def _folded(text: str) -> str:
    folded = "".join(text.split()).lower()
    for phrase in _NOT_HANDOFF:
        folded = folded.replace(phrase, "#" * len(phrase))
    return folded


def _hits(text: str) -> dict[str, list[str]]:
    hits: dict[str, list[str]] = {}
    for _, entries in _automaton().iter(_folded(text)):
        for kind, phrase in entries:
            hits.setdefault(kind, []).append(phrase)
    return hits


def handoff_in(sentence: str, *, evidence_persons: frozenset[str] = frozenset()) -> Handoff | None:
    """The handoff in one sentence, or None. `evidence_persons`: person words the evidence itself names."""
    hits = _hits(sentence)
    if hits.get(PROMISE):
        return Handoff(sentence, PROMISE, tuple(hits[PROMISE]))
    persons = hits.get(PERSON)
    if not persons:
        return None
    if hits.get(PERSON_VERB):
        return Handoff(sentence, PERSON_VERB, tuple(persons + hits[PERSON_VERB]))
    if hits.get(INSTRUCTION) and not set(persons) <= evidence_persons:
        return Handoff(sentence, INSTRUCTION, tuple(persons + hits[INSTRUCTION]))
    return None


def evidence_persons(evidence: list[str]) -> frozenset[str]:
    """The person words the evidence names (a documented procedure may send the vendor to them)."""
    return frozenset(phrase for text in evidence for phrase in _hits(text).get(PERSON, ()))


def remove_handoffs(text: str, *, evidence: list[str] = ()) -> tuple[str, list[str]]:
    """Drop the sentences that hand the vendor to a person; return the rest and what was removed."""
    persons = evidence_persons(list(evidence))
    sentences = split_sentences(text)
    handing_off = [
        index
        for index, sentence in enumerate(sentences)
        if handoff_in(sentence.text, evidence_persons=persons) is not None
    ]
    if not handing_off:
        return text.strip(), []
    return text_without(text, sentences, handing_off), [sentences[index].text.strip() for index in handing_off]
