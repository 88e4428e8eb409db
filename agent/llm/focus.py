"""What a question asks: its aspect (a date, an amount, a procedure …) and its subject (반품, 정산, a product).

The local answerer answers with the evidence sentence that holds the asked aspect's value for the asked subject,
so both are read from the question in code:

- **aspect** — from question words and aspect nouns: `언제 / 며칠 / -일` → a date, `몇 시` → a time, `기간 / 기한 /
  언제까지 / 며칠 안에` → a duration or deadline, `얼마 / 가격 / 단가 / -비` → an amount, `할인율 / 몇 % / -율` → a
  rate, `어떻게 하 / 방법 / 절차` → a procedure, `어디 / 위치 / 주소` → a place, `연락처 / 번호` → a contact,
  `몇 개 / 수량` → a quantity, `되나요 / 가능` → a condition; none of these → no particular aspect.
- **subject** — the question's content words without the aspect words, question words, filler (`지금`, `진행 중인`,
  `저희`, `좀`) and action nouns (`접수`, `신청`: how something is done, not what); a compound ending in an aspect
  syllable gives its stem (`정산일` → 정산, `할인율` → 할인).

`VALUE_PATTERNS` say what an answering sentence must hold for each aspect. They recognise the value's shape only;
parsing values for verification belongs to the verification package (its date/time/duration parsers are the
ones to use once merged).
"""

import re
from dataclasses import dataclass

from agent.llm import korean_text

DATE, TIME, DURATION, AMOUNT, RATE, QUANTITY = "date", "time", "duration", "amount", "rate", "quantity"
PROCEDURE, PLACE, CONTACT, CONDITION, PARTY = "procedure", "place", "contact", "condition", "party"

_DAY = r"\d{1,2}\s*일"
VALUE_PATTERNS = {
    DATE: re.compile(
        rf"20\d\d-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}\s*월(\s*\d{{1,2}}\s*일)?|{_DAY}|[월화수목금토일]요일|"
        r"익월|다음 달|말일|월말|매월|매주|평일|주말|공휴일|영업일|전날|당일|속한 달|당월|전월"
    ),
    TIME: re.compile(r"(오전|오후|새벽|저녁)\s*\d{1,2}\s*시|\d{1,2}\s*시(\s*\d{1,2}\s*분)?|\d{1,2}:\d{2}|당일|익일"),
    DURATION: re.compile(
        r"\d+\s*(영업일|일|시간|개월|주|년|분)\s*(이내|안에|안|전|후|동안|이상|간|씩)|\d+\s*(영업일|시간|개월|주일)|"
        r"\d{1,2}\s*월\s*\d{1,2}\s*일\s*까지|\d{1,2}\s*일\s*까지|(오전|오후)\s*\d{1,2}\s*시\s*까지|"
        r"20\d\d-\d{1,2}-\d{1,2}\s*~|자동\s*연장"
    ),
    AMOUNT: re.compile(r"\d[\d,]*(\.\d+)?\s*(만\s*)?원|₩\s*\d|\d+\s*%|무료"),
    RATE: re.compile(r"\d+(\.\d+)?\s*(%|퍼센트|프로)"),
    QUANTITY: re.compile(r"\d[\d,]*\s*(개|박스|팔레트|세트|ea|EA|kg|톤|건|장|병|봉|도|m|cm|회|번|명)"),
    PARTY: re.compile(r"협력사|당사|고객|점포|담당|MD|팀|부담|분담|씩|대표|본인|센터"),
    PROCEDURE: re.compile(r"\[[^\]]+\]|>|하면|하시면|누르|눌러|통해|으로 신청|에서 신청|등록|제출|신청|요청|입력|순서"),
    PLACE: re.compile(r"센터|창고|물류|층|[가-힣]+(로|길)\s*\d|주소|사무실|지점|매장|[가-힣]{2,}(시|구|군)\b|에서"),
    CONTACT: re.compile(r"\d{2,4}-\d{3,4}(-\d{4})?|@|이메일|메일|전화|번호|카카오톡|상담방"),
    CONDITION: re.compile(r"가능|불가|수 있|수 없|경우|면 |만 |필요|해야|됩니다|않습니다|합니다"),
}
# Values an aspect accepts: a "when" question is answered by a date, a time or a deadline.
ACCEPTED_VALUES = {
    DATE: (DATE, TIME, DURATION),
    TIME: (TIME, DURATION),
    DURATION: (DURATION, DATE, TIME),
    AMOUNT: (AMOUNT, RATE),
    RATE: (RATE,),
    QUANTITY: (QUANTITY, AMOUNT),
    PROCEDURE: (PROCEDURE,),
    PLACE: (PLACE,),
    CONTACT: (CONTACT,),
    CONDITION: (),  # whether something holds: any statement about the subject answers it
    PARTY: (PARTY,),
}

# A limit on a value rather than the value: an answer only to a question about the limit.
BOUND_WORDS = ("최대", "최소", "한도", "상한", "하한", "최고", "최저")

# (aspect, cue in the question), the first that matches wins: specific cues before broad ones.
_ASPECT_CUES = (
    (PARTY, ("누가", "누구", "어느 쪽")),
    # "…이 다르면요?", "기한을 넘기면 어떻게 되나요?": what follows, not a value
    (None, ("면요", "면 어떻게", "다르면", "넘기면", "없으면", "지나면", "쌓이면", "남으면")),
    (CONTACT, ("연락처", "전화번호", "번호 알려", "전화", "이메일", "메일 주소")),
    (RATE, ("할인율", "비율", "율은", "율이", "률은", "률이", "몇 %", "몇%", "퍼센트", "몇 프로")),
    (TIME, ("몇 시", "몇시", "마감 시간", "운영 시간")),
    (DURATION, ("기간", "기한", "언제까지", "며칠 안", "며칠 이내", "몇 일 안", "얼마나 걸", "며칠 걸", "며칠 만에",
                "몇 시간 안", "마감", "유효")),
    (TIME, ("시간",)),
    (DATE, ("언제", "며칠", "몇 일", "날짜", "일정", "요일", "주기", "지급일", "정산일", "결제일", "입고일", "배송일",
            "마감일", "발행일")),
    (QUANTITY, ("몇 개", "몇 박스", "몇개", "수량", "몇 팔레트", "몇 도", "높이", "무게", "몇 번", "몇 회", "몇 명")),
    (AMOUNT, ("얼마", "가격", "단가", "금액", "비용", "요금", "운임", "수수료", "광고비", "배송비", "택배비", "값")),
    (PLACE, ("어디", "위치", "주소", "장소", "어느 센터", "어느 창고")),
    (None, ("뭐예요", "뭔가요", "무엇인가요", "뭐야", "어떤", "무슨", "어떻게 되", "어떻게 돼")),
    (PROCEDURE, ("어떻게 알려", "어떻게 연락")),
    (None, ("알려",)),
    (CONDITION, ("되나요", "되요", "돼요", "가능", "있나요", "있어요", "할 수", "인정", "받을 수")),
    (PROCEDURE, ("어떻게 하", "어떻게 해", "어떻게 신청", "어떻게 등록", "어떻게 받", "어떻게 확인", "방법", "절차",
                 "하려면", "하나요", "해야 하나요", "순서")),
)  # fmt: skip
# Words that only say which aspect is asked, or how: never the subject.
_ASPECT_WORDS = korean_text.word_set(
    "가격 금액 비용 요금 단가 할인율 비율 수수료 기간 기한 일정 날짜 시간 마감 방법 절차 위치 장소 주소 연락처",
    "번호 전화 전화번호 여부 가능 종류 얼마 언제 몇 며칠 순서 조건 기준 내용 정보 값 주기 요일 누가 누구",
    "방식 금액은 비용은",
)
_FILLER_WORDS = korean_text.word_set(
    "지금 현재 요즘 진행 중인 저희 우리 이번 이번달 달 혹시 매달 매월 매번 보통 원래 다시 새로 제일 가장",
    "말고 대신 또 그럼 그러면 혹은 계속 자꾸 같이",
    "하는 받는 되는 있는 주는 드리는 해주는 내는",
)
# Words for a price: the aspect asked, never a subject (공급가 is not about 공급).
_PRICE_WORDS = korean_text.word_set("공급가 납품가 판매가 소비자가 매입가 할인가 정가 원가 가격표")
# How something is done, not what it is about: a procedure cue, never the subject.
_ACTION_NOUNS = korean_text.word_set("접수 신청 등록 처리 확인 요청 진행 이용 사용 조회 문의 변경 부담 운영 전송 입력")
# Endings of a verb or a conditional after a noun (`단종하려면`, `위탁이면`, `납품해야`, `끊어야`): the noun stays, and
# a word that is only a verb form (`끊어야`, `다르면`) is no subject.
_VERB_AFTER_NOUN = ("하려면", "해야", "하면요", "이면요", "되면요", "하면", "이면", "이라면", "되면", "돼야", "되나요",
                    "하나요", "해요", "돼요", "하는", "하고", "하며", "할", "한", "되는", "된")  # fmt: skip
_VERB_FORM_RE = re.compile(r"(야|려면|으면|르면|다면|면|나요|까요|어요|아요|죠|지요|세요|는지|고요|가요|나)$")
_NOUNS_LIKE_VERB_FORMS = korean_text.word_set("분야 가나 하나 요나 라면 측면 표면 전면 이면")
# A compound ending in one of these is an aspect of its stem: 정산일 → 정산, 할인율 → 할인, 배송비 → 배송.
_ASPECT_SUFFIXES = ("일", "율", "률", "비", "액", "가")
_NOUNS_NOT_SPLIT = korean_text.word_set("영업일 공휴일 요일 평일 휴일 말일 단가 원가 정가 특가 평가 추가 물가 할인가")
# One subject, several words for it: a question about 물건값 is answered by a sentence about 대금.
SUBJECT_SYNONYMS = (
    frozenset({"대금", "물건값", "물품대금", "결제", "지급", "정산", "돈", "입금", "송금"}),
    frozenset({"행사", "프로모션", "기획전", "특가"}),
    frozenset({"반품", "회수"}),
    frozenset({"발주", "주문"}),
    frozenset({"물류센터", "센터"}),
)


@dataclass(frozen=True)
class QuestionFocus:
    aspect: str | None  # one of the aspect constants, None when the question asks for no particular value
    subject: tuple[str, ...]  # content words naming what the question is about
    words: tuple[str, ...]  # every content word of the question (subject, aspect and action words)
    asks_bound: bool = False  # the question asks for a limit (최대, 최소, 한도 …)

    @property
    def accepted_values(self) -> tuple[str, ...]:
        return ACCEPTED_VALUES.get(self.aspect, ())


_NOT_SUBJECT = _ASPECT_WORDS | _PRICE_WORDS | _FILLER_WORDS | _ACTION_NOUNS


def question_focus(question: str, *, counterpart_names: tuple[str, ...] = ()) -> QuestionFocus:
    """`counterpart_names`: the room's vendor — asking "세림식품 최소 주문 금액" names who asks, not what about."""
    text = " ".join(question.split())
    for name in sorted(counterpart_names, key=len, reverse=True):
        if len(name) >= 2:
            text = text.replace(name, " ")
    aspect = next((aspect for aspect, cues in _ASPECT_CUES if any(cue in text for cue in cues)), None)
    words: list[str] = []
    subject: list[str] = []
    raw_words = korean_text.words(text)
    for index, raw in enumerate(raw_words):
        if index and raw_words[index - 1] == "몇":
            continue  # the counter of "몇 도로", "몇 개": part of the question word
        noun = _verbal_noun(raw)
        if noun is None:
            continue
        tokens = korean_text.content_tokens(noun)
        if not tokens:
            continue
        word = tokens[0]
        words.append(word)
        stem = word if word in _PRICE_WORDS else _aspect_stem(word)
        # A number with its counter (`5번`, `1차`, `10월`) qualifies the subject but is written many ways (`5회`):
        # it counts where it is found, it is not required.
        if stem in _NOT_SUBJECT or any(ch.isdigit() for ch in stem):
            continue
        if stem in korean_text.GENERIC_REFERENTS:
            continue
        subject.append(stem)
    words = list(dict.fromkeys(words))
    asks_bound = any(word in text for word in BOUND_WORDS) or "얼마까지" in text
    return QuestionFocus(
        aspect=aspect, subject=tuple(dict.fromkeys(subject)), words=tuple(words), asks_bound=asks_bound
    )


_RANGE_WORDS = korean_text.word_set("이내 안에 이상 이하 미만 초과 이후 이전 전 후")


def noun_words(text: str) -> frozenset[str]:
    """The nouns a statement is about: content words without verb forms, range words or numbers."""
    nouns = set()
    for raw in korean_text.words(text):
        noun = _verbal_noun(raw)
        tokens = korean_text.content_tokens(noun) if noun else []
        if tokens and tokens[0] not in _RANGE_WORDS and not any(ch.isdigit() for ch in tokens[0]):
            nouns.add(tokens[0])
    return frozenset(nouns)


def _verbal_noun(word: str) -> str | None:
    """The noun before a verb ending (`단종하려면` → 단종), the word itself, or None for a verb form alone."""
    for ending in _VERB_AFTER_NOUN:
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            return word[: -len(ending)]
    if "가" <= word[-1] <= "힣" and _VERB_FORM_RE.search(word) and word not in _NOUNS_LIKE_VERB_FORMS:
        return None
    return word


def _aspect_stem(word: str) -> str:
    if len(word) >= 3 and word not in _NOUNS_NOT_SPLIT and word.endswith(_ASPECT_SUFFIXES):
        return word[:-1]
    return word


def holds_value(text: str, kinds: tuple[str, ...]) -> bool:
    return any(VALUE_PATTERNS[kind].search(text) for kind in kinds)


def subject_variants(word: str) -> frozenset[str]:
    """The word and the other words this domain uses for the same subject, lower case (statements are compared
    in lower case: `POS`, `EDI`)."""
    for group in SUBJECT_SYNONYMS:
        if word in group:
            return group
    return frozenset({word.lower()})
