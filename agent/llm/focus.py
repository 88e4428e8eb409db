"""What a question asks: its aspect (a date, an amount, a procedure …) and its subject (반품, 정산, a product).

The local answerer answers with the evidence sentence that holds the asked aspect's value for the asked subject,
so both are read from the question in code:

- **aspect** — from question words and aspect nouns: `언제 / 며칠 / -일` → a date, `몇 시` → a time, `기간 / 기한 /
  언제까지 / 며칠 안에` → a duration or deadline, `얼마 / 가격 / 단가 / -비` → an amount, `할인율 / 몇 % / -율` → a
  rate, `어떻게 하 / 방법 / 절차` → a procedure, `어디 / 위치 / 주소` → a place, `연락처 / 번호` → a contact,
  `몇 개 / 수량` (and `얼마` with `무게 / 높이 / 온도`) → a quantity, `규격 / 크기` → a size, `얼마나 자주 / 얼마마다 /
  주기는` → a frequency, `되나요 / 가능` → a condition; none of these → no particular aspect.
- **subject** — the question's content words without the aspect words, question words, filler (`지금`, `진행 중인`,
  `저희`, `좀`) and action nouns (`접수`, `신청`: how something is done, not what); a compound ending in an aspect
  syllable gives its stem (`정산일` → 정산, `할인율` → 할인).

`VALUE_PATTERNS` say what an answering sentence must hold for each aspect. They recognise the value's shape only;
parsing values for verification belongs to the verification package (its date/time/duration parsers are the
ones to use once merged).
"""

import itertools
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from agent.knowledge.synonyms import action_noun, spoken_forms_written
from agent.llm import korean_text, morphology
from agent.llm.prompts import OTHER_PRODUCT_MASK, OTHER_VENDOR_MASK
from agent.verification.korean import is_particle

DATE, TIME, DURATION, AMOUNT, RATE, QUANTITY = "date", "time", "duration", "amount", "rate", "quantity"
PROCEDURE, PLACE, CONTACT, CONDITION, PARTY = "procedure", "place", "contact", "condition", "party"
MEASURE = "measure"  # "얼마나 남아야": some measure — a share, an amount, a count or a duration
SIZE = "size"  # "규격 / 크기": dimensions, a weight or a volume
FREQUENCY = "frequency"  # "얼마나 자주 / 얼마마다": how often — 분기마다, 주 3회, 매월
YES_NO = "yes_no"  # what answers a yes/no question: 없습니다, 불가, 수 있습니다
REASON = "reason"  # "왜 늦게 들어왔죠?": a cause — 때문, 인해, "승인이 늦어 …"

_DAY = r"\d{1,2}\s*일"
VALUE_PATTERNS = {
    DATE: re.compile(
        rf"20\d\d-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}\s*월(\s*\d{{1,2}}\s*일)?|{_DAY}|[월화수목금토일]요일|"
        r"익월|다음 달|말일|월말|매월|매주|평일|주말|공휴일|영업일|전날|당일|속한 달|당월|전월|"
        r"[월화수목금토일]\s*[·,/]\s*[월화수목금토일]|주\s*\d\s*회|"
        # a start relative to an event: "행사 종료 후부터", "승인 다음 날부터"
        r"(후|이후|다음 날|다음날|당일)부터"
    ),
    TIME: re.compile(r"(오전|오후|새벽|저녁)\s*\d{1,2}\s*시|\d{1,2}\s*시(\s*\d{1,2}\s*분)?|\d{1,2}:\d{2}|당일|익일"),
    DURATION: re.compile(
        r"\d+\s*(영업일|일|시간|개월|주|년|분)\s*(이내|안에|안|전|후|뒤|동안|이상|간|씩|마다|가량|정도|쯤|내외)|\d+\s*(영업일|시간|개월|주일|주)|"
        r"(?<!\d)\d{1,2}\s*년(?!\s*\d)|"  # "유효 기간은 1년": a number of years, not a year (2026년)
        r"\d{1,2}\s*월\s*\d{1,2}\s*일\s*까지|\d{1,2}\s*일\s*까지|(오전|오후)\s*\d{1,2}\s*시\s*까지|"
        r"20\d\d-\d{1,2}-\d{1,2}\s*~|자동\s*연장"
    ),
    AMOUNT: re.compile(r"\d[\d,]*(\.\d+)?\s*(억\s*)?(\d[\d,]*\s*)?(천만|천|만)?\s*원|₩\s*\d|\d+\s*%|무료"),
    RATE: re.compile(r"\d+(\.\d+)?\s*(%|퍼센트|프로)"),
    # papers are counted by 장, 부 (copies) or 매 (sheets): "거래명세서 몇 장" is answered by "2부"
    QUANTITY: re.compile(r"\d[\d,]*\s*(개|박스|팔레트|세트|ea|EA|kg|톤|건|장|부|매|병|봉|도|m|cm|회|번|명)"),
    FREQUENCY: re.compile(
        r"[가-힣\d]+마다|매일|매주|매월|매달|매년|반기|분기|[연월주일]\s*\d+\s*회|\d+\s*(일|주|개월|년)에\s*(한|\d+)\s*번"
    ),
    SIZE: re.compile(r"\d+(\.\d+)?\s*[×xX*]\s*\d+|\d+(\.\d+)?\s*(mm|cm|m|kg|g|L|ml|ℓ|톤|인치)(?![A-Za-z])"),
    PARTY: re.compile(r"협력사|당사|고객|점포|담당|MD|팀|부담|분담|씩|대표|본인|센터"),
    PROCEDURE: re.compile(
        r"\[[^\]]+\]|>|하면|하시면|누르|눌러|통해|으로 신청|에서 신청|등록|제출|신청|요청|입력|순서|승인|"
        r"해야|하세요|주세요|받아야|"
        # the means something is done by: "대금은 계좌 이체로만 지급합니다"
        r"(으로|로)만|(으로|로) (지급|결제|입금|송금|납품|발송|배송|제출|신청|접수)|이체|어음|현금 결제"
    ),
    PLACE: re.compile(
        r"센터|창고|물류|층|[가-힣]+(로|길)\s*\d|주소|사무실|지점|매장|[가-힣]{2,}(시|구|군)\b|에서|"
        # where something is entered: a screen or a form ("입고 예약에 함께 입력", "[지급 계좌]에")
        r"[가-힣\]]에 (함께 |같이 )?(입력|등록|제출|기재|첨부|업로드)|\[[^\]]+\]에"
    ),
    CONTACT: re.compile(r"\d{2,4}-\d{3,4}(-\d{4})?|@|이메일|메일|전화|번호|카카오톡|상담방"),
    CONDITION: re.compile(r"가능|불가|수 있|수 없|경우|면 |만 |필요|해야|됩니다|않습니다|합니다"),
    YES_NO: re.compile(r"없습니다|없으며|않습니다|않으며|불가|가능|수 있|수 없"),
    REASON: re.compile(r"때문|인해|이유|원인|탓|늦어|지연|[가-힣](어서|아서|여서|해서|돼서|되어|져서)\s"),
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
    MEASURE: (RATE, AMOUNT, QUANTITY, DURATION),
    SIZE: (SIZE,),
    FREQUENCY: (FREQUENCY, DURATION, DATE),
    REASON: (REASON,),
}

# A limit on a value rather than the value: an answer only to a question about the limit.
BOUND_WORDS = ("최대", "최소", "한도", "상한", "하한", "최고", "최저")
# Subject words a statement need not name (they still rank): what the sources state without naming.
_WORDS_NOT_REQUIRED = korean_text.word_set(
    # `최소 몇 픽셀`, `최대 얼마까지`: said before the value asked, they say it is a bound, which a statement may
    # state by `이상` alone; a noun naming the bound (`한도`, `상한`) is what is asked about
    "최대 최소",
    # the paper a value is written on (`계약서에 얼마로`, `단가표를 잃어버려서`, `주문서 금액`): where the asker saw it
    "계약서 계약상 계약서상 단가표 견적서 주문서",
    # the listing a screen shows (`발주 목록`): the entry names what is listed (a `내역` may be the document asked
    # for: `생산출고 내역 언제까지 넘겨야`)
    "목록 리스트",
    # who the goods and claims finally serve (`고객 클레임`, `고객한테 위로금`): the rules about them seldom name them
    "고객",
)
# How goods are packed (`사과 10kg 박스 단가`, `50롤 묶음`): a price list names the product and its size, not its box.
# Asked of an order (`오더 잡힌 거 박스 수`, `서른 박스 주문서 금액`), the boxes are what the order counts.
_PACK_WORDS = korean_text.word_set("박스 묶음")
_ORDER_ASKED_RE = re.compile(r"주문|오더|발주")

# (aspect, cue in the question), the first that matches wins. Question words and verb phrases (`언제까지`, `어떻게
# 하나요`, `면 어떻게 되나요`) come before aspect nouns (`기간`, `수량`, `금액`), which only decide when the question
# word says nothing in particular (`기간이 어떻게 되나요?`): "발주 확정 후 수량 변경은 어떻게 하나요?" asks for a
# procedure, not a quantity.
_ASPECT_CUES = (
    (PARTY, ("누가", "누구", "어느 쪽")),
    # `원인이 뭐`, not the 원인 of `원인 조사 계획` (a document's name)
    (REASON, ("왜", "이유", "원인이", "원인은", "원인 뭐", "어째서")),
    # "…이 다르면요?", "기한을 넘기면 어떻게 되나요?": what follows, not a value
    (None, ("면요", "면 어떻게 되", "면 어떻게 돼", "다르면", "넘기면", "없으면", "지나면", "쌓이면", "남으면",
            "어떻게 처리")),
    (CONTACT, ("연락처", "전화번호", "번호 알려", "전화", "이메일", "메일 주소", "어떻게 알려", "어떻게 연락")),
    (RATE, ("할인율", "할인폭", "비율", "율은", "율이", "률은", "률이", "몇 %", "몇%", "퍼센트", "몇 프로",
            "할인 얼마")),
    (FREQUENCY, ("얼마나 자주", "얼마마다", "며칠마다", "몇 번씩", "몇 달마다", "몇 주마다", "주기가", "주기는")),
    (DURATION, ("몇 시간",)),
    (TIME, ("몇 시", "몇시")),
    (DURATION, ("언제까지", "얼마동안", "얼마 동안", "며칠 안", "며칠 이내", "몇 일 안", "얼마나 걸", "며칠 걸",
                "며칠 만에", "몇 시간 안", "몇 주", "몇 달", "몇 개월", "얼마 안에", "얼마 이내", "얼마 만에")),
    (DATE, ("언제", "며칠", "몇 일", "무슨 요일", "몇 월")),
    (QUANTITY, ("몇 개", "몇 박스", "몇개", "몇 팔레트", "몇 도", "몇 번", "몇 회", "몇 명", "몇 건", "몇 장",
                "몇 점")),
    (MEASURE, ("얼마나",)),
    (AMOUNT, ("얼마",)),
    (PLACE, ("어디", "어느 센터", "어느 창고")),
    (PROCEDURE, ("어떻게 하", "어떻게 해", "어떻게 신청", "어떻게 등록", "어떻게 받", "어떻게 확인", "어떻게 내",
                 "방법", "절차", "하려면", "순서", "어떤 방식", "무슨 방식", "방식으로", "어떤 식으로")),
    # asking leave or whether something is all right: "거절해도 돼요?", "바로 내보내도 문제 없나요?"
    (CONDITION, ("해도 돼", "해도 되", "어도 돼", "어도 되", "아도 돼", "아도 되", "도 괜찮", "문제 없", "상관없",
                 "상관 없")),
    # aspect nouns
    (TIME, ("마감 시간", "운영 시간")),
    (DURATION, ("기간", "기한", "마감", "유효")),
    (TIME, ("시간", "시각")),
    (DATE, ("날짜", "일정", "요일", "주기", "지급일", "정산일", "결제일", "입고일", "배송일", "마감일", "발행일",
            "시작일", "종료일", "개시일", "날은", "날이")),
    (SIZE, ("규격", "크기", "사이즈", "치수", "해상도")),
    (QUANTITY, ("수량", "개수", "박스 수", "높이", "무게")),
    (AMOUNT, ("가격", "단가", "금액", "총액", "합계", "비용", "요금", "운임", "수수료", "광고비", "배송비", "택배비",
              "값")),
    (PLACE, ("위치", "주소", "장소")),
    (None, ("뭐예요", "뭔가요", "무엇인가요", "뭐야", "어떤", "무슨", "어떻게 되", "어떻게 돼", "알려")),
    (CONDITION, ("되나요", "되요", "돼요", "가능", "있나요", "있어요", "할 수", "인정", "받을 수")),
    (PROCEDURE, ("하나요", "해야 하나요")),
)  # fmt: skip
# Counters after "몇" and the ones the evidence writes for them: "몇 번" is answered by "5회".
_COUNTER_VARIANTS = {
    "번": ("번", "회"), "회": ("회", "번"), "개": ("개", "ea", "EA"), "명": ("명",), "건": ("건",), "시": ("시",),
    "시간": ("시간",), "박스": ("박스",), "도": ("도",), "장": ("장", "부", "매"), "주": ("주",), "%": ("%",),
    "점": ("점",),
}  # fmt: skip
_COUNTER_RE = re.compile(r"몇\s*(박스|번|회|개|명|건|시간|시|도|장|주|%|점)")
# Words that only say which aspect is asked, or how: never the subject.
_ASPECT_WORDS = korean_text.word_set(
    "가격 금액 비용 요금 단가 할인율 비율 수수료 기간 기한 일정 날짜 시간 마감 방법 절차 위치 장소 주소 연락처",
    "번호 전화 전화번호 여부 가능 종류 얼마 언제 몇 며칠 순서 조건 기준 내용 정보 값 주기 요일 누가 누구",
    "방식 수단 금액은 비용은 수량 규격 크기 사이즈 치수 해상도 총액 합계 이유 원인 상품군 차이 시간대 시각",
    "시작일 종료일 개시일 시작 종료",
    # `끝나는 날은요?`: a one-syllable noun keeps its particle when read as a word
    "날 날은 날이",
    # the end asked (`마지막 날이 언제`), what to watch out for (`주의할 점`)
    "마지막 주의 주의사항 유의사항 유의점",
    # the step a record has reached (`현재 처리 단계`), read as its status; how a value is set (`어떻게 책정돼`) and
    # what it is counted per (`한 대당 공급가`, `회당 운임`)
    "단계 상황 책정 대당 개당 회당 건당 장당",
    # the form a value takes (`몇 도 범위`, `얼마 간격`, `무게 제한`, `시간 제한`, `결품 비율 수치`, `주기적으로`)
    "범위 간격 제한 수치 주기적 시한",
)
# The kind of value an aspect word asks for. Asked with another aspect it names the subject instead: "단가 변경을
# 요청하면 언제까지 답을 받아요?" is about 단가 (a deadline is asked), "단가가 얼마예요?" asks for the 단가.
_TIME_FAMILY, _AMOUNT_FAMILY = (
    frozenset({DATE, TIME, DURATION, FREQUENCY}),
    frozenset({AMOUNT, RATE, MEASURE, QUANTITY}),
)
_ASPECT_WORD_FAMILIES = {
    **dict.fromkeys(
        korean_text.word_set("가격 금액 비용 요금 단가 수수료 값 금액은 비용은 수량 총액 합계"), _AMOUNT_FAMILY
    ),
    **dict.fromkeys(
        korean_text.word_set("기간 기한 일정 날짜 시간 마감 주기 요일 시작일 종료일 개시일 시작 종료 날 날은 날이"),
        _TIME_FAMILY,
    ),
}
_FILLER_WORDS = korean_text.word_set(
    "지금 이제 현재 요즘 진행 중인 저희 우리 이번 이번달 다음 달 혹시 매달 매월 매번 보통 원래 다시 새로 제일 가장",
    # the present period a question is asked in ("이달 말", "올해 계약"): the question's date decides it
    "이달 이번주 금주 올해 금년",
    # a period or day named relative to today ("지난달 정산", "내일 수량"): the question's date decides which
    "지난 지난달 저번 저번달 전달 다음달 오늘 내일 어제 모레 예전",
    # a case or a degree said around what is asked ("납품하는 경우", "어느 정도에요?"), and the asker's own progress
    "경우 정도 준비중",
    # the goods in general ("신성유통 거쳐서 넣던 물량", "물량 적을 땐 택배로"), as 물건 is
    "물량",
    # the asker's own state of mind ("기억이 안나네요", "헷갈려서요"), not what is asked about
    "기억 헷갈려서 헷갈려서요 맨날",
    # the asker's own side ("저희쪽 단가")
    "저희쪽 우리쪽 저희측 우리측",
    # the company asked, named as the asker's counterpart ("귀사 납품하려면"): who is asked, not what about
    "귀사",
    "말고 대신 또 그럼 그러면 그런데 혹은 계속 자꾸 같이 후에 전에 뒤에 때 안에 이내 이내에",
    "답 답은 답을 답변 회신 답장",
    # "… 걸로 돼 있는지", "궁금한데", "아님 더 필요해요?": how the asking is said, not what it is about
    "걸로 궁금한데 아님 아니면",
    "하는 받는 되는 있는 주는 드리는 해주는 내는",
    # a period a frequency is counted in ("일주일에 몇 번"), and adverbs of manner or order: never the subject
    "일주일 하루 한달 바로 따로 미리 먼저 빨리 그냥 꼭 문제",
    # a part of the day said with a clock time ("저녁 몇 시까지"): the time asked, not what it is of
    "아침 저녁 밤 새벽 그날",
    # how long something lasts, said of the duration asked ("며칠 동안 안 팔리면")
    "동안",
    # the asking itself ("단가 확인 부탁드립니다", "여기 카카오톡으로 물어보면"), and "that time before"
    "부탁 여기 지난번",
    # `다음 달에`, `다음 달로 넘어간`: a one-syllable noun keeps its particle when read as a word
    "달에 달로 달부터 달까지",
)
_QUESTION_WORD_STARTS = ("몇", "며칠", "얼마", "언제")
_HONORIFIC = "님"
_GLUED_ENDINGS = ("같은", "같이", "같", "꺼", "째", "짜리")
# `콩나물같은 냉장품`: the glued noun is an example of the subject, which the sources name by its kind (냉장 상품)
_EXAMPLE_ENDINGS = ("같은", "같이", "같")
# Verb forms before a noun or "수" (`받을 수`, `들어온 발주`, `만들 수`): they say what is done, not what about, so a
# statement need not repeat them (it still ranks higher when it does).
_PARTICLE_YO = ("는요", "은요", "도요", "이요")
_ADNOMINAL_VERB_RE = re.compile(r"(할|될|낼|줄|쓸|릴|볼|갈|던|든|린|른|어온|나온|만들)$|^[가-힣]을$")
# Words for a price: the aspect asked, never a subject (공급가 is not about 공급).
PRICE_WORDS = korean_text.word_set("공급가 납품가 판매가 소비자가 매입가 할인가 정가 원가 가격표")
# How something is done, not what it is about: a procedure cue, never the subject.
_ACTION_NOUNS = korean_text.word_set("접수 신청 등록 처리 확인 요청 진행 이용 사용 조회 문의 변경 부담 운영 전송 입력")
# Endings of a verb or a conditional after a noun (`단종하려면`, `위탁이면`, `납품해야`, `끊어야`): the noun stays, and
# a word that is only a verb form (`끊어야`, `다르면`) is no subject.
_VERB_AFTER_NOUN = ("하려면", "해야", "하면요", "이면요", "되면요", "하면", "이면", "이라면", "되면", "돼야", "되나요",
                    "하나요", "해요", "돼요", "하는", "하고", "하며", "할", "한", "되는", "된")  # fmt: skip
_VERB_FORM_RE = re.compile(
    r"(야|려면|으면|르면|다면|면|나요|까요|어요|아요|죠|지요|세요|는지|고요|가요|나|혀|려|쳐|워)$"
)
_NOUNS_LIKE_VERB_FORMS = korean_text.word_set("분야 가나 하나 요나 라면 측면 표면 전면 이면")
# A compound ending in one of these is an aspect of its stem: 정산일 → 정산, 할인율 → 할인, 배송비 → 배송.
_ASPECT_SUFFIXES = ("일", "율", "률", "비", "액", "가", "폭")
_NOUNS_NOT_SPLIT = korean_text.word_set(
    "영업일 공휴일 요일 평일 휴일 말일 일주일 단가 원가 정가 특가 평가 추가 물가 할인가"
)


@dataclass(frozen=True)
class QuestionFocus:
    aspect: str | None  # one of the aspect constants, None when the question asks for no particular value
    subject: tuple[str, ...]  # content words naming what the question is about
    words: tuple[str, ...]  # every content word of the question (subject, aspect and action words)
    asks_bound: bool = False  # the question asks for a limit (최대, 최소, 한도 …)
    # Subject words a statement need not name: verb forms (`받을`), and — decided against the evidence — words
    # written with 는 that no evidence statement holds (`멈추는` is a verb, not a noun).
    optional: tuple[str, ...] = ()
    marked: tuple[str, ...] = ()  # subject words written with 는 (after a verb stem it makes an adnominal form)
    # Subject words the morphological analyser reads as no noun (`받고`, `자주`, `하나에`); required only when the
    # evidence holds them as words (a brand it does not know can look like a verb: 고운들).
    non_nouns: tuple[str, ...] = ()
    phrase: tuple[str, ...] = ()  # the question's words, verb forms included (`틀리면`, `남아야`), in order
    counter: tuple[str, ...] = ()  # "몇 명" → ("명",): a statement counting in that unit is the closer one
    asks_deadline: bool = False  # "언제까지": a statement with "까지" is the closer one
    aspect_cued: bool = False  # a cue decided the aspect (also "no value in particular": "…면요?")
    relations: tuple[tuple[str, str], ...] = ()  # ("확정", "후") for "확정 후": before or after something
    recurring: bool = False  # "매달 며칠", "매주 무슨 요일": a value that recurs, not one occurrence's
    asks_total: bool = False  # "그 건 총액", "금액이 총 얼마": an order's or a month's sum, not a unit price
    asks_address: bool = False  # "주소가 어떻게 돼요?", "네비에 찍을 주소": a street address, not any place word
    asks_weekday: bool = False  # "배송 요일": a statement naming days of the week is the closer one
    asks_own: bool = False  # "저희 결제는 …": the vendor asks about their own terms, which their record states
    polar: bool = False  # a yes/no question that names an aspect only by a noun ("… 비용 나눠 내요?")
    # "기한 넘기면요?", "금액이 정산서랑 다르면요?": the nouns of the condition asked about — a statement that
    # states what follows the same condition ("기한이 지나면 자동 승인됩니다") answers it.
    conditions: tuple[str, ...] = ()
    # "통장을 바꾸려면": the noun the sources write for the action asked (변경)
    actions: tuple[str, ...] = ()
    asks_status: bool = False  # "출고됐나요?", "입금됐어요?": whether a step has happened, which a record's 상태 tells
    # "이번에 냉동 교자 처음 들고 가는데 탑차 온도 기준이 …": the subject words of the scene said before the question,
    # when the question after it names a subject of its own — a statement naming that one answers without them.
    scene: tuple[str, ...] = ()
    # "서류 들고 본사 찾아가려는데 주소가 어디에요?": the subject words of the scene when the question after it names
    # none of its own — what it asks is about one of them, not all.
    scene_only: tuple[str, ...] = ()

    @property
    def accepted_values(self) -> tuple[str, ...]:
        values = ACCEPTED_VALUES.get(self.aspect, ())
        # "저희도 비용 나눠 내요?" is answered by the amount, or by "협력사 분담은 없습니다".
        return (*values, YES_NO) if self.polar and values else values


_NOT_SUBJECT = _ASPECT_WORDS | PRICE_WORDS | _FILLER_WORDS | _ACTION_NOUNS


def question_focus(question: str, *, counterpart_names: tuple[str, ...] = ()) -> QuestionFocus:
    """`counterpart_names`: the room's vendor — asking "세림식품 최소 주문 금액" names who asks, not what about."""
    text = _without_masks(" ".join(spoken_forms_written(question).split()))
    text = _GLUED_ASKING_RE.sub(r" \1", text)
    for name in sorted(counterpart_names, key=len, reverse=True):
        if len(name) >= 2:
            text = text.replace(name, " ")
    text = _SELF_INTRODUCTION_RE.sub(" ", text)
    cue = _cue_index(text)
    cued = (_ASPECT_CUES[cue][0],) if cue is not None else ()
    aspect = cued[0] if cued else None
    if aspect in (AMOUNT, MEASURE) and _PERIOD_ASKED_RE.search(text):
        aspect = DURATION  # "유효기간이 얼마예요?": a length of time, not a price
    elif aspect in (AMOUNT, MEASURE) and any(noun in text for noun in _MEASURE_NOUNS):
        aspect = QUANTITY  # "무게는 얼마까지": a weight, not a price
    elif aspect == MEASURE and _RATE_ASKED_RE.search(text):
        aspect = RATE  # "할인 얼마나 돼요?": how much off, a rate
    words: list[str] = []
    subject: list[str] = []
    optional: list[str] = []
    marked: list[str] = []
    phrase: list[str] = []
    # "재고는요?", "냉장은요?": the polite 요 after a particle ends a noun, not a verb.
    # A fraction with its counter (`1/2면`) is one qualifier, not the numbers 1 and 2면.
    fractions = [_fraction_written(match[0]) for match in _FRACTION_RE.finditer(text)]
    text = _FRACTION_RE.sub(" ", text)
    written = korean_text.words(text)
    guessed = set(korean_text.words(_guess(text)))
    raw_words = [word[:-1] if word.endswith(_PARTICLE_YO) else word for word in written]
    analysed_non_nouns = morphology.non_nouns(text)
    analysed_nouns = morphology.word_nouns(text)
    whole_nouns = morphology.whole_nouns(text)
    non_nouns: list[str] = []
    examples = _example_positions(written)
    mixed_up = {match[1] for match in _MIXED_UP_RE.finditer(text)}
    reasons = [match["reason"] for pattern in (_REASON_AFTER_RE, _REASON_BEFORE_RE) if (match := pattern.search(text))]
    reason_words = {word for reason in reasons for word in korean_text.words(reason)}
    scene_said = _SCENE_RE.match(text)
    scene_words = set(korean_text.words(scene_said["scene"])) if scene_said else set()
    scene_subject: list[str] = []
    asks_order = _ORDER_ASKED_RE.search(text) is not None
    for index, raw in enumerate(raw_words):
        if index and raw_words[index - 1] == "몇":
            continue  # the counter of "몇 도로", "몇 개": part of the question word
        if raw.startswith(_QUESTION_WORD_STARTS):
            continue  # a question word written together with what follows it: `몇시`, `며칠날`, `얼마동안`, `얼마씩`
        if raw not in _FILLER_WORDS and raw not in korean_text.QUESTION_WORDS:
            phrase.append(raw)
        analysed = analysed_nouns.get(written[index])
        if analysed == morphology.DEPENDENT or analysed in _RANGE_WORDS:
            continue  # `쪽은`, `번에`, `이상이어야`: a dependent noun or a range word names no subject
        if analysed and len(analysed) == 1:
            # A one-syllable noun (`차는`, `돈은`) is too short to be required of a statement, but it ranks.
            if analysed not in _FILLER_WORDS and analysed not in korean_text.GENERIC_REFERENTS:
                words.append(analysed)
                subject.append(analysed)
                optional.append(analysed)
            continue
        noun = analysed or _verbal_noun(raw)
        if noun is None:
            continue
        tokens = korean_text.content_tokens(noun) or (
            # `김해 센터로`: a place whose last syllable the rules read as a verb ending (…해), not the analyser
            [noun] if len(raw) >= 2 and raw.endswith("해") and noun == raw and raw in whole_nouns else []
        )
        if not tokens:
            continue
        word = tokens[0]
        if word.endswith(_HONORIFIC) and len(word) > len(_HONORIFIC) + 1:
            word = word[: -len(_HONORIFIC)]  # `MD님`, `기사님`: the person the evidence names without the honorific
        # `콩나물같은 냉장품`, `고운들꺼`, `분기꺼`, `컨테이너째`, `3kg짜리`: an example of the noun, the noun's own
        # one, the noun whole or one of that size — the noun
        glued = next((ending for ending in _GLUED_ENDINGS if word.endswith(ending)), "")
        if glued and len(word) - len(glued) >= 2:
            word = word[: -len(glued)]
        else:
            glued = ""
        words.append(word)
        stem = word if word in PRICE_WORDS else _aspect_stem(word)
        # A number with its counter (`5번`, `1차`, `10월`) qualifies the subject but is written many ways (`5회`):
        # it counts where it is found, it is not required.
        if any(ch.isdigit() for ch in stem) or stem in korean_text.GENERIC_REFERENTS:
            continue
        if stem in korean_text.DEICTIC_WORDS:
            continue  # a pronoun points back at the subject ("이게 입고금액 대비 몇 %"); it names none
        family = _ASPECT_WORD_FAMILIES.get(stem)
        names_subject = family is not None and aspect not in (None, PROCEDURE, PLACE) and aspect not in family
        if (stem in _NOT_SUBJECT and not names_subject) or stem in _RANGE_WORDS:
            continue  # `최소 얼마 이상`: a range word the analyser left unread names no subject either
        subject.append(stem)
        if (
            written[index] in guessed
            or stem in _WORDS_NOT_REQUIRED
            or (stem in _PACK_WORDS and not asks_order)
            or glued in _EXAMPLE_ENDINGS
            or index in examples
            or stem in mixed_up
            or written[index] in reason_words
        ):
            # "… 어떻게 돼요? 현금이에요?": a guess at the answer; `콩나물같은`: an example; `최소 몇 픽셀`: the bound
            # of the value asked, which a statement may state by `이상` alone — not what it must name
            optional.append(stem)
        if written[index] in scene_words:
            scene_subject.append(stem)
        if written[index] in analysed_non_nouns:
            non_nouns.append(stem)
        if noun == raw and _ADNOMINAL_VERB_RE.search(raw):
            optional.append(stem)
        elif len(word) >= 2 and ((noun != word and noun.endswith("는")) or (analysed and raw.endswith("는"))):
            marked.append(stem)
    # With less than a subject of its own ("… 파일로 받는데 기간 제한 있어요?", "… 늦어질 것 같은데 정산에서 얼마나
    # 깎여요?") the question is about the scene.
    own_subject = sum(1 for word in subject if word not in scene_subject and word not in optional + non_nouns) >= 2
    words = list(dict.fromkeys([*words, *fractions]))
    # "기간 제한 있어요?" asks for the limit, as "최대 몇 달" does
    asks_bound = any(word in text for word in BOUND_WORDS) or "얼마까지" in text or "제한" in text
    counter = _COUNTER_RE.search(text)
    return QuestionFocus(
        aspect=aspect,
        subject=tuple(dict.fromkeys(subject)),
        words=tuple(words),
        asks_bound=asks_bound,
        optional=tuple(dict.fromkeys(optional)),
        marked=tuple(dict.fromkeys(marked)),
        non_nouns=tuple(dict.fromkeys(non_nouns)),
        phrase=tuple(phrase),
        counter=_COUNTER_VARIANTS.get(counter[1], ()) if counter else (),
        asks_deadline=aspect in _TIME_FAMILY and "까지" in text,
        aspect_cued=bool(cued),
        relations=tuple((match["word"], match["relation"]) for match in _RELATION_RE.finditer(" ".join(raw_words))),
        recurring=aspect in _TIME_FAMILY and any(word in text for word in _RECURRENCE_WORDS),
        asks_weekday=aspect in _TIME_FAMILY and "요일" in text,
        asks_total=aspect == AMOUNT and bool(_TOTAL_ASKED_RE.search(text)),
        asks_address=aspect == PLACE and bool(_ADDRESS_ASKED_RE.search(text)),
        asks_own=any(word.startswith(_OWN_WORD_STARTS) for word in written),
        polar=cue is not None and cue >= _NOUN_CUES_START and bool(_POLAR_END_RE.search(question)),
        conditions=condition_nouns(text) if cue is not None and aspect is None else (),
        actions=tuple(dict.fromkeys(noun for noun in map(action_noun, written) if noun)),
        asks_status=bool(_DONE_YET_RE.search(text)),
        scene=tuple(dict.fromkeys(scene_subject)) if own_subject else (),
        scene_only=() if own_subject else tuple(dict.fromkeys(scene_subject)),
    )


# "보람식품이에요.", "금강제과 경리팀인데요,", "대성기업 구매 담당입니다.": who asks (the vendor's name is taken out
# before), said first — not what is asked about.
_SELF_INTRODUCTION_RE = re.compile(
    r"^\s*(?:안녕하세요[,.~!\s]*)?"
    r"(?:(?:[가-힣A-Za-z]+\s+)?[가-힣A-Za-z]*(?:팀|팀장|담당|담당자|과장|대리|부장|실장|주임)\s*)?"
    r"(?:입니다|이에요|예요|인데요)[,.~!ㅎ]*\s+"
)

# A step of an order or a payment asked in the past tense: whether it has happened, not whether it can.
_DONE_YET_RE = re.compile(
    r"(출고|입고|배송|발송|도착|처리|접수|완료|확정|정산|지급|입금|결제|진행)\s*(됐|되었|됬|했|하였)"
    r"|(처리|진행)\s*(단계|상황)"  # "현재 처리 단계", "진행 상황": the step it has reached
)
# "담당자가 휴가라 클레임 첫 답변을 못 했는데요, 이거 늦으면 …": the scene said before the question, up to its last
# connective (…는데, …인데, …라, …어서요, …다가요, 여쭤봐요) before the question itself.
_SCENE_RE = re.compile(
    r"^(?P<scene>[^?？]*[가-힣](?:[는은인런]데요?|라서?|[아어여워해돼]서요|다가요?|(?:여쭤|물어)봐요))[,.]?\s+(?=[^?？]*[가-힣])"
)
_ADDRESS_ASKED_RE = re.compile(r"주소|도로명|네비")
_TOTAL_ASKED_RE = re.compile(r"총액|합계|총\s*금액|전체\s*금액|총\s*얼마|총\s*몇")
# A question after the question that guesses its answer: "대금 결제 방식이 어떻게 돼요? 현금이에요?".
_GUESS_RE = re.compile(r"[?？]\s*(?P<guess>[^?？.!\s]+(?:\s+[^?？.!\s]+)?)\s*[?？]+\s*$")
_GUESS_END_RE = re.compile(r"(이에요|예요|인가요|인거죠|이죠|인지|이에여|이야)$")


# A question word typed against the noun it asks about: `단가얼마에요` is 단가 얼마에요.
_GLUED_ASKING_RE = re.compile(r"(?<=[가-힣]{2})(얼마|언제)")
# "… 얼마로 잡혀있죠? 견적서 다시 뽑아야돼서요": why the vendor asks, after the question — not what it asks about.
_REASON_AFTER_RE = re.compile(
    r"(?:죠|요|까|나요)[?？]*\s+(?P<reason>[^?？]+(?:서요|라서|려구요|려고요|려고|(?<![에부])서))\s*[.~!]*$"
)
# "경리팀에서 물어봐서요 10월 정산 총액이 …": why the vendor asks, said before the question.
# So is a short "X가 Y라" said first ("담당자가 휴가라 클레임 첫 답변을 …", "원료가 모자라서 내일 수량 …").
_REASON_BEFORE_RE = re.compile(
    r"^(?P<reason>[^?？]+?[아어여워봐해돼와]서요|(?:저희\s+|우리\s+)?[가-힣]+[이가]\s+[가-힣]+(?<![하되])라서?)\s+\S"
)
# "맛김치랑 자꾸 헷갈려서": the thing the asker mixes the subject up with, not the subject.
_MIXED_UP_RE = re.compile(r"([가-힣A-Za-z0-9]+?)(?:이랑|랑|하고|와|과)\s+(?:[가-힣]+\s+)?헷갈")


def _guess(text: str) -> str:
    """The last question of `text` when it only guesses the answer of the one before it (one or two words ending in
    the copula: `현금이에요?`), else ""."""
    match = _GUESS_RE.search(text)
    return match["guess"] if match and _GUESS_END_RE.search(match["guess"]) else ""


# A word that ends a conditional clause: `넘기면`, `다르면요`, `없으면` (not `측면`, `이면지`: nouns).
_CONDITIONAL_WORD_RE = re.compile(r"^[가-힣]+[^측표전이]면(요)?$|^[가-힣]*[으하되]면(요)?$")
_CONDITION_REACH = 2  # the words before the conditional word that belong to its clause


def condition_nouns(text: str) -> tuple[str, ...]:
    """The nouns of each conditional clause of `text`, the words right before its conditional word with their
    particles read off ("금액이 정산서랑 다르면요?" → 금액, 정산서)."""
    written = korean_text.words(text)
    nouns: list[str] = []
    for index, word in enumerate(written):
        if index and _CONDITIONAL_WORD_RE.match(word):
            for before in written[max(0, index - _CONDITION_REACH) : index]:
                noun = korean_text.strip_particle(before)
                if len(noun) >= 2 and noun not in _FILLER_WORDS and noun not in korean_text.GENERIC_REFERENTS:
                    nouns.append(noun)
    return tuple(dict.fromkeys(nouns))


_MEASURE_NOUNS = ("무게", "중량", "높이", "길이", "너비", "용량", "온도")
_RATE_ASKED_RE = re.compile(r"할인\s*(?:은|이|도|율은|율이)?\s*얼마나")
# `유효기간이 얼마예요?`; a 기한 is a time however far from its 얼마 (`지급 기한이 따로 있다던데 얼마예요`)
_PERIOD_ASKED_RE = re.compile(r"(기간|기한)\s*(이|은|는|가)?\s*(?:최대|최소|최장)?\s*얼마(?!나)|기한[^?？]*얼마(?!나)")
_FRACTION_RE = re.compile(r"\d+/\d+[가-힣A-Za-z]*")


def _fraction_written(word: str) -> str:
    """A fraction with its counter as the evidence writes it: `1/2면짜리는요` is 1/2면."""
    previous = ""
    while word != previous:
        previous = word
        word = korean_text.strip_particle(word.removesuffix("요"))
        word = next((word.removesuffix(ending) for ending in _GLUED_ENDINGS if word.endswith(ending)), word)
    return word


_RECURRENCE_WORDS = ("매달", "매월", "매주", "달마다", "주마다", "매번")
# Cues from here on are aspect nouns, not question words (see _ASPECT_CUES).
_NOUN_CUES_START = next(index for index, (_, cues) in enumerate(_ASPECT_CUES) if "마감 시간" in cues)
# A verb asked about, not a request ("알려주세요") nor a noun with a contrastive 요 ("배송비는요?").
_POLAR_END_RE = re.compile(r"(?<![은는주])(나요|까요|죠|어요|아요|해요|돼요|내요|와요|워요)\s*[?？]*\s*$")
_OWN_WORD_STARTS = tuple(korean_text.OWN_WORDS)


# A masked vendor or product (`[다른 벤더]이랑 같이 입고`) the question asks about together with the room's own
# business: whom it mentions, not a subject word. Asked about on its own (`[다른 벤더] 납품 단가`), the mask stays a
# subject word no statement holds, so nothing of the room's own records answers for the other vendor.
_MASKS = "|".join(re.escape(mask) for mask in sorted((OTHER_VENDOR_MASK, OTHER_PRODUCT_MASK), key=len, reverse=True))
_MASK_RE = re.compile(rf"(?:{_MASKS})(?P<after>[가-힣]{{0,3}})")
# Joined to the room's business: a joining particle right after the mask, or `같이` / `함께` after it and at most
# one word ("[다른 벤더] 물량이랑 같이 오면"), not anywhere in the question ("[다른 벤더] 단가 같이 알려주세요").
_JOINING_RE = re.compile(rf"(?:{_MASKS})(?:(이랑|랑|와|과|하고)(?![가-힣])|(?:\s*[가-힣]+)?\s*(같이|함께)(?![가-힣]))")


# "[다른 벤더] 물량이랑 같이 오면": the other vendor's 물량, joined with the room's own, is no subject word either.
_JOINED_WORD_RE = re.compile(rf"(?:{_MASKS})\s*[가-힣]+(?:이랑|랑|하고)(?![가-힣])")


def _without_masks(text: str) -> str:
    if not _JOINING_RE.search(text):
        return text
    text = _JOINED_WORD_RE.sub(" ", text)
    return _MASK_RE.sub(
        lambda match: " " if not match["after"] or is_particle(match["after"]) else f" {match['after']}", text
    )


# The aspects a second asked value may be of, and what joins two asks in one message: "금액이랑 납기", "몇 % 빠지고
# 몇 박스 이상", "몇 %에 몇 박스 이상" (one ask right after the other), "출고됐나요? 납기가 언제였죠".
_VALUE_ASPECTS = frozenset({DATE, TIME, DURATION, AMOUNT, RATE, QUANTITY, CONTACT, FREQUENCY, SIZE})
_ASKS_JOINED_RE = re.compile(r"이랑|랑|하고|와 |과 |및|,|고 |[?？]|[요죠] |해서|이고|이며|^에 $")
_GLUED_QUESTION_WORD_RE = re.compile(r"몇(?=[가-힣%])")
# Nouns that, asked beside another value, ask for their own: "금액이랑 납기" (alone, 납기 is the subject asked about).
_SECOND_ASK_CUES = ((DATE, ("납기", "입금일", "지급일", "출고일")),)


def asked_counters(question: str) -> tuple[str, ...]:
    """Every unit the question counts in, in order ("몇 % 할인이고 몇박스부터" → %, 박스), with its variants."""
    units = [match[1] for match in _COUNTER_RE.finditer(question)]
    return tuple(dict.fromkeys(variant for unit in units for variant in _COUNTER_VARIANTS.get(unit, ())))


def joined_value_aspects(question: str) -> tuple[str, ...]:
    """The value aspects a question asks one after the other, joined (`흰우유 30박스 금액이랑 납기 알려주세요` → amount,
    date); () when it asks one, or two that only qualify each other (`단가 변경을 요청하면 언제까지` asks a deadline
    about the 단가, not the 단가)."""
    text = _GLUED_QUESTION_WORD_RE.sub("몇 ", spoken_forms_written(" ".join(question.split())))
    found = sorted(
        (start, -len(cue), aspect, cue)
        for aspect, cues in (*_ASPECT_CUES, *_SECOND_ASK_CUES)
        if aspect in _VALUE_ASPECTS
        for cue in cues
        for start in [match.start() for match in re.finditer(re.escape(cue), text)]
    )
    spans: list[tuple[int, int, str, str]] = []
    for start, length, aspect, cue in found:
        if not any(start < end and begin < start - length for begin, end, _, _ in spans):
            spans.append((start, start - length, aspect, cue))
    aspects = [spans[0][2]] if spans else []
    cues = [spans[0][3]] if spans else []
    for (_, end, _, _), (start, _, aspect, cue) in itertools.pairwise(spans):
        related = aspect in ACCEPTED_VALUES[aspects[-1]] or aspects[-1] in ACCEPTED_VALUES[aspect]
        if related and _count_and_money(cues[-1], cue):
            related = False  # "몇 박스 주문 … 금액도요": the count and the money are two values
        if not related and _ASKS_JOINED_RE.search(text[end:start]):
            aspects.append(aspect)
            cues.append(cue)
    return tuple(aspects) if len(aspects) > 1 else ()


def _count_and_money(first: str, second: str) -> bool:
    """One cue counts goods (`몇 박스`) and the other names money (`금액`, `단가`; not `얼마`, which also asks how
    many: "수량이 얼마나")."""
    return any(counted in _COUNT_CUES and money in _MONEY_CUES for counted, money in ((first, second), (second, first)))


# A count of goods: asked with 몇 (`몇 박스`) or named (`수량이랑 금액`); not `높이` or `무게`, which measure.
_COUNT_CUES = frozenset(
    cue
    for aspect, cues in _ASPECT_CUES
    if aspect == QUANTITY
    for cue in cues
    if cue[0] == "몇" or cue in ("수량", "개수", "박스 수")
)
_MONEY_CUES = frozenset(cue for aspect, cues in _ASPECT_CUES if aspect == AMOUNT for cue in cues if cue != "얼마")


# "요거트 치즈 이런 냉장품목", "콩나물 같은 냉장품": the words before name examples of the noun after.
_EXAMPLE_MARKERS = frozenset({"이런", "같은", "등", "등등"})
_MAX_EXAMPLES = 3


def _example_positions(written: list[str]) -> set[int]:
    """The indexes of the words a question gives as examples, bare nouns right before an example marker."""
    positions: set[int] = set()
    for index, word in enumerate(written):
        if word not in _EXAMPLE_MARKERS:
            continue
        before = index - 1
        while (
            before >= 0
            and index - before <= _MAX_EXAMPLES
            and written[before] == korean_text.strip_particle(written[before])
        ):
            positions.add(before)
            before -= 1
    return positions


def _cue_index(text: str) -> int | None:
    """The index in _ASPECT_CUES of the first cue found in ``text``, None when none is. `몇명까지`, `몇달치` are
    read as written apart (`몇 명`, `몇 달`)."""
    text = _GLUED_QUESTION_WORD_RE.sub("몇 ", text)
    return next((index for index, (_, cues) in enumerate(_ASPECT_CUES) if any(cue in text for cue in cues)), None)


def _cued_aspect(text: str) -> tuple[str | None, ...]:
    """(the aspect,) of the first cue found in ``text``, () when none is."""
    index = _cue_index(text)
    return (_ASPECT_CUES[index][0],) if index is not None else ()


@lru_cache(maxsize=4096)
def asked_aspect(question: str) -> str | None:
    """The aspect a question asks (an FAQ entry's question: "납품 차량 주차는 어디에 하나요?" asks a place)."""
    cued = _cued_aspect(" ".join(question.split()))
    return cued[0] if cued else None


_RELATION_RE = re.compile(r"(?P<word>[가-힣]{2,})\s+(?P<relation>이전|이후|전|후)(?:에는|에|엔|는)?(?![가-힣])")


def with_aspect_of(focus: QuestionFocus, earlier: QuestionFocus) -> QuestionFocus:
    """A follow-up's focus asking what the earlier question asked when it says nothing of its own: "그럼 점포
    재고는요?" after "… 몇 시간 안에 되나요?" asks for a duration too."""
    if focus.aspect_cued or not earlier.aspect_cued:
        return focus
    return replace(
        focus,
        aspect=earlier.aspect,
        asks_bound=focus.asks_bound or earlier.asks_bound,
        counter=focus.counter or earlier.counter,
        asks_deadline=earlier.asks_deadline,
        aspect_cued=True,
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
    if word[0].isdigit():
        return word  # a number with its counter (`1면`, `3일`), whatever its last syllable
    for ending in _VERB_AFTER_NOUN:
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            return word[: -len(ending)]
    if "가" <= word[-1] <= "힣" and _VERB_FORM_RE.search(word) and word not in _NOUNS_LIKE_VERB_FORMS:
        return None
    return word


def _aspect_stem(word: str) -> str:
    if len(word) >= 4 and word.endswith(("금액", "단가")):
        return word[:-2]  # 정산금액 → 정산, 공급단가 → 공급
    if len(word) >= 3 and word not in _NOUNS_NOT_SPLIT and word.endswith(_ASPECT_SUFFIXES):
        stem = word[:-1]
        return stem[:-1] if len(stem) >= 3 and stem.endswith("금") else stem  # 정산금액 → 정산금 → 정산
    if len(word) >= 3 and word.endswith("금") and word[:-1] in _MONEY_STEMS:
        return word[:-1]  # 정산금 → 정산
    return word


# Stems that with 금 name a sum of them (정산금, 지급금): the same subject as the stem.
_MONEY_STEMS = korean_text.word_set("정산 지급 결제 입금 송금 대금 환불 반품 보상 배상")


def holds_value(text: str, kinds: tuple[str, ...]) -> bool:
    return any(VALUE_PATTERNS[kind].search(text) for kind in kinds)
