"""The embedded default provider: a deterministic answerer that can only repeat the evidence.

In the tool loop it first asks for every offered ``search_*`` tool with the question; once tool results are in,
it answers with the evidence sentence that holds the asked aspect's value for the asked subject (`focus`), and
at most one more from the same passage, copied word for word, the fact first, with no frame around it. No
sentence answers → "" (the pipeline then gives the guidance answer). It never writes a word of its own, so it
cannot invent a value.
"""

import functools
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

from django.conf import settings

from agent.knowledge.passages import heading_only
from agent.knowledge.periods import month_figure_asked, months_named, period_phrase
from agent.knowledge.synonyms import spoken_forms_written, subject_variants
from agent.llm import korean_text, morphology
from agent.llm.base import PURPOSE_JUDGE, PURPOSE_REWRITE, LlmReply, ToolCallRequest, ToolSpec
from agent.llm.focus import (
    ACCEPTED_VALUES,
    AMOUNT,
    BOUND_WORDS,
    CONTACT,
    PARTY,
    PLACE,
    PRICE_WORDS,
    PROCEDURE,
    QUANTITY,
    RATE,
    QuestionFocus,
    asked_aspect,
    asked_counters,
    condition_nouns,
    holds_value,
    joined_value_aspects,
    question_focus,
    with_aspect_of,
)
from agent.llm.prompts import (
    FINALIZE_IF_EMPTY,
    NO_REWRITE,
    OTHER_PRODUCT_MASK,
    OTHER_VENDOR_MASK,
    SYSTEM_CONFIRMATION_TAG,
    flagged_texts_in,
    is_system_nudge,
    latest_question,
    question_text,
    rewrite_request_parse,
    search_query_in,
)
from agent.verification.other_vendors import about_masked_clauses
from agent.verification.sentences import split_sentences
from vendors.records import VALUE_SEPARATOR

MODEL_NAME = "local-extractive"
SEARCH_TOOL_PREFIX = "search_"
JUDGE_REPLY = json.dumps({"verdict": "unsupported", "quote": ""})

# "라벨: 값" lines in tool results: metadata lines are skipped, answer lines keep their value.
_LABEL_RE = re.compile(r"^\s*(?P<label>[가-힣A-Za-z][가-힣A-Za-z ]{0,9}?)\s*[:：]\s*(?P<value>.*)$")
_METADATA_LABELS = korean_text.word_set(
    "질문 q 출처 제목 분류 카테고리 링크 url 문서 근거 참고 참조 작성일 수정일 등록일 점수 유사도 score",
    "source 워크스페이스 workspace 유형 id 태그",
)
_ANSWER_LABELS = korean_text.word_set("답변 답 a 내용 설명 본문 요약 안내")
_URL_RE = re.compile(r"^(?:https?://|www\.)\S+$")
# What the tools add around evidence (agent/tools): no results, refusals, errors, masking notes.
_BOILERPLATE_PREFIXES = (SYSTEM_CONFIRMATION_TAG, "[도구 거부]", "[도구 오류]", "검색 결과가 없습니다")
_PARENTHESISED_RE = re.compile(r"^\(.*\)$")
_PASSAGE_BREAK_RE = re.compile(r"\n[ \t]*\n")
_SENTENCE_END_RE = re.compile(r"(다|요|죠|니다|음|함|임)[.!…]?$|[.!…]$")
_MIN_SENTENCE_CHARS = 4
# Keys of JSON tool results that hold metadata rather than evidence text.
_JSON_METADATA_KEYS = korean_text.word_set(
    "reference url source source_kind workspace score mask_count id kind title status tool error"
)


class LocalAnswerer:
    name = "local"

    def chat(self, messages: list[dict], *, tools: list[ToolSpec] | None = None, purpose: str = "answer") -> LlmReply:
        started = time.monotonic()
        tool_calls: list[ToolCallRequest] = []
        if purpose == PURPOSE_REWRITE:
            content = _rewrite(messages)
        elif purpose == PURPOSE_JUDGE:
            # It cannot rule on what code could not decide; failure counts as no evidence, so never "supported".
            content = JUDGE_REPLY
        else:
            tool_calls = _search_calls(messages, tools or [])
            content = "" if tool_calls else compose_answer(messages)
        return LlmReply(
            content=content,
            tool_calls=tool_calls,
            latency_ms=round((time.monotonic() - started) * 1000),
            model=MODEL_NAME,
            provider=self.name,
        )


# --- the tool loop ---


def _turn_start(messages: list[Mapping]) -> int:
    """Index of the message that opened this turn: the latest question or violation feedback (a finalize
    request continues the turn: it asks for the answer, not for another search)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user" and message.get("content") != FINALIZE_IF_EMPTY:
            return index
    return 0


def question_of(messages: list[Mapping]) -> str:
    """What to search for and answer: the rewritten follow-up query when the question message carries one,
    else the latest question from the room."""
    return search_query_in(messages) or question_text(latest_question(messages)[1])


def _search_calls(messages: list[Mapping], tools: list[ToolSpec]) -> list[ToolCallRequest]:
    start = _turn_start(messages)
    if any(message.get("role") == "tool" for message in messages[start:]):
        return []
    query = question_of(messages)
    if not query:
        return []
    earlier_calls = sum(len(message.get("tool_calls") or []) for message in messages)
    return [
        ToolCallRequest.from_raw(
            id=f"local_call_{earlier_calls + index + 1}", name=tool.name, raw_arguments={"query": query}
        )
        for index, tool in enumerate(tool for tool in tools if tool.name.startswith(SEARCH_TOOL_PREFIX))
    ]


# --- composing the answer ---


def compose_answer(messages: list[Mapping]) -> str:
    """The evidence sentence(s) that answer the question — the asked aspect's value for the asked subject — copied
    word for word, the best first; "" when no sentence does (the pipeline then gives the guidance answer)."""
    start = max(latest_question(messages)[0], 0)
    results = [str(message.get("content") or "") for message in messages[start:] if message.get("role") == "tool"]
    index, content = latest_question(messages)
    asked = question_text(content)
    query = question_of(messages)
    earlier = next(
        (
            str(message.get("content") or "")
            for message in reversed(messages[: max(index, 0)])
            if message.get("role") == "user" and not is_system_nudge(message)
        ),
        "",
    )
    return "\n".join(
        answer_sentences(
            query,
            results,
            excluded=flagged_texts_in(messages[start:]),
            counterpart_names=_counterpart_names(messages),
            follow_up=asked if asked and asked != query else "",
            earlier=earlier,
        )
    )


_COUNTERPART_LINE_RE = re.compile(r"이 방의 거래처:\s*(?P<name>[^\n]+)")


def _counterpart_names(messages: list[Mapping]) -> tuple[str, ...]:
    """The room's vendor as the system prompt names it (answer_system_prompt)."""
    for message in messages:
        if message.get("role") == "system":
            match = _COUNTERPART_LINE_RE.search(str(message.get("content") or ""))
            if match:
                return (match["name"].strip(),)
    return ()


@dataclass(frozen=True)
class Statement:
    """One evidence sentence or fact as the answerer reads it."""

    text: str  # what would be copied into the answer
    context: str  # where it stands: the FAQ question, the section path, the record's heading, a fact's label
    source: str  # "record" | "faq" | "hub" | "" (a tool result of another shape)
    item: int  # which evidence item it belongs to
    position: int
    is_fact: bool = False  # a "label: value" pair of a record rather than a sentence


def answer_sentences(
    question: str,
    tool_results: list[str],
    *,
    excluded: set[str] = frozenset(),
    counterpart_names: tuple[str, ...] = (),
    follow_up: str = "",
    earlier: str = "",
) -> list[str]:
    """The statements that answer `question` (`_answer_one`); for a message that asks a second question in a
    sentence of its own ("납기 언제에요? 지금 상태는요?"), the answer to that one joins the first answer."""
    answer = functools.partial(_answer_one, evidence=(tool_results, excluded, counterpart_names))
    answers = answer(question, follow_up=follow_up, earlier=earlier)
    asks = [] if follow_up else _separate_asks(question, counterpart_names)
    if not asks:
        return answers
    first, second = asks
    # The second ask read as a follow-up of the first: "지금 상태는요?" is the status of the order asked about.
    rewritten = rewrite_follow_up(second, [first])
    second_answers = (
        answer(rewritten, follow_up=second, earlier=first) if rewritten else answer(second, follow_up="", earlier="")
    )
    if answers and not second_answers:
        # "… 할인 얼마나 들어가요? 몇 박스 넘어야 되는지도요": the second ask names no subject of its own, so the whole
        # message's answer may be the second one's; the first question's own answer leads when it is another.
        first_answers = answer(first, follow_up="", earlier="")
        if first_answers and not _restates(first_answers[0], answers) and not _restates(answers[0], first_answers):
            return [first_answers[0], answers[0]][: settings.LOCAL_ANSWER_MAX_SENTENCES]
        return answers
    if not answers or (second_answers and _restates(second_answers[0], answers)):
        # The whole message names what only one of its questions is about ("주말엔 안되나요" beside the hours), or
        # its answer is the second question's: the first question's answer, on its own, unless the whole one
        # already holds it.
        first_answers = answer(first, follow_up="", earlier="")
        if first_answers and first_answers[0] not in answers:
            answers = first_answers
    if not answers or not second_answers or _restates(second_answers[0], answers):
        return answers
    return [answers[0], second_answers[0]][: settings.LOCAL_ANSWER_MAX_SENTENCES]


def _restates(sentence: str, answers: list[str]) -> bool:
    """`sentence` is one of `answers`, or states no number with its unit that they do not (`최소 주문: 20박스` beside
    `20박스 이상 주문 시 적용`)."""
    numbers = set(_counted_numbers(sentence))
    return sentence in answers or any(numbers and numbers <= set(_counted_numbers(answer)) for answer in answers)


def _answer_one(
    question: str, *, evidence: tuple[list[str], set[str], tuple[str, ...]], follow_up: str, earlier: str
) -> list[str]:
    """At most LOCAL_ANSWER_MAX_SENTENCES statements that answer `question` from `evidence` (the tool results, the
    flagged texts, the room's vendor's names): each names the question's subject
    (in itself or in its context) and, when the question asks for a value, holds a value of that kind. The best
    comes first; a second one only when it stands next to it in the same evidence item. Statements holding a
    flagged text are left out. `follow_up`: the vendor's own words when `question` is their rewritten follow-up —
    what they add ("그럼 점포 재고는요?") must be named, the topic carried over from `earlier` (the question
    before) only ranks, and without an aspect of its own it asks what the earlier question asked."""
    tool_results, excluded, counterpart_names = evidence
    focus = question_focus(question, counterpart_names=counterpart_names)
    if follow_up:
        own_words = question_focus(follow_up, counterpart_names=counterpart_names)
        # "반 페이지면요?" (if it is half a page) asks the earlier question of another item, as "된장 3kg짜리도요?"
        # does; "기한 넘기면요?" asks what follows a condition of its own.
        asks_the_same = not own_words.aspect_cued or (
            own_words.aspect is None
            and (_asks_again_for(follow_up) or _IS_ITEM_RE.search(spoken_forms_written(follow_up)) is not None)
        )
        if earlier and asks_the_same and not _asks_state(own_words):
            focus = with_aspect_of(replace(focus, aspect=None, aspect_cued=False), question_focus(earlier))
    if not focus.words:
        return []
    statements = [
        statement
        for statement in evidence_statements(tool_results, counterpart_names=counterpart_names)
        if not any(text and text in statement.text for text in excluded)
    ]
    statements = _with_brand_wide_subjects(statements, focus)
    focus = _compounds_split(focus, statements)
    own = question_focus(follow_up, counterpart_names=counterpart_names) if follow_up else None
    required = _required_words(focus, statements, own)
    # A statement naming what the question after the scene asks answers without the scene's words too.
    required_after_scene = tuple(word for word in required if word not in focus.scene)
    # A size or model the question names that the evidence does not (`전단 1면`, `T300`) is not answered by a
    # statement of another size of its kind (`1/4면 기준 30만 원`) or another model of its series (`T200`).
    # In a follow-up naming an item of its own ("된장 3kg짜리도요" after "쌈장 2kg 납품가"), the size asked is its own.
    other_items = _other_item_patterns(own if own and own.subject else focus, statements)
    if other_items:
        statements = [s for s in statements if not any(p.search(_compact(s.text)) for p in other_items)]
    asked_months = months_named(question)
    if asked_months:
        # A statement about another month ("9월 정산 대금은 …" beside "11월치 정산금", an 11~12월 promotion beside
        # "설 행사") answers for another period.
        statements = [s for s in statements if not _about_other_months(s, asked_months)]
        if month_figure_asked(question):
            # "9월 정산 금액", "8월분 매입": one month's figure is stated only about that month (in the statement or its
            # record's title); a rule naming no month ("입고 금액의 2.5%가 정산에서 차감") is no month's figure.
            statements = [s for s in statements if _months_of(s)]
    # A number a follow-up adds (`그럼 1/2면 광고비는요?`) is what it asks about: when the evidence names it, a
    # statement about the topic without it answers the question before. So is a size or a share any question names
    # (`전단 1/2면 광고비`, `멸치 1.5kg`): a statement naming another (1/4면) is about another item.
    sizes = tuple(_size_of(word) for word in focus.words if _MEASURE_QUALIFIER_RE.fullmatch(word))
    added_numbers = tuple(
        word
        for word in (*(own.words if own else ()), *sizes)
        if any(ch.isdigit() for ch in word)
        and any(form in _compact(f"{s.text} {s.context}") for s in statements for form in _qualifier_forms(word))
    )
    # Bigrams of the words and across them ("확정 후" is closer to "확정 후에는" than to "확정 전이라면").
    joined = "".join(focus.phrase).lower()
    question_bigrams = korean_text.char_bigrams(list(focus.words)) | {
        joined[index : index + 2] for index in range(len(joined) - 1)
    }
    # The whole text of each record and each FAQ entry: a record is about one thing, an FAQ answer about its question.
    record_texts: dict[int, list[str]] = {}
    for statement in statements:
        if statement.source in ("record", "faq"):
            record_texts.setdefault(statement.item, []).append(statement.text)
    record_items = {item: _compact(" ".join(texts)) for item, texts in record_texts.items()}
    # A hub passage's section is about one thing too: "택배 파손은 협력사가 부담합니다" answers for the 박스 sent to
    # the 센터 that the sentence before it, under the same section path, names. A sentence stating a value of the
    # kind asked lends none of its words: "평택 … 9월 25일부터 휴무" is its own answer, not the 이천 line's. Nor do
    # the items of a list lend to each other: "김해 물류센터: …" is another item than "이천 물류센터: …".
    section_texts: dict[tuple[int, str], list[str]] = {}
    for statement in statements:
        if (
            statement.source == "hub"
            and statement.context
            and not _states_asked_value(statement.text, focus)
            and not _LIST_ITEM_RE.match(statement.text)
        ):
            section_texts.setdefault((statement.item, statement.context), []).append(statement.text)
    section_items = {key: _compact(" ".join(texts)) for key, texts in section_texts.items()}
    # "컵밥 30박스 넣은 거 총액": a count of goods the question names picks the record that holds it (the order of 30
    # boxes); the vendor's other records (the product's unit price) are about something else.
    counts = [
        word.lower()
        for word in focus.words
        if _COUNTED_RE.fullmatch(word) and not _MEASURE_QUALIFIER_RE.fullmatch(word)
    ]
    holding = {
        s.item for s in statements if s.source == "record" and any(count in record_items[s.item] for count in counts)
    }
    if holding:
        statements = [s for s in statements if s.source != "record" or s.item in holding]
    best_by_text: dict[str, tuple] = {}
    for statement in statements:
        record_text = record_items.get(statement.item, "")
        # Only for a sentence that names a required word itself: beside "이천 물류센터: …", the section's 용인 line
        # is about another centre, and a number (`3회`) its neighbour names is not this sentence's.
        section_text = (
            section_items.get((statement.item, statement.context), "")
            if statement.source == "hub"
            and _names_some(statement.text, required)
            and not _LIST_ITEM_RE.match(statement.text)
            else ""
        )
        judged = _answer_score(statement, focus, question_bigrams, required, record_text or section_text)
        if judged is None and required_after_scene and required_after_scene != required:
            judged = _answer_score(
                statement, focus, question_bigrams, required_after_scene, record_text or section_text
            )
        # Asked only of its scene ("서류 들고 본사 찾아가려는데 주소가 어디에요?"), the value is of one thing the scene
        # names: an FAQ entry asking for that kind of value about one of them (the 본사's address) answers it.
        if (
            judged is None
            and focus.accepted_values
            and statement.source == "faq"
            and asked_aspect(statement.context) == focus.aspect
        ):
            for word in (word for word in focus.scene_only if word in required):
                judged = _answer_score(statement, focus, question_bigrams, (word,), record_text or section_text)
                if judged is not None:
                    break
        if judged is None or not _names_all(statement, added_numbers, record_text):
            continue
        if (
            focus.asks_own
            and focus.accepted_values
            and statement.source == "hub"
            and any(name in statement.text for name in counterpart_names)
        ):
            # "저희 결품률 몇 퍼센트였죠?": the policy's sentence about this vendor, not its rule for everyone
            judged = (judged[0] + _OWN_NAME_BONUS, judged[1])
        # The same sentence from two sources (an FAQ answer and a hub passage) is one statement: the copy that
        # answers best, with its context, stands for it.
        key = _compact(statement.text)
        if key not in best_by_text or judged[0] > best_by_text[key][0]:
            best_by_text[key] = (*judged, statement)
    scored = list(best_by_text.values())
    if not scored:
        return []
    scored.sort(key=lambda triple: (-triple[0], triple[2].position))
    best_score, best_share, best = scored[0]
    # For a value, the vendor's own record wins over shared knowledge when it names the subject as fully and answers
    # nearly as well (an FAQ entry asked in the vendor's very words still wins over a record that only shares the
    # subject). "What happens if …" is answered by a rule, never by a record that happens to share a word. A
    # question about the vendor's own terms ("저희는 대금을 어떤 방식으로 받나요?") is answered by their record
    # whenever it answers at all.
    own_record = next((triple for triple in scored if triple[2].source == "record" and triple[1] >= best_share), None)
    if (
        own_record
        and (focus.accepted_values or own_record[1] >= _FULL_SHARE)
        and best.source != "record"
        and (focus.asks_own or own_record[0] >= best_score - _RECORD_MARGIN)
        and _names_action(own_record[2], focus) >= _names_action(best, focus)
    ):
        best_score, _, best = own_record
    scored = [(score, statement) for score, _, statement in scored]
    if best.is_fact:
        # The record's own sentence stating the same value reads better than its "label: value" pair.
        value = best.text.split(":", 1)[-1].strip()
        best_score, best = next(
            ((score, s) for score, s in scored if s.item == best.item and not s.is_fact and value in s.text),
            (best_score, best),
        )
    chosen = [best]
    if not follow_up:
        chosen += _second_asks(question, focus, best, statements, question_bigrams, required, record_items)
    if _asks_state(focus) and best.source == "record" and len(chosen) < settings.LOCAL_ANSWER_MAX_SENTENCES:
        # "출고됐나요? 납기가 언제였죠": the record answering the other ask tells whether the step happened too.
        status = next((s for s in statements if s.item == best.item and _is_status(s)), None)
        if status is not None and status not in chosen:
            chosen.append(status)
    if best.text.startswith(_CONTINUING_OPENERS):
        # "다만 명절에는 토요일 발주가 추가될 수 있습니다" goes on from the sentence before it, which it qualifies.
        before = next((s for s in statements if s.item == best.item and s.position == best.position - 1), None)
        if before is not None and not before.is_fact:
            chosen.insert(0, before)
    for score, statement in scored[1:]:
        if len(chosen) >= settings.LOCAL_ANSWER_MAX_SENTENCES:
            break
        close = score >= _SECOND_SENTENCE_SHARE * best_score
        follows = statement.item == best.item and abs(statement.position - best.position) == 1
        # Beside "선물세트는 25% 이하", the general rule it sets 선물세트 apart from would read as a rival value.
        apart = _sets_topic_apart(best, focus) and not _sets_topic_apart(statement, focus)
        if (
            follows
            and close
            and not apart
            and not statement.is_fact
            and statement not in chosen
            and not _repeats(statement, chosen)
        ):
            chosen.append(statement)
    # A follow-up that names a subject of its own ("물티슈는요?" after a question about 종이컵) asks about that one
    # item of a list, although its rewritten query names both.
    item_focus = replace(focus, subject=own.subject, words=own.words) if own and own.subject else focus
    # The size the vendor's own words name (`반 페이지짜리` after `1/4면`) picks the item too.
    sizes = tuple(_size_of(word) for word in (own or focus).words if _MEASURE_QUALIFIER_RE.fullmatch(word))
    return [_MASKED_MODIFIER_RE.sub("", _asked_item_only(statement.text, item_focus, sizes)) for statement in chosen]


# "행사 기간 중 은빛제지 전 품목 10% 할인합니다": a promotion of every product of one brand.
_BRAND_WIDE_RE = re.compile(r"(?P<brand>[가-힣A-Za-z0-9]+)\s*전\s*품목")
_PROMOTION_WORDS = korean_text.word_set("행사 할인 할인율 프로모션 특가 세일")
# How far a product's name may stand after its brand in a record ("늘봄유업 무가당 요거트 1kg").
_BRAND_TO_PRODUCT_CHARS = 8


def _with_brand_wide_subjects(statements: list[Statement], focus: QuestionFocus) -> list[Statement]:
    """A record of a brand-wide promotion is about every product of that brand: asked "물티슈 행사 몇 %?", it names
    물티슈 when another record of the evidence names 물티슈 as that brand's product ("은빛제지 물티슈 100매×10 단가
    11,400원"). The product words it covers join its context; the brand the product belongs to is read from the
    evidence, never guessed."""
    if not _PROMOTION_WORDS & set(focus.words) and focus.aspect != RATE:
        return statements  # a promotion answers what is asked of a promotion: its rate, its terms
    brands: dict[int, set[str]] = {}
    texts: dict[int, str] = {}
    for statement in statements:
        if statement.source != "record":
            continue
        texts[statement.item] = " ".join(
            (texts.get(statement.item, ""), _compact(statement.text), _compact(statement.context))
        )
        brands.setdefault(statement.item, set()).update(
            _compact(match["brand"]) for match in _BRAND_WIDE_RE.finditer(statement.text)
        )
    covered: dict[int, list[str]] = {}
    for item, item_brands in brands.items():
        for word in focus.subject:
            variants = subject_variants(word)
            if any(variant in texts[item] for variant in variants):
                continue
            if word in _PROMOTION_WORDS:
                continue
            products = [
                text
                for other, text in texts.items()
                for brand in item_brands
                for variant in variants
                if other != item
                and re.search(f"{re.escape(brand)}.{{0,{_BRAND_TO_PRODUCT_CHARS}}}{re.escape(variant)}", text)
            ]
            if products:
                # The product's size the question names (`1.8L`) is the covered product's too.
                sizes = [w for w in focus.words if _MEASURE_QUALIFIER_RE.fullmatch(w) and _size_of(w) in products[0]]
                covered.setdefault(item, []).extend((word, *sizes))
    if not covered:
        return statements
    return [
        replace(statement, context=" ".join((statement.context, *covered[statement.item])))
        if statement.item in covered
        else statement
        for statement in statements
    ]


_MIN_COMPOUND_PART = 2
_HANGUL_WORD_RE = re.compile(r"[가-힣]+")


def _compounds_split(focus: QuestionFocus, statements: list[Statement]) -> QuestionFocus:
    """A compound noun of the question that no statement writes (`현장점검`, `입금계좌`, `냉장제품`) read as the parts
    the evidence does write (`현장` + `점검`, `입금` + `계좌`, `냉장`): each part is then named, or required, on its
    own. So is a derived word read as the noun it is derived from (`주문건` → `주문`, `교환해달래서` → `교환`). A
    generic part (`제품`) is dropped; a compound with a part the evidence lacks stays whole, so a subject the evidence
    does not hold still finds no answer."""
    vocabulary = " ".join(_compact(f"{statement.text} {statement.context}") for statement in statements)

    def written(word: str) -> bool:
        return any(variant in vocabulary for variant in subject_variants(word))

    replaced: dict[str, tuple[str, ...]] = {}
    for word in focus.subject:
        if written(word) or not _HANGUL_WORD_RE.fullmatch(word):
            continue
        stem = _derived_stem(word)
        if stem in korean_text.GENERIC_REFERENTS:
            replaced[word] = ()  # `제품들` names no subject, as `제품` does not
            continue
        if stem and written(stem):
            replaced[word] = (stem,)
            continue
        if len(word) < 2 * _MIN_COMPOUND_PART:
            continue
        for cut in range(_MIN_COMPOUND_PART, len(word) - _MIN_COMPOUND_PART + 1):
            parts = [part for part in (word[:cut], word[cut:]) if part not in korean_text.GENERIC_REFERENTS]
            if parts and all(written(part) for part in parts):
                replaced[word] = tuple(parts)
                break
    if not replaced:
        return focus

    def split(words: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(part for word in words for part in replaced.get(word, (word,))))

    return replace(focus, subject=split(focus.subject), words=split(focus.words))


# What a word adds to the noun before it without changing what it is about: `제품들`, `입고분`, `주문건`, `행사용`,
# `주기적`, `석달치`, `점포별`, `갱신본` (the renewed copy), `회수차` (the pickup's truck), `발주내역` (its listing).
_DERIVING_SUFFIX_RE = re.compile(r"(?P<stem>[가-힣]{2,}?)(?:들|분|건|용|적|치|별|본|차|내역|목록)")
# A verbal noun with its verb glued on (`교환해달래서`, `변경하려면`): the noun is what it is about.
_GLUED_VERB_RE = re.compile(r"(?P<stem>[가-힣]{2,}?)(?:해|하|했|할|한)[가-힣]*")


def _derived_stem(word: str) -> str:
    """The noun a derived word comes from (`주문건` → 주문, `교환해달래서` → 교환), or ""."""
    match = _DERIVING_SUFFIX_RE.fullmatch(word) or _GLUED_VERB_RE.fullmatch(word)
    return match["stem"] if match else ""


# A question asked for a yes or a no ("행사할인도 들어가나요"), which has no value cue of its own.
_YES_NO_END_RE = re.compile(r"(나요|까요|가요|니까|습니까)\s*[?？]*\s*$")
# Where a message asks a second question: after a question mark, or at "그리고" ("… 얼마였죠 그리고 … 몇박스부터").
_ASK_BREAK_RE = re.compile(r"(?<=[?？])\s*|\s+그리고\s+")
# Where one sentence joins two asks: a question word's phrase ended by 고 or 에, with a question word after it.
_ASK_JOINED_RE = re.compile(
    r"(?P<ask>(?:얼마|언제|며칠|어디|누구|몇\s*[^\s?？]+?))(?:이)?(?:고|에),?\s+(?=[^?？]*(?:몇|얼마|언제|며칠|어디|누가))"
)


def _separate_asks(question: str, counterpart_names: tuple[str, ...]) -> list[str]:
    """The two questions of a message that asks two in their own sentences ("포기김치10kg 단가 얼마였죠? 그리고 한빛
    행사는 몇박스부터 적용돼요", "납기 언제에요? 지금 상태는요?"), when each asks for something of its own kind;
    [] otherwise — one question, or a pair the joined-value reading already answers (`금액이랑 납기`)."""
    if joined_value_aspects(question):
        return []
    parts = [part.strip() for part in _ASK_BREAK_RE.split(question) if len(part.strip()) > 1]
    if len(parts) == 1 and (joined := _ASK_JOINED_RE.search(question)):
        # "할인율은 얼마고 언제 끝나요?", "할인 몇 퍼센트에 최소 몇 박스예요?": two asks in one sentence
        parts = [question[: joined.end("ask")].strip(), question[joined.end() :].strip()]
    if len(parts) != 2:
        return []
    focuses = [question_focus(part, counterpart_names=counterpart_names) for part in parts]
    if not all(
        focus.aspect_cued or _asks_state(focus) or _YES_NO_END_RE.search(part)
        for part, focus in zip(parts, focuses, strict=True)
    ):
        return []
    return parts


def _asks_state(focus: QuestionFocus) -> bool:
    return focus.asks_status or _STATUS_LABEL in focus.words


def _second_asks(question, focus, best, statements, question_bigrams, required, record_items) -> list[Statement]:
    """For a question that asks two values joined (`금액이랑 납기`, `몇 % 빠지고 몇 박스 이상`), the statement answering
    the value `best` does not: the best one of that aspect about the same subject, from `best`'s own evidence item
    when one there answers (the order's record holds its amount and its due date)."""
    # A count asked (`몇 박스`, `수량`) accepts an amount as its value, yet the money asked beside it is a value of its
    # own (the joined asks list it only then).
    asked = [
        aspect
        for aspect in joined_value_aspects(question)
        if aspect not in ACCEPTED_VALUES.get(focus.aspect, ()) or (focus.aspect == QUANTITY and aspect == AMOUNT)
    ]
    # "몇 % 할인이고 몇박스부터": the other ask counts in its own unit, the one `best` does not count in.
    counter = tuple(unit for unit in asked_counters(question) if not _counts_in(best.text, (unit,)))
    answers: list[Statement] = []
    for aspect in asked[: settings.LOCAL_ANSWER_MAX_SENTENCES - 1]:
        other = replace(focus, aspect=aspect, aspect_cued=True, counter=counter, asks_deadline=False, polar=False)
        candidates = []
        for statement in statements:
            if statement is best or statement in answers or _repeats(statement, [best, *answers]):
                continue
            if counter and not _counts_in(statement.text, counter):
                continue  # "몇박스부터" is answered by `5박스 이상`, not by the product's `5kg`
            if aspect == QUANTITY and not counter and _states_sizes_only(statement.text):
                continue  # "최소수량은?" is a count of goods (`최소 주문: 5박스`), not the size in `찹쌀 4kg`
            # `best`'s own record is about the subject `best` answered for: its `5박스 이상 주문 시` line need not
            # name the 총각김치 again.
            judged = _answer_score(
                statement,
                other,
                question_bigrams,
                required,
                record_items.get(statement.item, ""),
                about_subject=best.source == "record" and statement.item == best.item,
            )
            if judged is not None:
                candidates.append((statement.item == best.item, judged[0], statement))
        if candidates:
            answers.append(max(candidates, key=lambda triple: triple[:2])[2])
    return answers


# "이천 물류센터: 상온 상품 전체. …": one item of a list, its label before the colon (not a time's `10:30`).
_LIST_ITEM_RE = re.compile(r"^[^:：.]{1,30}(?<!\d)[:：](?!\d)")
# A list's items part at these marks; a comma or a slash between digits is inside a number (12,600 · 1/2).
_ITEM_BREAK_RE = re.compile(r"[·;]|(?<!\d)[,/]|[,/](?!\d)")
_LEAD_IN_RE = re.compile(r"^[^:：]*?(?<!\d)[:：](?!\d)\s*(?P<items>.+)$")
# Without an asked aspect, a price word ("납품가 알려주세요") still asks for each item's amount.
_PRICE_VALUE_KINDS = (AMOUNT,)
_TRAILING_MARKS = ".!…"


def _asked_item_only(text: str, focus: QuestionFocus, sizes: tuple[str, ...] = ()) -> str:
    """`text` cut to the one item of its list that the question names ("주요 품목 납품 단가: A 12,600원, B 18,000원,
    C 12,800원." asked about C → "C 12,800원."), so the vendor does not read another item's value beside the asked
    one. The lead-in before the colon goes too: value checking reads it as the first item's subject, so beside
    another item's value it would read as a swapped value. A list is two or more items that each hold a value of the
    asked kind; the answer is the only item holding every subject word of the question (and its numbers: 1kg) that
    any item holds, exactly as written (해닮 is not 해담). Items often leave out a subject the first one names
    ("전단 1/4면 광고비는 30만 원, 1/2면 55만 원"): a word the winner lacks keeps the list whole, as does a tie."""
    kinds = focus.accepted_values or (_PRICE_VALUE_KINDS if PRICE_WORDS & set(focus.words) else ())
    if not kinds:
        return text
    match = _LEAD_IN_RE.match(text)
    items_text = match["items"] if match else text
    items = [item.strip() for item in _ITEM_BREAK_RE.split(items_text)]
    if len(items) < 2 or not all(item and holds_value(item, kinds) for item in items):
        return text
    sized = [item for item in items if any(size in _compact(item) for size in sizes)]
    if sizes and len(sized) == 1 and _compact(sized[0]).startswith(sizes):
        # The one item of the size asked that leaves out the subject the first item names ("1/2면은 55만 원");
        # an item naming its own product ("포기김치 10kg 31,000원") is picked by its name below.
        ending = text[len(text.rstrip(_TRAILING_MARKS)) :]
        return f"{sized[0].rstrip(_TRAILING_MARKS)}{ending}"
    # Words read as verb forms (`해야`) or given as examples name no item.
    subject = [word for word in focus.subject if word not in (*focus.optional, *focus.non_nouns)] or focus.subject
    names = {_compact(word) for word in (*subject, *(w for w in focus.words if any(c.isdigit() for c in w)))}
    named = [
        {name for name in names if name and any(variant in _compact(item) for variant in subject_variants(name))}
        for item in items
    ]
    held = set().union(*named)
    winners = [item for item, item_names in zip(items, named, strict=True) if held and item_names == held]
    # Only the first item named while the others name nothing: its words may be what every item is about
    # ("팔레트 1개당 높이는 1.5m 이하, 중량은 1톤 이하").
    others_unnamed = not any(named[1:])
    if len(winners) != 1 or (winners[0] == items[0] and others_unnamed):
        return text
    ending = text[len(text.rstrip(_TRAILING_MARKS)) :]
    return f"{winners[0].rstrip(_TRAILING_MARKS)}{ending}"


# A second sentence must be nearly as good an answer as the first and stand next to it in the same passage (the
# sentence that goes on: "지급일이 공휴일이면 다음 영업일에 지급합니다").
_SECOND_SENTENCE_SHARE = 0.8
_CONTINUING_OPENERS = ("다만", "단,", "단 ", "하지만", "그러나", "그런데", "이때", "이 경우", "그 경우")
_OWN_WORD, _CONTEXT_WORD = 1.0, 0.6
_SOURCE_BONUS = {"record": 0.3, "faq": 0.15}
_FACT_PENALTY = 0.1
_LABEL_BONUS = 0.6
_STATUS_LABEL = "상태"
# What answers whether something costs the vendor, besides an amount: who bears it, or that it is free.
_COST_WORDS = ("비용", "부담", "분담", "무료", "유료", "청구", "요금", "수수료")
_BOUND_PENALTY = _BOUND_BONUS = 0.6
_ADDRESS_RE = re.compile(r"[가-힣]+(?:로|길)\s*\d|[가-힣]{2,}(?:시|구|군|면|동)\s[가-힣]")
_UNIT_PRICE_RE = re.compile(r"단가|납품가|공급가|개당|박스당|[a-zA-Z]+당")
_UNIT_PRICE_PENALTY = 0.6
_EXACT_KIND_BONUS = 0.5
_FAQ_QUESTION_WEIGHT = 0.8
_FAQ_SAME_ASPECT_BONUS = 0.8
# Aspects whose value patterns are loose (a place is "센터" or "에서", a procedure "요청"): which kind of thing an FAQ
# entry asks for tells more than the pattern. A time, an amount or a rate has a shape of its own.
_LOOSE_VALUE_ASPECTS = frozenset({PLACE, PROCEDURE, PARTY, CONTACT})
_RECORD_MARGIN = 1.0
_FULL_SHARE = 0.9
_COUNTER_BONUS = 1.0
_SYNONYM_WEIGHT = 0.85
_RELATION_BONUS, _RELATION_PENALTY = 0.3, 0.8
_OPPOSITE_RELATION = {"전": "후", "후": "전", "이전": "이후", "이후": "이전"}
_DEADLINE_BONUS = 0.3
_CONDITION_BONUS = 1.0
_ACTION_BONUS = 0.8
_TOPIC_BONUS = 1.0
_OWN_NAME_BONUS = 1.0
_RECURRING_BONUS = 0.3
_WEEKDAY_RE = re.compile(r"[월화수목금토일]요일|[월화수목금토일]\s*[·,/]\s*[월화수목금토일]")
_RECURRING_RE = re.compile(r"익월|매월|매달|매주|매일|다음 달|월말|말일|[월화수목금토일]요일|주\s*\d\s*회|마다")


def _required_words(focus: QuestionFocus, statements: list[Statement], own: QuestionFocus | None) -> tuple[str, ...]:
    """The subject words a statement must name. Verb forms are never required, nor words the analyser reads as no
    noun unless the evidence holds the word; a word written with 는 that no statement of the evidence holds is most
    likely a verb form too (`멈추는`). In a
    follow-up, what the vendor's own words add is required and the topic carried over is not."""
    vocabulary = " ".join(_compact(f"{statement.text} {statement.context}") for statement in statements)
    optional = set(focus.optional) | set(own.optional if own else ())
    marked = set(focus.marked) | set(own.marked if own else ())
    non_nouns = set(focus.non_nouns) | set(own.non_nouns if own else ())
    if non_nouns:
        # The evidence holds it as a noun only where the analyser reads it as one there too: `보내 주세요` is the
        # verb of `보내도 돼요`, a brand it does not know (`고운들`) is read the same way in both.
        evidence_nouns = {
            korean_text.strip_particle(word)
            for statement in statements
            for text in (statement.text, statement.context)
            for word in korean_text.words(text)
            if korean_text.strip_particle(word) in non_nouns and word not in morphology.non_nouns(text)
        }
        optional |= non_nouns - evidence_nouns
    words = focus.subject
    if own is not None and own.subject:
        words = tuple(word for word in own.subject if word in focus.subject) or own.subject
    return tuple(
        word
        for word in words
        if word not in optional
        and not (word in marked and not any(variant in vocabulary for variant in subject_variants(word)))
    )


def _answer_score(
    statement: Statement,
    focus: QuestionFocus,
    question_bigrams: set[str],
    required: tuple[str, ...],
    record_text: str = "",
    *,
    about_subject: bool = False,
) -> tuple[float, float] | None:
    """(how well a statement answers, the share of the subject it names), or None when it does not answer:
    another subject, or no value of the asked kind. `record_text`: the whole record a record's statement stands
    in (compacted) — a record is about one thing, so its `납기 2026-12-03` line answers for the 된장 order its
    other line names."""
    own, context = _compact(statement.text), _compact(statement.context)
    if statement.is_fact and _compact(statement.text.split(":", 1)[-1]) in _compact("".join(focus.words)):
        return None  # `대상 브랜드: 참술식품` only repeats what "참술식품은 어떤 브랜드예요?" names
    found = named_fully = named_itself = 0.0
    matched, matched_required = 0, 0
    # The rest of its record counts only for a statement that names some of the subject itself (a contract's
    # `적용 기간` line is not about the 합배송 its heading names), or when the record holds a number the question
    # names with its counter: "콩나물 40박스 언제까지" is that order, so its `납기 2026-12-03` line answers.
    qualifiers = [word for word in focus.words if any(ch.isdigit() for ch in word)]
    # An FAQ answer is about the entry's question: its sentences count for one that names the subject there.
    named_near = f"{own} {context}" if statement.source == "faq" else own
    if (
        not about_subject
        and not any(variant in named_near for word in focus.subject for variant in subject_variants(word))
        and not any(_COUNTED_RE.fullmatch(word) and word.lower() in record_text for word in qualifiers)
    ):
        record_text = ""
    for word in focus.subject:
        variants = subject_variants(word)
        # The word itself is closer than another word for the same subject (주문 rather than 발주).
        weight = 1.0 if word.lower() in own or word.lower() in context else _SYNONYM_WEIGHT
        if statement.source == "faq" and _names_word(own, variants, word) and not _names_word(context, variants, word):
            # An FAQ answer is about its entry's question: `장기 재고는 어떻게 처리되나요?` answered
            # `… 할인 판매나 반품을 협의합니다` names 반품 in passing, as near as a section path would,
            # not as its subject.
            found, matched = found + weight * _CONTEXT_WORD, matched + 1
            named_fully = named_fully + _CONTEXT_WORD
        elif _names_word(own, variants, word):
            found, matched = found + weight * _OWN_WORD, matched + 1
            named_fully, named_itself = named_fully + _OWN_WORD, named_itself + _OWN_WORD
        elif _names_word(context, variants, word):
            # A record's heading names what the whole record is about; a section path or an FAQ question is
            # only near the sentence.
            nearness = _OWN_WORD if statement.source == "record" else _CONTEXT_WORD
            found, named_fully = found + weight * nearness, named_fully + nearness
            matched += 1
        elif _names_word(record_text, variants, word):
            # Another sentence of an FAQ answer only makes this one eligible: within the entry, the sentence
            # naming the word itself is the answer ("선물세트는 25% 이하" rather than "식품 15% 이하").
            nearness = _CONTEXT_WORD if statement.source == "record" else 0.0
            found, named_fully = found + weight * nearness, named_fully + nearness
            matched += 1
        else:
            continue
        matched_required += word in required
    if required:
        # A question of many subject words may miss one in a statement that answers it; counted on the words it
        # wrote, so reading one of them as a verb form (`여러`, `싣고`) does not make the rest stricter.
        long_question = len(required) > 3 or (len(required) == 3 and len(focus.subject) > 3)
        if matched_required < len(required) - long_question:
            return None
    elif focus.subject and not matched:
        return None
    if focus.accepted_values and not _states_asked_value(_without_sizes(statement.text, qualifiers), focus):
        # The question's own `5kg` is what it asks about, not the quantity it asks for.
        return None
    if (
        focus.polar
        and focus.aspect == AMOUNT
        and not holds_value(statement.text, focus.accepted_values[:-1])
        and not any(word in statement.text for word in _COST_WORDS)
    ):
        return None  # "EDI 연동하면 비용 따로 내야돼요?" is not answered by "EDI 연동이 가능합니다"
    # Numbers with their counter (`1차`, `10kg`) are not required, but a statement naming them is the closer one.
    qualified = sum(
        _OWN_WORD
        for word in qualifiers
        if any(form in own or form in context or form in record_text for form in _qualifier_forms(word))
    )
    found, named_fully, named_itself = found + qualified, named_fully + qualified, named_itself + qualified
    other_words = [word for word in focus.words if word not in focus.subject and word not in qualifiers]
    named = sum(1 for word in other_words if word.lower() in own or word.lower() in context)
    if not focus.subject and not named:
        return None  # nothing of the question is in it: no subject to check, so no answer either
    weighed = len(focus.subject) + len(qualifiers)
    subject_share = found / weighed if weighed else 0.0
    # How much of the subject it names, in any of its words: the vendor's own record writing 결제 for the 대금
    # asked names the subject as fully as a policy writing 대금. For a value its record's heading counts; for other
    # questions only the statement itself does (a settlement notice's 세금계산서 sentence is not about 대금).
    named_share = (named_fully if focus.accepted_values else named_itself) / weighed if weighed else 0.0
    aspect_share = named / len(other_words) if other_words else 0.0
    text_grams = {own[index : index + 2] for index in range(len(own) - 1)} | {
        context[index : index + 2] for index in range(len(context) - 1)
    }
    bigram_share = len(question_bigrams & text_grams) / len(question_bigrams) if question_bigrams else 0.0
    score = 2.0 * subject_share + 0.5 * aspect_share + 0.5 * bigram_share + _SOURCE_BONUS.get(statement.source, 0.0)
    if statement.source == "faq" and other_words:
        # An FAQ entry that asks what the vendor asks (the same aspect and action words, not only the same subject)
        # is the curated answer to this very question.
        asked = sum(1 for word in other_words if word.lower() in context)
        score += _FAQ_QUESTION_WEIGHT * asked / len(other_words)
    if (
        statement.source == "faq"
        and focus.aspect in _LOOSE_VALUE_ASPECTS
        and asked_aspect(statement.context) == focus.aspect
    ):
        # An FAQ entry that asks for the same kind of thing ("… 주차는 어디에 하나요?" for "… 어디에 세우면 돼요?")
        # answers it rather than one about the subject's procedure that happens to name a 센터.
        score += _FAQ_SAME_ASPECT_BONUS
    if focus.accepted_values and holds_value(statement.text, focus.accepted_values[:1]):
        score += _EXACT_KIND_BONUS  # a deadline for "기간", a clock time for "몇 시": the kind asked, not a neighbour
    if focus.aspect and not focus.asks_bound and any(word in own or word in context for word in BOUND_WORDS):
        score -= _BOUND_PENALTY  # "최대 50%까지" is a limit, not the value asked for
    elif focus.asks_bound and not focus.accepted_values and any(word in own for word in BOUND_WORDS):
        score += _BOUND_BONUS  # "기간 제한 있어요?" is answered by "최대 3개월", not by how to download
    if focus.asks_total and _UNIT_PRICE_RE.search(statement.text):
        score -= _UNIT_PRICE_PENALTY  # "콩나물 4kg 건 총액" is the order's 주문 금액, not the product's 단가
    if focus.counter and _counts_in(statement.text, focus.counter):
        score += _COUNTER_BONUS  # "몇 명" is answered by "10명", not by "10개"
    for word, relation in focus.relations:
        if f"{word}{relation}" in own:
            score += _RELATION_BONUS
        elif f"{word}{_OPPOSITE_RELATION[relation]}" in own:
            score -= _RELATION_PENALTY  # "확정 후" is not answered by what holds "확정 전"
    if focus.asks_deadline and "까지" in statement.text:
        score += _DEADLINE_BONUS  # "언제까지" is answered by a deadline, not by a duration beside it
    if focus.asks_weekday and _WEEKDAY_RE.search(statement.text):
        score += _COUNTER_BONUS  # "배송 요일" is answered by "월·수·금", not by "평일 오후 3시"
    if focus.recurring and _RECURRING_RE.search(statement.text):
        score += _RECURRING_BONUS  # "매달 며칠" is answered by the day of every month, not by one month's date
    if _sets_topic_apart(statement, focus):
        score += _TOPIC_BONUS  # "선물세트는 몇 %?" is answered by "선물세트는 25% 이하", the same topic set apart
    if _names_action(statement, focus):
        score += _ACTION_BONUS  # "통장을 바꾸려면" is answered about the 계좌 변경, not about paying by 계좌 이체
    if focus.conditions and _states_condition(statement.text, focus.conditions):
        score += _CONDITION_BONUS  # "기한 넘기면요?" is answered by what follows "기한이 지나면", not by the 기한
    if statement.is_fact and _fact_label(statement) in focus.words:
        score += _LABEL_BONUS  # "어떤 상태에요?" is answered by the record's `상태: 출고 준비`
    elif focus.asks_status and _is_status(statement):
        score += _LABEL_BONUS  # "출고됐나요?" too
    return score - (_FACT_PENALTY if statement.is_fact else 0.0), named_share


def _states_asked_value(text: str, focus: QuestionFocus) -> bool:
    """Whether `text` holds a value of the kind the question asks: a number in the unit asked (`몇 점` → 96점) is one;
    a party the question names itself as a place is not ("센터 납품하다 파손되면 누구 책임" beside "택배로 센터에
    납품")."""
    if focus.asks_address:
        return bool(_ADDRESS_RE.search(text))  # "김해 물류센터: 부산·경남 권역 …" names a centre, not its address
    if focus.aspect == PARTY and focus.words:
        # Only as a place (`센터에`, `점포로`): "참여 협력사: 대한물산" still names the party asked for.
        named = "|".join(map(re.escape, sorted(focus.words, key=len, reverse=True)))
        text = re.sub(rf"(?:{named})(?=에서|에|으로|로)", " ", text)
    return holds_value(text, focus.accepted_values) or bool(
        focus.aspect == QUANTITY and focus.counter and _counts_in(text, focus.counter)
    )


def _names_some(text: str, words: tuple[str, ...]) -> bool:
    compact = _compact(text)
    return any(_names_word(compact, subject_variants(word), word) for word in words)


def _counts_in(text: str, units: tuple[str, ...]) -> bool:
    return bool(re.search(rf"\d\s*({'|'.join(map(re.escape, units))})", text))


def _without_sizes(text: str, sizes: list[str]) -> str:
    """`text` without the sizes the question names (`5kg` also as `5 kg`)."""
    for size in sizes:
        match = re.fullmatch(r"(?P<number>\d[\d,./]*)\s*(?P<unit>\D+)", size)
        if match:
            text = re.sub(rf"{re.escape(match['number'])}\s*{re.escape(match['unit'])}", " ", text, flags=re.IGNORECASE)
    return text


def _sets_topic_apart(statement: Statement, focus: QuestionFocus) -> bool:
    """The statement marks a topic of the question with 은/는 as the question does (`선물세트는`)."""
    return any(re.search(rf"{re.escape(word)}\s*(은|는)(?![가-힣])", statement.text) for word in focus.marked)


def _fact_label(statement: Statement) -> str:
    """The compacted label of a "label: value" fact (`상태: 출고 준비` → 상태)."""
    return _compact(statement.text.split(":", 1)[0])


def _is_status(statement: Statement) -> bool:
    return statement.is_fact and _fact_label(statement) == _STATUS_LABEL


def _names_action(statement: Statement, focus: QuestionFocus) -> bool:
    """Whether the statement or its context names the action the question asks about (변경 for `바꾸려면`)."""
    own, context = _compact(statement.text), _compact(statement.context)
    return any(action in own or action in context for action in focus.actions)


_VOWEL_FOLD_MIN_CHARS = 3


def _names_word(text: str, variants: frozenset[str], word: str) -> bool:
    """Whether compacted `text` names `word`: one of its variants, or each noun of a compound the evidence writes
    apart (`김해센터` in "김해 물류센터"), or written with ㅔ for its ㅐ or the other way round (`패널티`, 페널티)."""
    if any(variant in text for variant in variants):
        return True
    parts = morphology.compound_parts(word)
    if parts and all(any(variant in text for variant in subject_variants(part)) for part in parts):
        return True
    # Only for longer words: two syllables spelt apart by the vowel alone are often two words (매일, 메일).
    return len(word) >= _VOWEL_FOLD_MIN_CHARS and korean_text.vowel_folded(word) in korean_text.vowel_folded(text)


def _other_item_patterns(focus: QuestionFocus, statements: list[Statement]) -> list[re.Pattern]:
    """For each size or share of the question (`1면`, `500g`) that no statement names, a pattern of the same unit,
    or another of its kind, after another number (`1/4면`, `1kg`), and for each such model (`T300`) one of its series
    (`T200`): the statements naming one state another size or model."""
    patterns = []
    for word in focus.words:
        match = _MEASURE_QUALIFIER_RE.fullmatch(word)
        if not match or any(_size_of(word) in _compact(f"{s.text} {s.context}") for s in statements):
            continue
        units = _SAME_DIMENSION.get(match[2].lower(), (match[2].lower(),))
        patterns.append(re.compile(rf"\d(?:{'|'.join(map(re.escape, units))})(?![a-z])"))
    for word in focus.words:
        # A model the question names that no statement names (`T300`): a statement naming another model of the
        # same series (`T200`) is about that one.
        match = _MODEL_RE.fullmatch(word)
        if match and not any(word.lower() in _compact(f"{s.text} {s.context}") for s in statements):
            patterns.append(re.compile(rf"(?<![a-z]){re.escape(match[1].lower())}\d"))
    return patterns


_MODEL_RE = re.compile(r"([A-Za-z]{1,3})\d{2,4}")


# A size asked in one unit is not answered by a size of the same kind in another (`500g` beside `1kg`).
_SAME_DIMENSION = {unit: group for group in (("g", "kg"), ("ml", "l"), ("mm", "cm", "m")) for unit in group}


def _months_of(statement: Statement) -> frozenset[int]:
    """The months the statement names as its period, in itself or its context (a record's title, a section path)."""
    return months_named(statement.text) | months_named(statement.context)


def _about_other_months(statement: Statement, months: frozenset[int]) -> bool:
    """The statement names a period, and none of `months`."""
    named = _months_of(statement)
    return bool(named) and not named & months


def _states_sizes_only(text: str) -> bool:
    """Every number `text` states is a size (`4kg`, `24입`): it counts nothing."""
    numbers = _counted_numbers(text)
    return bool(numbers) and all(_MEASURE_QUALIFIER_RE.fullmatch(number) for number in numbers)


def _size_of(word: str) -> str:
    """The size a question word names, lower case: `57mm짜리` → 57mm."""
    match = _MEASURE_QUALIFIER_RE.fullmatch(word)
    return word[: match.end(2)].lower() if match else word.lower()


def _states_condition(text: str, nouns: tuple[str, ...]) -> bool:
    """Whether a conditional clause of `text` names one of `nouns` ("기한이 지나면" for 기한)."""
    return any(noun in condition_nouns(text) for noun in nouns)


_COUNTER_SYNONYMS = {"번": "회", "회": "번"}
# A count of goods (`40박스`, `30개`): in a question it names one order or delivery.
_COUNTED_RE = re.compile(r"\d[\d,]*(박스|개|팩|세트|봉|병|캔|팔레트|ea|kg|톤)", re.IGNORECASE)
_MEASURE_QUALIFIER_RE = re.compile(r"\d+([./]\d+)?(면|kg|g|l|ml|온스|미|매|cm|mm|m|롤|개입|입)(짜리)?", re.IGNORECASE)


def _names_all(statement: Statement, numbers: tuple[str, ...], record_text: str = "") -> bool:
    """The statement names every number (`1.8L`, `1/2면`) in itself, its context or, for a record, the rest of its
    record: a record is about one thing, so its `할인율: 7%` line is about the 맛술 1.8L its other line names."""
    text = _compact(f"{statement.text} {statement.context}") + record_text
    return all(any(form in text for form in _qualifier_forms(number)) for number in numbers)


def _qualifier_forms(word: str) -> tuple[str, ...]:
    """A number with its counter as the evidence may write it: `5번` is also `5회`."""
    word = word.lower()
    other = _COUNTER_SYNONYMS.get(word[-1])
    return (word, word[:-1] + other) if other else (word,)


def _repeats(statement: Statement, chosen: list[Statement]) -> bool:
    """A fact whose numbers a chosen sentence already states, each with its unit, adds nothing (`할인율: 15%` after
    `… 15% 할인합니다`); `5만 원` is not the `5영업일` beside it."""
    numbers = set(_counted_numbers(statement.text))
    return any(numbers and numbers <= set(_counted_numbers(other.text)) for other in chosen)


_COUNTED_NUMBER_RE = re.compile(r"(\d[\d,.]*)\s*([%a-zA-Z가-힣]{0,2})")


def _counted_numbers(text: str) -> list[str]:
    return [f"{number}{unit}" for number, unit in _COUNTED_NUMBER_RE.findall(text)]


def _compact(text: str) -> str:
    return "".join(text.split()).lower()


_ITEM_HEADER_RE = re.compile(r"^\[\d+\] \((?P<source>[^·)\n]+?)(?: · (?P<title>[^\n]*))?\)\s*$")
_SOURCE_BY_LABEL = {"거래처 기록": "record", "FAQ": "faq", "지식 허브": "hub"}
_PATH_LINE_RE = re.compile(r"^\[(?P<path>[^\]\n]{1,200})\]\s+(?P<text>\S.*)$")


def evidence_statements(tool_results: list[str], *, counterpart_names: tuple[str, ...] = ()) -> list[Statement]:
    """Every statement of the tool results, each with its context and evidence item, in order. A sentence naming
    the room's vendor (`counterpart_names`) beside a masked other vendor is that vendor's part of it."""
    statements: list[Statement] = []
    heading_facts: set[tuple[int, str]] = set()
    item = 0
    for result in tool_results:
        for source, title, lines in _evidence_blocks(_result_text(result)):
            item += 1
            context = title
            for raw_line in lines:
                line = raw_line.strip()
                if not line or line.startswith(_BOILERPLATE_PREFIXES) or _PARENTHESISED_RE.match(line):
                    continue
                labelled = _LABEL_RE.match(line)
                label = labelled["label"].strip().lower() if labelled else ""
                if label in ("질문", "q"):
                    context = labelled["value"].strip()
                    continue
                path_line = _PATH_LINE_RE.match(line)
                if path_line and (source == "hub" or " > " in path_line["path"]):
                    texts, line_context, facts = [path_line["text"]], path_line["path"], None
                    heading_fact = _heading_fact(line_context)
                    if heading_fact and (item, heading_fact) not in heading_facts:
                        heading_facts.add((item, heading_fact))
                        statements.append(
                            Statement(heading_fact, line_context, source, item, len(statements), is_fact=True)
                        )
                elif line.startswith("[") and not _SENTENCE_END_RE.search(line):
                    context = f"{context} {line}".strip()  # a record's heading "[계약 조건] 2026년 거래 조건"
                    continue
                elif VALUE_SEPARATOR in line or (labelled and label not in _ANSWER_LABELS):
                    texts, line_context, facts = line.split(VALUE_SEPARATOR), context, True
                else:
                    texts, line_context, facts = [line], context, False
                for piece in texts:
                    fact = _without_label(piece.strip())
                    if not fact or _URL_RE.match(fact):
                        continue
                    if facts is None or (facts and _LABEL_RE.match(fact)):
                        candidates = [fact]  # a passage unit is one whole sentence or list item already
                    else:
                        candidates = [sentence.text for sentence in split_sentences(fact)]
                    for text in candidates:
                        if OTHER_VENDOR_MASK in text and any(name in text for name in counterpart_names):
                            text = _own_vendor_part(text, counterpart_names)
                        if not _is_answer_material(text, source) or (facts is False and heading_only(text)):
                            continue
                        statements.append(Statement(text, line_context, source, item, len(statements), is_fact=facts))
    return statements


# "연말 신선 기획전 (12월 1일 ~ 12월 31일)": a section heading that gives its subject's period or figure in parentheses.
_HEADING_VALUE_RE = re.compile(r"^(?P<subject>[^()]{2,}?)\s*\((?P<value>[^()]*\d[^()]*)\)$")


def _heading_fact(path: str) -> str:
    """The fact a section path's last heading states (`… > 연말 신선 기획전 (12월 1일 ~ 12월 31일)` → "연말 신선
    기획전: 12월 1일 ~ 12월 31일"), or "" when it states none: the sentences under it are about the subject, so its
    period is evidence too, although no sentence repeats it."""
    match = _HEADING_VALUE_RE.match(path.rsplit(" > ", 1)[-1].strip())
    return f"{match['subject']}: {match['value'].strip()}" if match else ""


def _evidence_blocks(text: str) -> list[tuple[str, str, list[str]]]:
    """(source, title, lines) of each evidence item: the retrieval tools' `[n] (출처 · 제목)` headers, or
    blank-line separated passages in a result of another shape."""
    lines = text.splitlines()
    if not any(_ITEM_HEADER_RE.match(line.strip()) for line in lines):
        return [("", "", passage.splitlines()) for passage in _PASSAGE_BREAK_RE.split(text) if passage.strip()]
    blocks: list[tuple[str, str, list[str]]] = []
    for line in lines:
        header = _ITEM_HEADER_RE.match(line.strip())
        if header:
            blocks.append((_SOURCE_BY_LABEL.get(header["source"].strip(), ""), (header["title"] or "").strip(), []))
        elif blocks:
            blocks[-1][2].append(line)
        elif line.strip():
            blocks.append(("", "", [line]))
    return blocks


def _without_label(piece: str) -> str:
    """ "" for a metadata line, the value of an answer line, a fact line ("단가: 30,000원") as it is."""
    labelled = _LABEL_RE.match(piece)
    if not labelled:
        return piece
    label = labelled["label"].strip().lower()
    if label in _METADATA_LABELS:
        return ""
    if label in _ANSWER_LABELS:
        return labelled["value"].strip()
    return piece


def _result_text(result: str) -> str:
    stripped = result.strip()
    if not stripped.startswith(("{", "[")) or _ITEM_HEADER_RE.match(stripped.splitlines()[0]):
        return result
    try:
        parsed = json.loads(stripped)
    except ValueError:
        return result
    return "\n\n".join(_json_texts(parsed))


def _json_texts(value: object, key: str = "") -> list[str]:
    if isinstance(value, str):
        return [] if key in _JSON_METADATA_KEYS else [value]
    if isinstance(value, Mapping):
        return [text for child_key, child in value.items() for text in _json_texts(child, str(child_key).lower())]
    if isinstance(value, list):
        return [text for child in value for text in _json_texts(child, key)]
    return []


_MASK = re.escape(OTHER_VENDOR_MASK)
_ASIDE = r"(?:\([^()]*\))?"  # "[다른 벤더](금빛수산 굴비 세트)": the masked vendor's product goes with it
_JOINERS = r"(?:과|와|이랑|랑|하고|및|,)"
# "… 정원식품, [다른 벤더]입니다", "대한물산(…), [다른 벤더](…)": an item of a list of vendors.
_MASKED_ITEM_RE = re.compile(rf",\s*{_MASK}{_ASIDE}(?=[,.]|입니다|이며|\s등|$)")
# "정원식품은 위생 점수 96점으로 우수 등급을, [다른 벤더]은 이물 관리 미흡으로 개선 권고를 받았습니다": a clause of
# its own about the masked vendor, sharing the sentence's last word (the predicate) with the clause before it.
_MASKED_CLAUSE_RE = re.compile(rf",\s*{_MASK}{_ASIDE}[이가은는]\s")
_OBJECT_END_RE = re.compile(r"[을를]$")


# "기존 [다른 벤더] 경유 납품분은 … 직납으로 전환합니다": a masked vendor standing before a noun of the room's own
# record only says whose route the fact is about; the answer leaves it out, since the final check reads a mask with a
# value after it as another vendor's value. Joined to the noun (`[다른 벤더] 물량과 같은 차량으로`) it is part of
# the fact and stays, and such a sentence is held by that check as before.
_MASKED_MODIFIER_RE = re.compile(rf"{_MASK}\s+(?=[가-힣A-Za-z]+(?:\s|$))(?![가-힣A-Za-z]*(?:과|와|랑|하고|및)\s)")


def _own_vendor_part(sentence: str, names: tuple[str, ...]) -> str:
    """The sentence without the masked vendors joined to the room's own vendor (`names`) in it: "[다른 벤더]과
    정원식품은 2026년 9월부터 … 참여합니다" → "정원식품은 2026년 9월부터 … 참여합니다". A clause about the masked vendor
    goes when the sentence's last word is the predicate both clauses share (the clause before it ends with its
    object). Returned still masked, so no answer material, when its masked part cannot be cut so."""
    clause = _MASKED_CLAUSE_RE.search(sentence)
    if clause:
        before, last_word = sentence[: clause.start()], sentence.split()[-1]
        if not _OBJECT_END_RE.search(before) or any(ch.isdigit() for ch in last_word) or OTHER_VENDOR_MASK in last_word:
            return sentence
        sentence = f"{before} {last_word}"
    name = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True) if name)
    # "대한물산과 [다른 벤더]이 선정되었습니다": the subject or topic particle goes to the name once the mask is gone.
    sentence = re.sub(
        rf"(?P<name>{name})(?P<aside>{_ASIDE})(?:과|와|및)\s*{_MASK}{_ASIDE}(?P<particle>[이가은는]?)(?=\s)",
        lambda match: (
            match["name"]
            + match["aside"]
            + (korean_text.particle_after(match["name"], match["particle"]) if match["particle"] else "")
        ),
        sentence,
    )
    sentence = _MASKED_ITEM_RE.sub("", sentence)
    # "[다른 벤더]과 정원식품은", "[다른 벤더](…), 정원식품(…)": joined before the name.
    return re.sub(rf"{_MASK}{_ASIDE}{_JOINERS}\s*(?=(?:{name}))", "", sentence)


def _is_answer_material(sentence: str, source: str) -> bool:
    """A sentence about another vendor or its product answers nothing for this one, even with the name masked. The
    room's own record that only mentions another vendor ("기존 [다른 벤더] 경유 납품분은 … 직납으로 전환합니다") is
    still the room's own fact; a clause of it about the masked vendor (`[다른 벤더]는 …`) is not."""
    if len(sentence) < _MIN_SENTENCE_CHARS or OTHER_PRODUCT_MASK in sentence:
        return False
    if OTHER_VENDOR_MASK not in sentence:
        return True
    return source == "record" and not about_masked_clauses(sentence)


# --- follow-up rewriting (seed 001 5.2, deterministic) ---


def _picks_an_occurrence(token: str) -> bool:
    """A period or a number (`10월`) or a dependent noun (`거는`, `건은`) picks another occurrence of the earlier
    question's topic ("10월 거는 얼마 받았었죠?"): it names no topic of its own."""
    return any(ch.isdigit() for ch in token) or token[:-1] in korean_text.GENERIC_REFERENTS


def _names_aspect_topic(question: str) -> bool:
    tokens = [token for token in korean_text.content_tokens(question) if not _picks_an_occurrence(token)]
    asks_how_or_when = any(marker in question for marker in korean_text.TIME_METHOD_REASON_MARKERS)
    return len(tokens) >= 2 and not asks_how_or_when


def _rewrite(messages: list[Mapping]) -> str:
    question, prior_questions = rewrite_request_parse(messages)
    rewritten = rewrite_follow_up(question, prior_questions)
    return rewritten or NO_REWRITE


# A noun phrase with only a contrastive 은요/는요 ("이천 센터 쪽은요?") asks the earlier question about another
# subject: a follow-up although it names a topic of its own.
_BACK_IN_TIME_RE = re.compile(r"(?<![가-힣])(?:그때|그날|당시)")
_ELLIPTICAL_RE = re.compile(r"^[^?？]{1,20}[은는]요\s*[?？]*\s*$")


# A follow-up that only names an item with the copula's 이면 ("1/2면이면요?", "냉동이면요?").
_IS_ITEM_RE = re.compile(r"^\S+이면요\s*[?？]*\s*$")


def _asks_again_for(question: str) -> bool:
    """`된장 3kg짜리도 알려주세요`, `고추장도요?`: another item with 도 and nothing asked of its own but a request asks
    the earlier question about that item (`행사할인도 들어가나요?` asks a question of its own)."""
    words = korean_text.words(question)
    if not words or len(words) > _ADDITIVE_MAX_WORDS or question_focus(question).aspect is not None:
        return False
    nouns = morphology.word_nouns(question)
    also = [
        index
        for index, word in enumerate(words)
        if (stem := word.rstrip("?？.요")).endswith("도")
        and (stem.endswith(_ADDITIVE_ENDINGS) or nouns.get(word, "") == stem[:-1])
    ]
    return bool(also) and all(word.startswith(_REQUEST_STARTS) for word in words[also[-1] + 1 :])


_ADDITIVE_MAX_WORDS = 4
_ADDITIVE_ENDINGS = ("짜리도", "것도", "거도", "건도")
_REQUEST_STARTS = ("알려", "부탁", "좀", "궁금", "확인")


def _own_topic_tokens(question: str) -> list[str]:
    """Topic tokens of `question` that name a topic: a period or a number with a dependent noun ("11월 거는 언제
    들어와요?", "2차 것도") picks another occurrence of the earlier question's topic."""
    return [
        token
        for token in korean_text.topic_tokens(question)
        if not _picks_an_occurrence(token) and morphology.word_nouns(token).get(token) != morphology.DEPENDENT
    ]


def rewrite_follow_up(question: str, prior_questions: list[str]) -> str:
    """The follow-up made stand-alone by prepending the key noun phrase of the most recent earlier question
    ("하이패스 단말기가 뭔가요?" + "그럼 얼마야?" → "하이패스 단말기 얼마야?"); "" when it is not a follow-up:
    a greeting, a question with its own topic and no deixis, or no earlier question with a topic. Two or more
    aspect nouns together name a topic of their own ("결제 조건이 어떻게 되나요?"), unless they ask for a time,
    method or reason ("신청 방법은?"); one alone ("가격은?") does not. Words that only ask to do something or
    count days ("며칠 전까지 요청하면 돼요?") name no topic either."""
    question = question.strip()
    if not question or korean_text.is_greeting(question):
        return ""
    deictic = korean_text.has_deixis(question)
    tokens = korean_text.content_tokens(question)
    procedure_only = bool(tokens) and all(token.startswith(korean_text.PROCEDURE_WORDS) for token in tokens)
    if (
        not deictic
        and not procedure_only
        and not _ELLIPTICAL_RE.search(question)
        and not _asks_again_for(question)
        and (_own_topic_tokens(question) or _names_aspect_topic(question))
    ):
        return ""
    phrase = ""
    for earlier in reversed(prior_questions):
        if earlier.strip() == question:
            continue
        # An earlier question about an aspect noun alone ("저희 배송 주 몇회에요?") is about that noun when the
        # follow-up names nothing of its own ("무슨 요일이요?").
        phrase = korean_text.key_noun_phrase(earlier) or (
            "" if tokens else korean_text.key_noun_phrase(earlier, keep_aspect_nouns=True)
        )
        if phrase:
            break
    if not phrase or phrase in question:
        return ""
    remainder = korean_text.without_deixis(question) if deictic else question
    # "그때 할인율이 몇 프로였죠?" after "여름에 … 특가 했었죠?" asks about that summer: the period goes along, so the
    # evidence of then is read rather than today's.
    period = period_phrase(earlier) if _BACK_IN_TIME_RE.search(question) and not period_phrase(question) else ""
    if period in phrase:
        period = ""
    return " ".join(part for part in (period, phrase, remainder) if part)
