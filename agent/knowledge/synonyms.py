"""Words this domain uses for one subject: a question about 물건값 is about the 대금 a record or a policy names.

Shared by the records search (a question finds the vendor's record that writes the subject another way) and the
local answerer (a statement naming the subject another way still answers).

Also the spoken short forms vendors type in chat (`토욜`, `낼`, `몇 프로`): every search reads a question in the
written form its sources use (`토요일`, `내일`, `몇 %`), since neither an embedding nor a substring relates them.
"""

import re

SUBJECT_SYNONYMS = (
    frozenset({"대금", "물건값", "물품대금", "결제", "지급", "정산", "돈", "입금", "송금"}),
    frozenset({"행사", "프로모션", "기획전", "특가"}),
    frozenset({"반품", "회수"}),
    frozenset({"발주", "주문"}),
    frozenset({"납품", "공급", "매입"}),  # one delivery, seen from the vendor and from us
    frozenset({"납품", "납기"}),  # a delivery's due date: not the 공급가 of 공급
    frozenset({"물류센터", "센터"}),
    frozenset({"업데이트", "갱신"}),
    frozenset({"본사", "당사"}),  # the vendor's word for us, and ours
    frozenset({"표시", "마크"}),  # 분리배출 표시, 인증 마크
    frozenset({"사진", "이미지"}),
    frozenset({"메인", "대표"}),  # 메인 이미지 is the 대표 이미지
    frozenset({"통장", "계좌"}),
    frozenset({"매장", "점포"}),
    frozenset({"하한선", "최소", "하한"}),
    frozenset({"담당자", "수신자", "사람"}),  # who receives a notice or handles a case
    frozenset({"상담", "문의"}),  # the help desk: 카카오톡 상담 / 카카오톡 문의
    frozenset({"예전", "기존", "이전"}),  # the one before a change: 예전 키, 기존 키
    frozenset({"재계약", "갱신"}),  # 재계약 때 is the 계약 갱신
    frozenset({"알림톡", "알림"}),  # KakaoTalk's notification message is the 알림 the sources name
    frozenset({"해썹", "haccp"}),  # the certificate as spoken and as written
    frozenset({"트럭", "차량", "화물차"}),  # the vehicle a delivery comes in
    frozenset({"직원", "사원"}),  # 판촉 직원 is the 판촉 사원 the sources name
    frozenset({"최소수량", "최소주문", "최소주문수량", "moq"}),  # compared with the compacted text: 최소 주문: 20박스
    frozenset({"키친타올", "키친타월"}),  # the loanword in both spellings
    frozenset({"팔레트", "파레트", "빠레트", "파렛트"}),  # the loading pallet as vendors spell it
    frozenset({"무게", "중량"}),
    frozenset({"신입", "신규"}),
    frozenset({"pl보험", "생산물배상책임보험", "배상책임보험"}),  # product liability insurance, by its short name
    frozenset({"클레임", "민원", "불만"}),  # a customer's complaint, as vendors and as the sources call it
    frozenset({"전단", "전단지"}),
    frozenset({"원재료", "원자재", "원료"}),
    frozenset({"발주서", "주문서"}),
    frozenset({"구두", "말로"}),  # 말로만 합의한 조건 is the 구두 약속 the sources name
    frozenset({"취소", "캔슬"}),  # the loanword vendors type for a cancellation
    frozenset({"체계", "구조", "구성"}),  # how a code or a fee is made up: 상품 코드 체계, 코드 구조
    frozenset({"페널티", "불이익"}),  # what a breach costs the vendor
    frozenset({"교육", "강의", "강좌"}),
    frozenset({"사용법", "이용법", "이용"}),  # 파트너센터 사용법 교육 is its 이용 교육
)


# (spoken form, written form). A short form is read only as a word of its own or before a particle, so a longer
# word holding the same letters (`프로모션`, `프로그램`, `낼게요`) is left as written.
_SPOKEN_FORMS = (
    (re.compile(r"(?<![가-힣])([월화수목금토일])욜"), r"\1요일"),
    (re.compile(r"(?<![가-힣])낼(?=\s|$|까지|부터|은|도|이나)(?!\s*(?:때|수|거|것))"), "내일"),
    (re.compile(r"(?<![가-힣])담주"), "다음 주"),
    (re.compile(r"(?<![가-힣])담달"), "다음 달"),
    # the particle after a final vowel, as the written form ends in one: `비번은` → `비밀번호는`
    (
        re.compile(r"(?<![가-힣])비번(?:(은)|(이)(?!요)|(을))?(?=[^가-힣]|요|이요|$)|(?<![가-힣])비번(?=[도만])"),
        lambda match: "비밀번호" + ("는" if match[1] else "가" if match[2] else "를" if match[3] else ""),
    ),
    (re.compile(r"(?<![가-힣])카톡(?=\s|$|[은는이을도만]|으로|방)"), "카카오톡"),
    (re.compile(r"(?<![가-힣])톡(?=\s|$|으로|에서|방)"), "카카오톡"),
    # `몇일` is how 며칠 is often typed; 시월 and 유월 are months written out
    (re.compile(r"(?<![가-힣])몇\s?일(?![가-힣])|(?<![가-힣])몇일"), "며칠"),
    (re.compile(r"(?<![가-힣])시월(?=[^가-힣]|$|[은는이의에도만치분말]|까지|부터)"), "10월"),
    (re.compile(r"(?<![가-힣])유월(?=[^가-힣]|$|[은는이의에도만치분말]|까지|부터)"), "6월"),
    # `좀` typed onto the word before it: `확인좀`, `단가좀` (the filler, not part of the word)
    (re.compile(r"(?<=[가-힣]{2})좀(?=[\s~!?.]|$)"), " 좀"),
    # a polite ending typed playfully: `부탁드립니당`, `있나여`
    (re.compile(r"(?<=니)당(?=[\s~!?.]|$)"), "다"),
    (re.compile(r"(?<=[나가까에세어아해돼워])여(?=[\s~!?.]|$)"), "요"),
    (re.compile(r"(\d)\s*(?:프로|퍼센트)(?![가-힣]*(?:모션|그램|세스|필|젝트|드))"), r"\1%"),
    # units said aloud: `10키로`, `210그람`, `1.8리터`; "키로짜리" alone is the one-kilo pack
    (re.compile(r"(\d)\s*(?:키로|킬로)(?:그램)?"), r"\1kg"),
    (re.compile(r"(?<![\d가-힣])(?:키로|킬로)짜리"), "1kg짜리"),
    (re.compile(r"(\d)\s*그람"), r"\1g"),
    (re.compile(r"(\d)\s*리터"), r"\1L"),
    # half a page of a leaflet, as the sources write the share: `전단 반면`, `반 페이지짜리` → `1/2면` (a lone
    # `반면` is "on the other hand")
    (re.compile(r"(?<=전단 )반\s*(?:페이지|면)|(?<![가-힣])반\s*(?:페이지|면)(?=\s*(?:짜리|광고))"), "1/2면"),
    (re.compile(r"(?<![가-힣])반\s*페이지면"), "1/2면이면"),  # `반 페이지면요?`: if it is half a page
    (re.compile(r"(?<![가-힣])반\s*페이지"), "1/2면"),
    (re.compile(r"(?<![가-힣])반\s+면(?=[은이도으]|짜리|광고|\s|[?？]|$)"), "1/2면"),  # `반 면으로`, apart: half a page
    # the partner centre's open API is the API the sources name
    (re.compile(r"오픈\s*(?=API|api)"), ""),
    # a product name typed against its size (`배도라지즙30포`, `포기김치10kg`) is the name and the size
    (re.compile(r"(?<=[가-힣]{2})(?=\d+(?:\.\d+)?\s*(?:kg|g|L|ml|포|개|입|매|롤|박스|팩|봉)(?![A-Za-z]))"), " "),
    # the contracted topic particle: `저흰` is 저희는, `우린` is 우리는
    (re.compile(r"(?<![가-힣])저흰(?![가-힣])"), "저희는"),
    (re.compile(r"(?<![가-힣])우린(?![가-힣])"), "우리는"),
    (re.compile(r"몇\s*(?:프로|퍼센트)(?![가-힣]*(?:모션|그램|세스|필|젝트|드))"), "몇 %"),
)


def spoken_forms_written(text: str) -> str:
    """`text` with the spoken short forms of chat written out: `토욜 날도` → `토요일 날도`, `낼 오전` → `내일 오전`,
    `몇 프로였죠` → `몇 %였죠`, `10프로` → `10%`, `비번` → `비밀번호`, `카톡으로` / `톡으로` → `카카오톡으로`, `몇일` →
    `며칠`, `시월` → `10월`, `부탁드립니당` → `부탁드립니다`, `있나여` → `있나요`, `10키로` → `10kg`,
    `저흰` → `저희는`, `확인좀` → `확인 좀`."""
    for pattern, written in _SPOKEN_FORMS:
        text = pattern.sub(written, text)
    return text


# Verbs a vendor types for what the sources name with a noun: `단가 올리고 싶은데` is the entry's `단가 인상`.
_VERB_NOUNS = {"올리": "인상", "올려": "인상", "올릴": "인상", "내리": "인하", "내려": "인하", "내릴": "인하",
               "낮추": "인하", "낮춰": "인하", "바꾸": "변경", "바꿔": "변경", "바꿀": "변경"}  # fmt: skip


def verb_noun(word: str) -> str:
    """The noun the sources write for the verb `word` begins with (`올리고` → 인상); "" for any other word."""
    return next((noun for stem, noun in _VERB_NOUNS.items() if word.startswith(stem)), "")


_NOUNS_OF_VERBS = frozenset(_VERB_NOUNS.values())


def action_noun(word: str) -> str:
    """The noun of the action `word` asks about, whether typed as the verb (`바꾸려면` → 변경) or as the noun itself
    (`변경`, `변경하면`, `인상은`); "" for any other word."""
    return verb_noun(word) or next((noun for noun in _NOUNS_OF_VERBS if word.startswith(noun)), "")


def subject_variants(word: str) -> frozenset[str]:
    """The word and the other words this domain uses for the same subject, lower case (statements are compared
    in lower case: `POS`, `EDI`). A kind of goods said with 품 or 품목 is that kind of 상품: `수입품` is a
    `수입 상품`, `냉장품목` a `냉장 상품` (compared without spaces)."""
    word = word.lower()
    groups = [group for group in SUBJECT_SYNONYMS if word in group]
    variants = frozenset().union(*groups) if groups else frozenset({word})
    kind = _GOODS_KIND_RE.fullmatch(word)
    return variants | {f"{kind['kind']}상품"} if kind else variants


_GOODS_KIND_RE = re.compile(r"(?P<kind>[가-힣]{2,})(?:품목|품)")
