"""Light, deterministic Korean word handling for the local answerer and the follow-up rewrite rule.

Rules, no analyser: words are runs of Hangul, Latin letters and digits; one trailing particle is stripped when a
stem of two syllables remains and the word does not end with a noun whose last syllable only looks like a particle
(단가, 재고, 문의). The one thing the local answerer asks a morphological analyser is which question words are
no nouns (`morphology.py`).
"""

import re
from functools import lru_cache

from agent.verification.korean import is_particle

# A decimal point stands inside a word: "1.8L" is one size, not the words 1 and 8L.
_WORD_RE = re.compile(r"(?:[0-9A-Za-z가-힣]|(?<=\d)\.(?=\d))+")
_LATIN_OR_DIGIT_RE = re.compile(r"[0-9A-Za-z]")
_MAX_PARTICLE_LENGTH = 3


def word_set(*lines: str) -> frozenset[str]:
    return frozenset(" ".join(lines).split())


# Nouns whose last syllable is also a particle: never stripped, also at the end of a compound (납품단가).
_NOUNS_ENDING_LIKE_PARTICLE = tuple(
    word_set(
        "단가 원가 정가 판매가 납품가 공급가 소비자가 매입가 입고가 출고가 도매가 소매가 특가 할인가 시가 물가 평가",
        "추가 재고 창고 광고 참고 보고 사고 결과 효과 성과 정도 한도 속도 온도 제도 용도 빈도 필요 중요 개요 문의",
        "출고 입고 반입고 해상도 신선도 정확도 만족도 선호도 인지도 숙성도 난이도 중요도",
        "회의 주의 정의 동의 합의 경로 통로 분야 차이 거래처 구매처 판매처 업체 매체 전체 단체 지역 계약서 청구서",
    )
)

# Interrogatives: what a question asks, never its topic.
QUESTION_WORDS = word_set(
    "뭐 뭐뭐 뭔 뭘 무엇 무슨 어떤 어떻게 어디 어디서 어디에 어디로 언제 왜 얼마 얼마나 몇 어느 누구 뭐가 뭐를 무엇이"
)
# Words that point back into the conversation (seed 001 5.2 plus their usual spoken forms).
DEICTIC_WORDS = word_set(
    "그럼 그러면 그거 그건 그게 그걸 그것 그곳 거기 저거 저건 이거 이건 이게",
    "거기서 거기에 거기는 그쪽 그쪽은 그쪽에서",
    "아까 이어서 해당 방금 앞서 위",
    "그때 그날 당시",
)
# Who asks about their own terms ("저희 결제는 …", "우리 배송"): never what a question is about.
OWN_WORDS = word_set("저희 우리")
# Determiners that make the next generic noun deictic ("그 제품", "해당 상품").
DEICTIC_DETERMINERS = word_set("그 저 이 해당 위")
# Determiners that point back whatever noun follows ("그 할인 마지막 날"); `저` and `이` also mean "I" and "this".
BACK_POINTING_DETERMINERS = word_set("그 해당")
GENERIC_REFERENTS = word_set("제품 상품 물건 건 거 것 곳 회사 업체 내용 부분 서비스 품목 모델 분")
# Seed 001 5.2: questions about time, method or reason are follow-up candidates.
TIME_METHOD_REASON_MARKERS = ("언제", "기간", "왜", "방법", "절차", "신청")
# A request to do something (`요청하면`, `신청해야`, `접수는`) and a count of days (`며칠`) name no topic of their
# own: "며칠 전까지 요청하면 돼요?" asks about what the conversation was about.
PROCEDURE_WORDS = ("요청", "신청", "접수", "제출", "등록", "처리", "진행", "며칠", "몇일")
# Aspects a follow-up asks about; a question with only these nouns still needs the topic from history.
ASPECT_NOUNS = word_set(
    "가격 금액 비용 요금 단가 할인 할인율 수수료 배송비 배송 배달 발송 재고 수량 기간 기한 일정 날짜 시간 마감",
    "방법 절차 신청 조건 위치 장소 주소 연락처 종류 차이 사양 구매 구입 결제 정산 반품 교환 환불 취소",
    "최소 최대 주문 발주 입고 출고 가능 여부 계약 견적 납기 혜택",
    "납품가 공급가 판매가 소비자가 매입가 할인가 특가 정가 원가 가격표",
)
_STOP_WORDS = word_set(
    "좀 혹시 그리고 그래서 또 또는 그냥 정말 진짜 대해 대한 대해서 관련 관해 관하여 같은 다른 모든 각",
    "알려 알려줘 알려주세요 알려주실 말해 말씀 부탁 부탁드립니다 부탁드려요 궁금 궁금해요 궁금합니다",
    "문의 문의드립니다 질문 답변 확인 안내 있나요 있어요 있습니까 있어 없나요 되나요 돼요 되요 될까요 인가요",
    "입니다 이에요 예요 하나요 해요 할까요 합니까 가요 나요 거예요 건가요 수 설명 소개 정보 조회",
)
GREETING_WORDS = word_set(
    "안녕 안녕하세요 안녕하십니까 감사 감사합니다 감사해요 고마워 고마워요 고맙습니다 네 넵 넹 예 응 ok",
    "알겠습니다 알겠어요 알겠어 확인했습니다 수고하세요 수고하셨습니다 좋아요 좋습니다",
)
# Endings of verbs and adjectives in questions and requests (뭔가요, 알려줘, 사나요, 가능해).
_PREDICATE_END_RE = re.compile(
    r"(요|까|니다|니까|죠|줘|세요|해|했|냐|래|나|니|다|돼|봐|되나|는지|을지|인지|는데|던데|ㄹ래)$"
)


def words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


@lru_cache(maxsize=16384)
def strip_particle(word: str) -> str:
    """``word`` without one trailing particle, when that leaves a noun-like stem (see the module doc)."""
    if not word or not ("가" <= word[-1] <= "힣"):
        return word
    if word.endswith(_NOUNS_ENDING_LIKE_PARTICLE):
        return word
    for length in range(min(_MAX_PARTICLE_LENGTH, len(word) - 1), 0, -1):
        stem, particle = word[:-length], word[-length:]
        if is_particle(particle) and len(stem) >= (2 if length == 1 else 1):
            return stem
    return word


def is_predicate(word: str) -> bool:
    """Whether ``word`` (as written) looks like a verb or adjective form rather than a noun."""
    return len(word) >= 2 and bool(_PREDICATE_END_RE.search(word)) and not _is_latin_or_digit_word(word)


def _is_latin_or_digit_word(word: str) -> bool:
    return _LATIN_OR_DIGIT_RE.search(word) is not None


def _is_meaningful(word: str, stem: str) -> bool:
    if stem in _STOP_WORDS or word in _STOP_WORDS or stem in QUESTION_WORDS or stem in DEICTIC_WORDS:
        return False
    if stem in GREETING_WORDS:
        return False
    if _is_latin_or_digit_word(stem):
        return True
    return len(stem) >= 2 and not is_predicate(word)


def content_tokens(text: str) -> list[str]:
    """Noun-like words of ``text`` with their particle stripped, in order: what a sentence is about."""
    tokens = []
    for word in words(text):
        stem = strip_particle(word)
        if _is_meaningful(word, stem):
            tokens.append(stem)
    return tokens


def topic_tokens(text: str) -> list[str]:
    """Content tokens that name a topic of their own, not just an aspect of one (가격, 방법, 배송 …)."""
    return [token for token in content_tokens(text) if token not in ASPECT_NOUNS and token not in GENERIC_REFERENTS]


def char_bigrams(tokens: list[str]) -> set[str]:
    """Character bigrams inside each token (a one-character token counts as itself)."""
    grams = set()
    for token in tokens:
        folded = token.lower()
        if len(folded) == 1:
            grams.add(folded)
        grams.update(folded[index : index + 2] for index in range(len(folded) - 1))
    return grams


def has_deixis(text: str) -> bool:
    tokens = words(text)
    for index, word in enumerate(tokens):
        if word in DEICTIC_WORDS or strip_particle(word) in DEICTIC_WORDS:
            return True
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if word in DEICTIC_DETERMINERS and strip_particle(following) in GENERIC_REFERENTS:
            return True
        if word in BACK_POINTING_DETERMINERS and following:
            return True
    return False


def without_deixis(text: str) -> str:
    """``text`` with its deictic words removed ("그럼 얼마야?" → "얼마야?", "그 제품은 언제 와?" → "언제 와?")."""
    pieces = re.split(r"(\s+)", text.strip())
    kept: list[str] = []
    skip_next_referent = False
    for piece in pieces:
        if not piece or piece.isspace():
            continue
        core = "".join(words(piece))
        stem = strip_particle(core)
        if skip_next_referent:
            skip_next_referent = False
            if stem in GENERIC_REFERENTS:
                continue
        if core in DEICTIC_WORDS or stem in DEICTIC_WORDS:
            skip_next_referent = core in DEICTIC_DETERMINERS
            continue
        if core in DEICTIC_DETERMINERS:
            skip_next_referent = True
            continue
        kept.append(piece)
    return " ".join(kept)


def is_greeting(text: str) -> bool:
    """Greetings and acknowledgements only ("안녕", "네 감사합니다", "알겠습니다~")."""
    found = [word.lower() for word in words(text)]
    return bool(found) and all(word in GREETING_WORDS or strip_particle(word) in GREETING_WORDS for word in found)


def key_noun_phrase(text: str, *, keep_aspect_nouns: bool = False) -> str:
    """The longest run of consecutive noun-like words ending in a topic noun, particles stripped and trailing
    aspect nouns dropped ("하이패스 단말기 가격이 뭔가요?" → "하이패스 단말기"), or kept (`keep_aspect_nouns`: "저희
    배송 주 몇회에요?" → "배송"); "" when there is none. Who asks (저희, 우리) is never part of it."""
    best: list[str] = []
    run: list[str] = []
    for word in [*words(text), ""]:
        stem = strip_particle(word)
        if word and stem in OWN_WORDS:
            continue
        if word and _is_meaningful(word, stem):
            run.append(stem)
            # A particle ends the noun phrase: "단말기가 뭔가요" and "대금은 언제" stop after the noun.
            if stem != word and not _is_latin_or_digit_word(word):
                candidate, run = run, []
            else:
                continue
        else:
            candidate, run = run, []
        # The aspect asked last time (가격, 납기 …) is not the topic; the follow-up brings its own. A period alone
        # names none ("11월분 정산 언제 들어와요?" is about the 정산): the aspect noun stays after it.
        whole = candidate
        while candidate and (
            (candidate[-1] in ASPECT_NOUNS and not keep_aspect_nouns) or candidate[-1] in GENERIC_REFERENTS
        ):
            candidate = candidate[:-1]
        if candidate and all(any(ch.isdigit() for ch in word) for word in candidate):
            candidate = whole
            while candidate and candidate[-1] in GENERIC_REFERENTS:
                candidate = candidate[:-1]
        if len(candidate) > len(best):
            best = candidate
    return " ".join(best)


# ㅐ/ㅔ and ㅒ/ㅖ sound alike and are typed one for the other, above all in loanwords (`패널티` for 페널티, `매뉴얼`
# for 메뉴얼): each syllable with ㅐ or ㅒ mapped to the same syllable with ㅔ or ㅖ.
_SYLLABLE_BASE, _MEDIALS, _FINALS = 0xAC00, 21, 28
_AE_TO_E = {1: 5, 3: 7}
_VOWEL_FOLD = {
    _SYLLABLE_BASE + (initial * _MEDIALS + medial) * _FINALS + final: _SYLLABLE_BASE
    + (initial * _MEDIALS + _AE_TO_E[medial]) * _FINALS
    + final
    for initial in range(19)
    for medial in _AE_TO_E
    for final in range(_FINALS)
}


def vowel_folded(text: str) -> str:
    """`text` with ㅐ written as ㅔ and ㅒ as ㅖ, so that the two spellings of a word compare equal."""
    return text.translate(_VOWEL_FOLD)


_PARTICLE_FORMS = {"이": ("이", "가"), "가": ("이", "가"), "은": ("은", "는"), "는": ("은", "는")}


def particle_after(word: str, particle: str) -> str:
    """`particle` (이/가, 은/는) in the form `word` takes: after a final consonant 이 or 은 (대한물산이), else 가 or
    는 (가온상사가); a word that does not end in a Hangul syllable takes the vowel form."""
    last = word[-1:]
    closed = "가" <= last <= "힣" and (ord(last) - _SYLLABLE_BASE) % _FINALS != 0
    return _PARTICLE_FORMS[particle][0 if closed else 1]
