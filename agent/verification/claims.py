"""Completed-action claims in Korean text ("보내드렸습니다", "접수 완료", "반영되었습니다").

A claim is a finite or connective past form of an action verb, active or passive, or the action
noun with 완료. Promises, offers, questions, conditionals and negations are not claims:
"보내드리겠습니다", "보내드릴까요?", "발송 예정입니다", "발송했나요?", "발송되면", "발송되지 않았습니다".
"""

import re
from dataclasses import dataclass
from enum import StrEnum


class ActionKind(StrEnum):
    SEND = "send"
    # Saying a request was received (접수, 요청): true once an action request is recorded, before it runs.
    RECEIPT = "receipt"
    REGISTER = "register"
    PROCESS = "process"


ACTION_LABELS = {
    ActionKind.SEND: "발송",
    ActionKind.RECEIPT: "접수",
    ActionKind.REGISTER: "등록·주문",
    ActionKind.PROCESS: "처리",
}

# Sino-Korean action nouns that take 하다/되다, by kind.
_ACTION_NOUNS = {
    ActionKind.SEND: "발송 전달 송부 전송 첨부 회신 공유 배송 출고 발신 메일",
    ActionKind.RECEIPT: "접수 요청",
    ActionKind.REGISTER: "등록 신청 예약 가입 주문 발주",
    ActionKind.PROCESS: (
        "처리 반영 변경 수정 취소 환불 적용 승인 삭제 해지 정정 조치 해결 입금 지급 정산 발급 발행 "
        "업데이트 갱신 교체 교환 반품 해제 연장 확정 완료"
    ),
}
# Native verbs' completed stems (보냈, 보내 드렸 ...), by kind.
_NATIVE_PAST = {
    ActionKind.SEND: r"보냈|보내 ?드렸|보내 ?놓았|보내 ?놨|보내 ?두었|보내 ?뒀|보내졌|부쳤|넘겨 ?드렸",
    ActionKind.REGISTER: r"넣어 ?드렸|올려 ?드렸",
    ActionKind.PROCESS: r"바꿨|바꾸었|바꿔 ?드렸|고쳤|고쳐 ?드렸",
}
_NATIVE_ADNOMINAL = {
    ActionKind.SEND: r"보내 ?드린|넘겨 ?드린",
    ActionKind.REGISTER: r"넣어 ?드린|올려 ?드린",
    ActionKind.PROCESS: r"바꿔 ?드린|고쳐 ?드린",
}

# Past stems after an action noun: 했, 하였, 해 드렸, 드렸, 되었, 됐, 되어 있, 되셨 (passive honorific),
# 해 놓았 ... — never 셨 on its own (보내주셨습니다 is the other party's action).
_NOUN_PAST = r"(?:했|하였|해 ?드렸|하여 ?드렸|드렸|되었|됐|되어 ?있|돼 ?있|되셨|해 ?놓았|해 ?놨|해 ?두었|해 ?뒀|시켰)"
# Endings that make a past stem a statement: 습니다, 어요, 다 (not 다면), connectives 고, 는데, 으니 ...
# Questions (나요, 습니까, 는지), conditionals (으면, 다면) and speculation (을) are absent on purpose.
_STATEMENT_ENDING = r"(?:습니다|어요|어(?![가-힣])|고|으며|으니|으므로|는데|지만|음|다(?!면)|던|으나|기에|기 때문)"
# 완료 is a claim when it ends the clause or is said to have happened, not in 완료 예정, 완료되면, 완료 후.
_COMPLETE = (
    r"완료(?:"
    rf" ?(?:처리 ?)?{_NOUN_PAST}{_STATEMENT_ENDING}"
    r"|(?:입니다|이에요|예요|였습니다|이었습니다|됨|된 ?상태| 상태)"
    r"|(?= *(?:[.!,)\]~]|$)))"
)
_PARTICLE = r"(?: ?(?:을|를|이|가|은|는|도))?"
# 드린 + noun is a claim ("보내드린 자료"), but not "보내드린 후" (a plan: after sending).
_ADNOMINAL_END = r"(?! ?(?:후|뒤|다음|이후|직후|대로|뒤에))"


def _kind_pattern(kind: ActionKind) -> re.Pattern:
    """One alternation per kind in which every branch starts with a literal syllable, so the regex engine
    jumps to the few places where a claim can start instead of trying every position. Each noun carries
    its own three endings; this matches as "(noun)(endings)" would, since no noun of a kind begins
    another one and no noun begins like a native verb (a test checks both)."""
    nouns = sorted(_ACTION_NOUNS[kind].split(), key=len, reverse=True)
    noun_endings = (
        rf"(?:{_PARTICLE} ?(?:처리 ?)?{_NOUN_PAST}{_STATEMENT_ENDING}"
        rf"|{_PARTICLE} ?{_COMPLETE}"
        rf"| ?(?:해 ?)?드린{_ADNOMINAL_END})"
    )
    # 미발송, 미처리 are the opposite of a claim: the lookbehind follows the noun's first syllable.
    branches = [f"{noun[0]}(?<!미{noun[0]}){noun[1:]}{noun_endings}" for noun in nouns]
    # Receipts have no native verb: 받았습니다 states far more often what the vendor received than an action.
    branches += [f"{stem}{_STATEMENT_ENDING}" for stem in _NATIVE_PAST.get(kind, "").split("|") if stem]
    branches += [f"{stem}{_ADNOMINAL_END}" for stem in _NATIVE_ADNOMINAL.get(kind, "").split("|") if stem]
    return re.compile("|".join(branches), re.MULTILINE)


_PATTERNS = {kind: _kind_pattern(kind) for kind in ActionKind}


@dataclass(frozen=True, slots=True)
class ActionClaim:
    kind: ActionKind
    start: int
    end: int
    text: str


def find_action_claims(text: str) -> list[ActionClaim]:
    """Every completed-action claim in ``text``: leftmost-longest across kinds, non-overlapping."""
    candidates = sorted(
        (match.start(), -(match.end() - match.start()), kind)
        for kind, pattern in _PATTERNS.items()
        for match in pattern.finditer(text)
    )
    claims = []
    taken_until = 0
    for start, negative_length, kind in candidates:
        if start >= taken_until:
            end = start - negative_length
            claims.append(ActionClaim(kind=kind, start=start, end=end, text=text[start:end]))
            taken_until = end
    return claims
