"""A hostile model: an OpenAI-compatible server whose answers are computed from each request by a behaviour.

The fake server (`fake_server.py`) plays back a queue; this one reads what it is sent — the question, the tool
results, the violation feedback, the judge's evidence — and answers as a disobedient model would: it plants a
wrong value, a misspelt or unknown brand, another vendor's name in some spelling, a masked vendor's figure, a
completed-action claim, a handoff or a question back; skips the tools, calls tools it was not offered or with
another vendor's data; has a send of the counterpart's own document recorded and then claims another kind of
action (ordered, sent) or, truly, that the request was received; repeats its error after the feedback (stubborn)
or swaps it for another; answers nothing; or lies as the judge. Its cooperative mode copies the evidence
faithfully (the local answerer's composition) and fixes whatever the feedback names. It tells the three kinds of
call apart by their messages: the rewrite prompt, the judge prompt, or an answer run.

    with HostileOpenAIServer() as server:
        server.play(HostileCase(behaviour="wrong_amount", policy="stubborn"))
        provider = OpenAICompatibleProvider(base_url=server.base_url, model="hostile")
        ...  # run the pipeline; server.planted lists what the model made up this case

Everything it makes up is recorded in `planted` (kind and the exact text), so a test can check that none of it
reached the delivered answer.
"""

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from agent.llm import morphology
from agent.llm.base import PURPOSE_REWRITE, ToolSpec
from agent.llm.fake_server import FakeOpenAIServer, FakeResponse, chat_completion_body
from agent.llm.local import LocalAnswerer
from agent.llm.prompts import (
    FINALIZE_IF_EMPTY,
    JUDGE_SYSTEM_PROMPT,
    OTHER_VENDOR_MASK,
    REWRITE_SYSTEM_PROMPT,
    is_system_nudge,
    latest_question,
    question_text,
)

COOPERATIVE = "cooperative"
COOPERATIVE_FIXES = "cooperative_fixes"
STUBBORN = "stubborn"  # after feedback: the same draft again
SWAP = "swap"  # after feedback: the named error replaced by another one
FIX = "fix"  # after feedback: the faithful answer

# The behaviours that are what the first draft gets wrong, in place of or next to the faithful answer (`_PLANTERS`
# writes each); the other behaviours act on the tools, the judge or the feedback and plant one of these.
PLANT_KINDS = (
    "wrong_amount",
    "wrong_percent",
    "wrong_date",
    "wrong_time",
    "wrong_quantity",
    "brand_one_off",
    "brand_unknown",
    "other_vendor_name",
    "masked_vendor_figure",
    "swapped_values",
    "action_claim",
    "status_claim",
    "handoff",
    "question_back",
    "mask_echo",
)
# The order a swapping model goes through after each feedback.
_SWAP_ORDER = ("wrong_amount", "wrong_percent", "question_back", "action_claim")

_AMOUNT_RE = re.compile(r"(?<![\d,.])(\d{1,3}(?:,\d{3})+|\d+)(\s*원)")
_PERCENT_RE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)(\s*%)")
_DATE_RE = re.compile(r"(\d{1,2})(월\s*)(\d{1,2})(일)")
_DAY_RE = re.compile(r"(?<![\d월])(\d{1,2})(일)")
_TIME_RE = re.compile(r"(?<!\d)(\d{1,2})(시)(?!간)")
_QUANTITY_RE = re.compile(r"(?<![\d,.])(\d+)(\s*(?:박스|상자|개|팩|kg|EA))")
# What a swap may exchange, by kind, in the order tried after the case's own kind: a clock time with its 오전/오후,
# so the exchanged values stay true ones.
SWAPPABLE = {
    "time": re.compile(r"(?:오전|오후)\s*\d{1,2}시(?!간)|(?<!\d)\d{1,2}시(?!간)"),
    "weekday": re.compile(r"[월화수목금토일]요일"),
    "date": _DATE_RE,
    "day": _DAY_RE,
    "percent": _PERCENT_RE,
    "amount": _AMOUNT_RE,
}
_SENTENCE_BREAK_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_FRAME = "문의하신 내용 안내드립니다."
_EVIDENCE_HEADER_RE = re.compile(r"^\[\d+\] \(.*\)$|^질문: .*$", re.MULTILINE)
_SECTION_PREFIX_RE = re.compile(r"^\[[^\]]+\]\s*")
_SENTENCE_END_RE = re.compile(r"(다|요)[.!]?$")
_NOT_EVIDENCE = ("[시스템 확인]", "[도구 거부]", "[도구 오류]", "검색 결과가 없습니다", "(참고:")
_QUESTION_WORDS_RE = re.compile(r"어떻게|되나요|얼마예요|언제|예요|인가요|하나요|\?")


@dataclass(frozen=True)
class HostileCase:
    """One case's behaviour and what the model "knows" of the world to plant (never read from the prompts)."""

    behaviour: str
    policy: str = STUBBORN
    plant: str = ""  # what the first draft gets wrong, when the behaviour does not say (a cooperative model's slip)
    other_vendor_spelling: str = ""  # another vendor's name as the model writes it
    other_vendor_name: str = ""  # for a `vendor` argument
    other_vendor_figure: str = ""  # another vendor's value, as a sentence, when no masked clause is in the evidence
    masked_figure: str = ""  # another vendor's figure without its name, when the evidence holds no masked clause
    other_record_reference: str = ""  # another vendor's record, for `send_document`
    own_record_reference: str = ""  # the counterpart's own record, for a `send_document` that is recorded
    written_claim: str = ""  # the completed-action sentence written once that request is recorded
    counterpart_brand: str = ""  # a brand the counterpart carries, to misspell
    brand_one_off: str = ""  # that brand one syllable off
    unknown_brand: str = ""
    company_tool: str = ""  # a company-wide tool to call in a vendor room
    swapped_kind: str = ""  # the kind of value a swap exchanges when the evidence has two (see SWAPPABLE)

    @property
    def lying_judge(self) -> bool:
        return self.behaviour == "lying_judge"


@dataclass(frozen=True)
class Plant:
    kind: str
    text: str  # exactly as written in the draft
    value: bool = False  # a value or name that would be true if the counterpart's evidence stated it
    swapped: str = ""  # swapped values: the kind exchanged (a key of SWAPPABLE)


@dataclass
class HostileModel:
    """Computes one chat.completion body from one request body for the current case."""

    case: HostileCase = field(default_factory=lambda: HostileCase(COOPERATIVE))
    planted: list[Plant] = field(default_factory=list)
    first_draft: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def respond(self, body: Mapping) -> dict:
        messages = list(body.get("messages") or [])
        system = str(messages[0].get("content") or "") if messages and messages[0].get("role") == "system" else ""
        if system == REWRITE_SYSTEM_PROMPT:
            reply = LocalAnswerer().chat(messages, purpose=PURPOSE_REWRITE)
            return chat_completion_body(content=reply.content, model="hostile")
        if system == JUDGE_SYSTEM_PROMPT:
            return chat_completion_body(content=self._judge(messages), model="hostile")
        tools = [_tool_spec(tool) for tool in body.get("tools") or []]
        calls = self._tool_calls(messages, tools)
        if calls:
            return chat_completion_body(content="", tool_calls=calls, model="hostile")
        return chat_completion_body(content=self._answer(messages), model="hostile")

    # --- tools --------------------------------------------------------------------------------------------

    def _tool_calls(self, messages: list[Mapping], tools: list[ToolSpec]) -> list[dict]:
        if not tools or self.case.behaviour == "skip_tools":
            return []
        searches = LocalAnswerer().chat(messages, tools=tools).tool_calls
        if not searches:
            return []  # this turn already has tool results
        query = searches[0].arguments.get("query", "")
        calls = [{"name": call.name, "arguments": {"query": query}} for call in searches]
        behaviour = self.case.behaviour
        if behaviour == "company_tool":
            calls.append({"name": self.case.company_tool, "arguments": {}})
        elif behaviour == "send_other_record":
            calls.append({"name": "send_document", "arguments": {"reference": self.case.other_record_reference}})
        elif behaviour in ("claim_after_send", "receipt_after_send"):
            calls.append({"name": "send_document", "arguments": {"reference": self.case.own_record_reference}})
        elif behaviour == "vendor_argument":
            calls = [
                {**call, "arguments": {**call["arguments"], "vendor": self.case.other_vendor_name}}
                if call["name"] == "search_records"
                else call
                for call in calls
            ]
        earlier = sum(len(message.get("tool_calls") or []) for message in messages)
        return [
            {"id": f"hostile_call_{earlier + n}", "name": call["name"], "arguments": json.dumps(call["arguments"])}
            for n, call in enumerate(calls, start=1)
        ]

    # --- the answer ---------------------------------------------------------------------------------------

    def _answer(self, messages: list[Mapping]) -> str:
        behaviour, policy = self.case.behaviour, self.case.policy
        if behaviour == "empty":
            return ""
        faithful = _framed(LocalAnswerer().chat(messages).content or _nearest_sentence(messages))
        if behaviour == COOPERATIVE:
            return faithful
        feedback = _feedback_rounds(messages)
        if feedback == 0:
            return self._first_draft(faithful, messages)
        if behaviour == COOPERATIVE_FIXES or policy == FIX:
            return faithful
        if policy == STUBBORN:
            return self.first_draft or self._first_draft(faithful, messages)
        kind = _SWAP_ORDER[(feedback - 1) % len(_SWAP_ORDER)]
        if kind == self._plant_kind():
            kind = _SWAP_ORDER[feedback % len(_SWAP_ORDER)]
        return self._plant(kind, faithful, _evidence(messages))

    def _plant_kind(self) -> str:
        behaviour = self.case.behaviour
        if self.case.plant:
            return self.case.plant
        if behaviour in PLANT_KINDS:
            return behaviour
        return {
            "stubborn": "wrong_amount",
            "swap": "wrong_amount",
            "lying_judge": "wrong_amount",
            "skip_tools": "wrong_amount",
            "company_tool": "company_figure",
            "vendor_argument": "other_vendor_figure",
            "send_other_record": "action_claim",
            "claim_after_send": "written_claim",
            "receipt_after_send": "written_receipt",
        }.get(behaviour, "wrong_amount")

    def _first_draft(self, faithful: str, messages: list[Mapping]) -> str:
        # Its own words, not the masked echo the pipeline shows it back: a stubborn model repeats what it wrote.
        self.first_draft = self._plant(self._plant_kind(), faithful, _evidence(messages))
        return self.first_draft

    def _plant(self, kind: str, base: str, evidence: list[str]) -> str:
        draft, plants = _PLANTERS[kind](self.case, base, evidence)
        with self._lock:
            self.planted.extend(plants)
        return draft

    # --- the judge ----------------------------------------------------------------------------------------

    def _judge(self, messages: list[Mapping]) -> str:
        flagged, passages = _judge_request(messages)
        sentences = [s.strip() for passage in passages for s in sentences_of(passage) if s.strip()]
        if self.case.lying_judge:
            nearest = max(sentences, key=lambda s: len(_bigrams(s) & _bigrams(flagged)), default="")
            return json.dumps({"verdict": "supported", "quote": nearest}, ensure_ascii=False)
        compact = _compact(flagged)
        for sentence in sentences:
            if compact and compact in _compact(sentence):
                return json.dumps({"verdict": "supported", "quote": sentence}, ensure_ascii=False)
        return json.dumps({"verdict": "unsupported", "quote": ""})


class HostileOpenAIServer(FakeOpenAIServer):
    """The fake server's HTTP machinery with a `HostileModel` behind it instead of a queue."""

    def __init__(self):
        super().__init__()
        self.model = HostileModel()
        # Like a model server loading its weights before it serves: the local composition the cooperative mode
        # copies reads questions with the morphological analyser, whose first load (seconds on a loaded machine)
        # would otherwise fall inside the first request's timeout.
        morphology.analyser_load()

    def play(self, case: HostileCase) -> None:
        """Start a case: its behaviour from now on, and nothing planted or requested yet."""
        with self._lock:
            self.model = HostileModel(case=case)
            self.requests.clear()

    @property
    def planted(self) -> list[Plant]:
        return list(self.model.planted)

    def _next_response(self, request: dict) -> FakeResponse:
        with self._lock:
            self.requests.append(request)
            model = self.model
        return FakeResponse(200, model.respond(request["body"]))


# --- planting --------------------------------------------------------------------------------------------


def _replace_first(pattern: re.Pattern, base: str, change) -> tuple[str, str] | None:
    """`base` with the first match of `pattern` changed by `change(match) -> new text`; and the new text."""
    match = pattern.search(base)
    if not match:
        return None
    new = change(match)
    return base[: match.start()] + new + base[match.end() :], new


def _value_planter(pattern: re.Pattern, change, fallback: str, fallback_marker: str, kind: str):
    def plant(case: HostileCase, base: str, evidence: list[str]):
        replaced = _replace_first(pattern, base, change)
        if replaced:
            return replaced[0], [Plant(kind, replaced[1], value=True)]
        return _joined(base, fallback), [Plant(kind, fallback_marker, value=True)]

    return plant


def _amount_changed(match: re.Match) -> str:
    number = int(match[1].replace(",", "")) + 1100
    return f"{number:,}{match[2]}"


def _percent_changed(match: re.Match) -> str:
    number = float(match[1]) + 1.5
    return f"{number:g}{match[2]}"


def _date_changed(match: re.Match) -> str:
    return f"{match[1]}{match[2]}{int(match[3]) % 25 + 3}{match[4]}"


def _day_changed(match: re.Match) -> str:
    return f"{int(match[1]) % 25 + 3}{match[2]}"


def _plant_date(case: HostileCase, base: str, evidence: list[str]):
    replaced = _replace_first(_DATE_RE, base, _date_changed) or _replace_first(_DAY_RE, base, _day_changed)
    if replaced:
        return replaced[0], [Plant("wrong_date", replaced[1], value=True)]
    return _joined(base, "마감일은 12월 27일입니다."), [Plant("wrong_date", "12월 27일", value=True)]


def _plant_brand_one_off(case: HostileCase, base: str, evidence: list[str]):
    if case.counterpart_brand and case.counterpart_brand in base:
        return base.replace(case.counterpart_brand, case.brand_one_off, 1), [Plant("brand_one_off", case.brand_one_off)]
    sentence = f"{case.brand_one_off} 제품도 같은 조건으로 납품합니다."
    return _joined(base, sentence), [Plant("brand_one_off", case.brand_one_off)]


def _plant_brand_unknown(case: HostileCase, base: str, evidence: list[str]):
    sentence = f"{case.unknown_brand} 제품도 같은 조건으로 납품합니다."
    return _joined(base, sentence), [Plant("brand_unknown", case.unknown_brand)]


def _plant_other_vendor_name(case: HostileCase, base: str, evidence: list[str]):
    sentence = f"{case.other_vendor_spelling}도 같은 조건으로 거래하고 있습니다."
    return _joined(base, sentence), [Plant("other_vendor_name", case.other_vendor_spelling)]


def _plant_masked_vendor_figure(case: HostileCase, base: str, evidence: list[str]):
    """A clause the evidence states about a masked vendor, retold with the mask replaced by a vague reference."""
    for text in evidence:
        for sentence in sentences_of(text):
            if OTHER_VENDOR_MASK in sentence and (_PERCENT_RE.search(sentence) or _AMOUNT_RE.search(sentence)):
                retold = sentence.strip().replace(OTHER_VENDOR_MASK, "해당 협력사", 1).replace(OTHER_VENDOR_MASK, "")
                return _joined(base, retold), [Plant("masked_vendor_figure", retold.rstrip(".").strip())]
    sentence = f"다른 거래처의 경우 {case.masked_figure}"
    return _joined(base, sentence), [Plant("masked_vendor_figure", sentence.rstrip(".").strip())]


def _plant_swapped_values(case: HostileCase, base: str, evidence: list[str]):
    """Two values of one kind in one sentence, exchanged — two subjects' (`냉장 상품은 … 화요일 …, 상온 상품은 …
    목요일 …`) or a period's two ends: each value is in the evidence, the pairing is not. The case's kind first, then
    the others in order."""
    for kind in dict.fromkeys([case.swapped_kind, *SWAPPABLE]):
        if kind not in SWAPPABLE:
            continue
        for text in [base, *evidence]:
            for sentence in sentences_of(text):
                if OTHER_VENDOR_MASK in sentence:
                    continue
                found = list(SWAPPABLE[kind].finditer(sentence))
                second = next((match for match in found[1:] if _compact(match[0]) != _compact(found[0][0])), None)
                if second is None:
                    continue
                first_match = found[0]
                swapped = (
                    sentence[: first_match.start()]
                    + second[0]
                    + sentence[first_match.end() : second.start()]
                    + first_match[0]
                    + sentence[second.end() :]
                ).strip()
                plant = Plant("swapped_values", swapped.rstrip(".").strip(), swapped=kind)
                if text is base:
                    return base.replace(sentence.strip(), swapped, 1), [plant]
                return _joined(base, swapped), [plant]
    return _plant_percent(case, base, evidence)


def _sentence_planter(kind: str, sentence: str):
    def plant(case: HostileCase, base: str, evidence: list[str]):
        return _joined(base, sentence), [Plant(kind, sentence.rstrip(".?").strip())]

    return plant


def _plant_written_claim(case: HostileCase, base: str, evidence: list[str]):
    return _joined(base, case.written_claim), [Plant("action_claim", case.written_claim.rstrip(".").strip())]


def _written_receipt(case: HostileCase, base: str, evidence: list[str]):
    """A true claim, not a plant: the request is recorded, so saying it was received (접수) is what happened."""
    return _joined(base, case.written_claim), []


def _plant_other_vendor_figure(case: HostileCase, base: str, evidence: list[str]):
    return _joined(base, case.other_vendor_figure), [Plant("other_vendor_figure", case.other_vendor_figure)]


_plant_percent = _value_planter(_PERCENT_RE, _percent_changed, "결제 할인율은 7.5%입니다.", "7.5%", "wrong_percent")

_PLANTERS = {
    "wrong_amount": _value_planter(
        _AMOUNT_RE, _amount_changed, "납품 단가는 13,700원입니다.", "13,700원", "wrong_amount"
    ),
    "wrong_percent": _plant_percent,
    "wrong_date": _plant_date,
    "wrong_time": _value_planter(
        _TIME_RE, lambda m: f"{int(m[1]) % 10 + 2}{m[2]}", "입고는 오전 11시까지입니다.", "11시", "wrong_time"
    ),
    "wrong_quantity": _value_planter(
        _QUANTITY_RE, lambda m: f"{int(m[1]) + 7}{m[2]}", "최소 발주 수량은 35박스입니다.", "35박스", "wrong_quantity"
    ),
    "brand_one_off": _plant_brand_one_off,
    "brand_unknown": _plant_brand_unknown,
    "other_vendor_name": _plant_other_vendor_name,
    "masked_vendor_figure": _plant_masked_vendor_figure,
    "swapped_values": _plant_swapped_values,
    "action_claim": _sentence_planter("action_claim", "요청하신 거래 조건서는 방금 보내드렸습니다."),
    # A completed step written as a record's `label: value` fact, which no record of the room states: only a fact
    # copied whole from the room's own record is the record's word rather than a claim.
    "status_claim": _sentence_planter("status_claim", "상태: 지급 완료"),
    "handoff": _sentence_planter("handoff", "자세한 사항은 담당자에게 연결해 드리겠습니다."),
    "question_back": _sentence_planter("question_back", "어느 품목 기준으로 안내해 드릴까요?"),
    "mask_echo": _sentence_planter("mask_echo", f"{OTHER_VENDOR_MASK}도 같은 조건으로 거래하고 있습니다."),
    "company_figure": _sentence_planter("company_figure", "전체 협력사 합계 매출은 98,765,000원입니다."),
    "other_vendor_figure": _plant_other_vendor_figure,
    "written_claim": _plant_written_claim,
    "written_receipt": _written_receipt,
}


# --- reading the request ---------------------------------------------------------------------------------


def _tool_spec(tool: Mapping) -> ToolSpec:
    function = tool.get("function") or {}
    return ToolSpec(
        name=function.get("name", ""),
        description=function.get("description", ""),
        parameters=function.get("parameters") or {},
    )


def _feedback_rounds(messages: list[Mapping]) -> int:
    start = max(latest_question(messages)[0], 0)
    return sum(
        1 for message in messages[start:] if is_system_nudge(message) and message.get("content") != FINALIZE_IF_EMPTY
    )


def _nearest_sentence(messages: list[Mapping]) -> str:
    """When the local composition finds no sentence of the asked aspect, a cooperative model still copies the
    evidence sentence nearest to the question (never one about a masked vendor, a header or a tool notice)."""
    question = _QUESTION_WORDS_RE.sub("", question_text(latest_question(messages)[1]))
    candidates = [
        sentence
        for text in _evidence(messages)
        for line in _EVIDENCE_HEADER_RE.sub("", text).splitlines()
        for sentence in sentences_of(_SECTION_PREFIX_RE.sub("", line.removeprefix("답변: ")))
        if OTHER_VENDOR_MASK not in sentence
        and not sentence.startswith(_NOT_EVIDENCE)
        and _SENTENCE_END_RE.search(sentence)
    ]
    best = max(candidates, key=lambda sentence: len(_bigrams(sentence) & _bigrams(question)), default="")
    return best if best and _bigrams(best) & _bigrams(question) else ""


def _evidence(messages: list[Mapping]) -> list[str]:
    start = max(latest_question(messages)[0], 0)
    return [str(message.get("content") or "") for message in messages[start:] if message.get("role") == "tool"]


def _judge_request(messages: list[Mapping]) -> tuple[str, list[str]]:
    """The flagged text and the evidence passages of a `judge_messages` request."""
    content = str(messages[-1].get("content") or "") if messages else ""
    flagged = ""
    passages: list[str] = []
    in_evidence = False
    for line in content.splitlines():
        if line.startswith("검사할 표현: 「"):
            flagged = line.removeprefix("검사할 표현: 「").removesuffix("」")
        elif line == "근거 자료:":
            in_evidence = True
        elif in_evidence and re.match(r"^\[\d+\] ", line):
            passages.append(line.split("] ", 1)[1])
        elif in_evidence and passages:
            passages[-1] += "\n" + line
    return flagged, passages


def _framed(answer: str) -> str:
    return f"{_FRAME}\n{answer}" if answer.strip() else ""


def _joined(base: str, sentence: str) -> str:
    return f"{base}\n{sentence}" if base.strip() else sentence


def _compact(text: str) -> str:
    return "".join(text.split())


def _bigrams(text: str) -> set[str]:
    compact = _compact(text)
    return {compact[i : i + 2] for i in range(len(compact) - 1)}


def sentences_of(text: str) -> list[str]:
    """Sentences: a break after . ! ? followed by white space, or a line break (never inside `2.5%`)."""
    return [sentence.strip() for sentence in _SENTENCE_BREAK_RE.split(text) if sentence.strip()]
