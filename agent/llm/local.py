"""The embedded default provider: a deterministic answerer that can only repeat the evidence.

In the tool loop it first asks for every offered ``search_*`` tool with the question; once tool results are in,
it answers with the few evidence sentences most relevant to the question, in their original order, inside a
fixed polite frame that holds no number, brand or promise. Nothing relevant → "" (the pipeline then gives the
guidance answer). It never writes a value of its own, so it cannot invent one.
"""

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings

from agent.llm import korean_text
from agent.llm.base import PURPOSE_JUDGE, PURPOSE_REWRITE, LlmReply, ToolCallRequest, ToolSpec
from agent.llm.prompts import (
    FINALIZE_IF_EMPTY,
    NO_REWRITE,
    OTHER_VENDOR_MASK,
    SYSTEM_CONFIRMATION_TAG,
    flagged_texts_in,
    latest_question,
    question_text,
    rewrite_request_parse,
    search_query_in,
)
from agent.verification.sentences import split_sentences

MODEL_NAME = "local-extractive"
SEARCH_TOOL_PREFIX = "search_"
ANSWER_OPENING = "문의하신 내용 안내드립니다."
ANSWER_CLOSING = "참고 부탁드립니다."
JUDGE_REPLY = json.dumps({"verdict": "unsupported", "quote": ""})

# "라벨: 값" lines in tool results: metadata lines are skipped, answer lines keep their value.
_LABEL_RE = re.compile(r"^\s*(?P<label>[가-힣A-Za-z][가-힣A-Za-z ]{0,9}?)\s*[:：]\s*(?P<value>.*)$")
_METADATA_LABELS = korean_text.word_set(
    "질문 q 출처 제목 분류 카테고리 링크 url 문서 근거 참고 참조 작성일 수정일 등록일 점수 유사도 score",
    "source 워크스페이스 workspace 유형 id 태그",
)
_ANSWER_LABELS = korean_text.word_set("답변 답 a 내용 설명 본문 요약 안내")
# Reference markers that open a line ("[1] ", "[FAQ] ") are not part of the sentence.
_LEADING_TAGS_RE = re.compile(r"^(?:\[[^\]\n]{1,20}\]\s*)+")
_URL_RE = re.compile(r"^(?:https?://|www\.)\S+$")
# What the tools add around evidence (agent/tools): no results, refusals, errors, masking notes.
_BOILERPLATE_PREFIXES = (SYSTEM_CONFIRMATION_TAG, "[도구 거부]", "[도구 오류]", "검색 결과가 없습니다")
_PARENTHESISED_RE = re.compile(r"^\(.*\)$")
_VALUE_SEPARATOR = " · "
_PASSAGE_BREAK_RE = re.compile(r"\n[ \t]*\n")
_SENTENCE_END_RE = re.compile(r"(다|요|죠|니다|음|함|임)[.!…]?$|[.!…]$")
_MIN_SENTENCE_CHARS = 4
# Keys of JSON tool results that hold metadata rather than evidence text.
_JSON_METADATA_KEYS = korean_text.word_set(
    "reference url source source_kind workspace score mask_count id kind title status tool error"
)
# What a question word asks for, and what in a sentence answers it.
_ASPECT_CUES = {
    "얼마": ("원", "가격", "금액", "비용", "단가", "요금", "%"),
    "언제": ("일", "월", "시", "기간", "까지", "부터", "날짜", "주기"),
    "어디": ("에서", "위치", "곳", "센터", "주소", "매장"),
    "어떻게": ("방법", "절차", "통해", "하시면", "순서"),
    "방법": ("방법", "절차", "통해", "하시면", "순서"),
    "왜": ("때문", "이유", "위해"),
}
_TOKEN_WEIGHT = 0.6
_BIGRAM_WEIGHT = 0.4
_ASPECT_BONUS = 0.1


@dataclass(frozen=True)
class _Candidate:
    text: str
    position: int
    score: float


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
    """The framed answer from the evidence sentences most relevant to the question, or "" if none is."""
    start = max(latest_question(messages)[0], 0)
    results = [str(message.get("content") or "") for message in messages[start:] if message.get("role") == "tool"]
    chosen = relevant_sentences(question_of(messages), results, excluded=flagged_texts_in(messages[start:]))
    if not chosen:
        return ""
    return "\n".join([ANSWER_OPENING, *chosen, ANSWER_CLOSING])


def relevant_sentences(question: str, tool_results: list[str], *, excluded: set[str] = frozenset()) -> list[str]:
    """Up to LOCAL_ANSWER_MAX_SENTENCES evidence sentences scoring at least LOCAL_ANSWER_MIN_SCORE against the
    question, best first when choosing, returned in their original order. When the question names a topic
    (not just an aspect such as 가격 or 방법), only passages that mention it are used: "단가: 30,000원" of
    another product is not an answer to "하이패스 단말기 단가"."""
    question_tokens = list(dict.fromkeys(korean_text.content_tokens(question)))
    if not question_tokens:
        return []
    topic = [token.lower() for token in korean_text.topic_tokens(question)]
    question_bigrams = korean_text.char_bigrams(question_tokens)
    cues = [cue for word, words_cues in _ASPECT_CUES.items() if word in question for cue in words_cues]
    floor = settings.LOCAL_ANSWER_MIN_SCORE
    candidates: list[_Candidate] = []
    seen: set[str] = set()
    for passage, sentences in _evidence_passages(tool_results):
        if topic and not any(token in passage for token in topic):
            continue
        for sentence in sentences:
            key = " ".join(sentence.split())
            if key in seen or any(text and text in sentence for text in excluded):
                continue
            seen.add(key)
            score = _score(sentence, question_tokens, question_bigrams, cues)
            if score >= floor:
                candidates.append(_Candidate(sentence, len(seen), score))
    best = sorted(candidates, key=lambda candidate: (-candidate.score, candidate.position))
    best = best[: settings.LOCAL_ANSWER_MAX_SENTENCES]
    return [candidate.text for candidate in sorted(best, key=lambda candidate: candidate.position)]


def _score(sentence: str, question_tokens: list[str], question_bigrams: set[str], cues: list[str]) -> float:
    compact = _compact(sentence)
    sentence_tokens = set(korean_text.content_tokens(sentence))
    matched = sum(1 for token in question_tokens if token in sentence_tokens or token.lower() in compact)
    token_share = matched / len(question_tokens)
    if not matched:
        return 0.0
    sentence_bigrams = {compact[index : index + 2] for index in range(len(compact) - 1)}
    bigram_share = len(question_bigrams & sentence_bigrams) / len(question_bigrams) if question_bigrams else 0.0
    bonus = _ASPECT_BONUS if cues and any(cue in sentence for cue in cues) else 0.0
    return _TOKEN_WEIGHT * token_share + _BIGRAM_WEIGHT * bigram_share + bonus


def _compact(text: str) -> str:
    return "".join(text.split()).lower()


def _evidence_passages(tool_results: list[str]) -> list[tuple[str, list[str]]]:
    """Each evidence item of the tool results (the tools separate items by a blank line) as its whole text,
    compacted (the context a sentence is read in), and its answer sentences."""
    passages = []
    for result in tool_results:
        for passage in _PASSAGE_BREAK_RE.split(_result_text(result)):
            sentences = [
                sentence.text
                for line in _evidence_lines(passage)
                for sentence in split_sentences(line)
                if _is_answer_material(sentence.text)
            ]
            if sentences:
                passages.append((_compact(passage), sentences))
    return passages


def _evidence_lines(result: str) -> list[str]:
    """The statements of a tool result: tool boilerplate, headings, metadata and URLs dropped, "답변: …"
    reduced to its answer, reference tags removed, "a: x · b: y" value lists split into facts. JSON results
    contribute their text fields."""
    lines = []
    for raw_line in _result_text(result).splitlines():
        line = raw_line.strip()
        if not line or line.startswith(_BOILERPLATE_PREFIXES) or _PARENTHESISED_RE.match(line):
            continue
        tagged = _LEADING_TAGS_RE.match(line)
        if tagged and not line.startswith(OTHER_VENDOR_MASK):
            line = line[tagged.end() :].strip()
            if not _SENTENCE_END_RE.search(line):
                continue  # "[1] (FAQ · 하이패스 단말기 구매)", "[계약] 2026 납품 계약": a heading
        for piece in line.split(_VALUE_SEPARATOR):
            fact = _without_label(piece.strip())
            if fact and not _URL_RE.match(fact):
                lines.append(fact)
    return lines


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
    if not stripped.startswith(("{", "[")):
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


def _is_answer_material(sentence: str) -> bool:
    # A sentence about another vendor answers nothing for this one, even with the name masked.
    return len(sentence) >= _MIN_SENTENCE_CHARS and OTHER_VENDOR_MASK not in sentence


# --- follow-up rewriting (seed 001 5.2, deterministic) ---


def _names_aspect_topic(question: str) -> bool:
    tokens = korean_text.content_tokens(question)
    asks_how_or_when = any(marker in question for marker in korean_text.TIME_METHOD_REASON_MARKERS)
    return len(tokens) >= 2 and not asks_how_or_when


def _rewrite(messages: list[Mapping]) -> str:
    question, prior_questions = rewrite_request_parse(messages)
    rewritten = rewrite_follow_up(question, prior_questions)
    return rewritten or NO_REWRITE


def rewrite_follow_up(question: str, prior_questions: list[str]) -> str:
    """The follow-up made stand-alone by prepending the key noun phrase of the most recent earlier question
    ("하이패스 단말기가 뭔가요?" + "그럼 얼마야?" → "하이패스 단말기 얼마야?"); "" when it is not a follow-up:
    a greeting, a question with its own topic and no deixis, or no earlier question with a topic. Two or more
    aspect nouns together name a topic of their own ("결제 조건이 어떻게 되나요?"), unless they ask for a time,
    method or reason ("신청 방법은?"); one alone ("가격은?") does not."""
    question = question.strip()
    if not question or korean_text.is_greeting(question):
        return ""
    deictic = korean_text.has_deixis(question)
    if not deictic and (korean_text.topic_tokens(question) or _names_aspect_topic(question)):
        return ""
    phrase = ""
    for earlier in reversed(prior_questions):
        if earlier.strip() == question:
            continue
        phrase = korean_text.key_noun_phrase(earlier)
        if phrase:
            break
    if not phrase or phrase in question:
        return ""
    remainder = korean_text.without_deixis(question) if deictic else question
    return f"{phrase} {remainder}".strip()
