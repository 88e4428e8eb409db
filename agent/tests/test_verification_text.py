"""Claims, sentences and names: the text rules under verify_draft."""

import pytest

from agent.verification import NameIndex, cached_name_index, find_action_claims, split_sentences
from agent.verification.brands import EvidenceText, find_misspellings
from agent.verification.korean import fold, strip_particle_variants
from agent.verification.sentences import text_without

# --- completed-action claims ------------------------------------------------------------------------

CLAIMS = [
    ("제안서 보내드렸습니다.", "send", "보내드렸습니다"),
    ("발송했습니다", "send", "발송했습니다"),
    ("발송 완료", "send", "발송 완료"),
    ("발송완료!", "send", "발송완료"),
    ("발송되었습니다", "send", "발송되었습니다"),
    ("발송됐습니다", "send", "발송됐습니다"),
    ("전달드렸습니다", "send", "전달드렸습니다"),
    ("송부했습니다", "send", "송부했습니다"),
    ("첨부해 드렸습니다", "send", "첨부해 드렸습니다"),
    ("전송했습니다", "send", "전송했습니다"),
    ("보내 드렸어요", "send", "보내 드렸어요"),
    ("보냈습니다", "send", "보냈습니다"),
    ("메일로 보냈어요", "send", "보냈어요"),
    ("자료를 전달해 드렸습니다", "send", "전달해 드렸습니다"),
    ("발송이 완료되었습니다.", "send", "발송이 완료되었습니다"),
    ("발송을 완료했습니다", "send", "발송을 완료했습니다"),
    ("발송 처리되었습니다", "send", "발송 처리되었습니다"),
    ("보내드린 자료 확인 부탁드립니다", "send", "보내드린"),
    ("재발송했습니다", "send", "발송했습니다"),
    ("견적서를 공유드렸습니다", "send", "공유드렸습니다"),
    ("보내드렸는데 확인하셨나요?", "send", "보내드렸는데"),
    ("접수했습니다", "receipt", "접수했습니다"),
    ("등록 완료", "register", "등록 완료"),
    ("접수 처리되었습니다", "receipt", "접수 처리되었습니다"),
    ("신청해 드렸습니다", "register", "신청해 드렸습니다"),
    ("등록되었습니다", "register", "등록되었습니다"),
    ("접수가 완료되었습니다", "receipt", "접수가 완료되었습니다"),
    ("처리했습니다", "process", "처리했습니다"),
    ("반영되었습니다", "process", "반영되었습니다"),
    ("변경 완료", "process", "변경 완료"),
    ("취소했습니다", "process", "취소했습니다"),
    ("환불 처리되었습니다", "process", "환불 처리되었습니다"),
    ("단가를 수정했습니다", "process", "수정했습니다"),
    ("요청하신 대로 변경해 드렸습니다", "process", "변경해 드렸습니다"),
    ("주소를 바꿨습니다", "process", "바꿨습니다"),
    ("적용 완료입니다", "process", "적용 완료입니다"),
]


@pytest.mark.parametrize(("text", "kind", "claim"), CLAIMS)
def test_completed_actions_are_claims(text, kind, claim):
    claims = find_action_claims(text)
    assert [(c.kind, c.text) for c in claims] == [(kind, claim)]
    assert text[claims[0].start : claims[0].end] == claim


NOT_CLAIMS = [
    "보내드리겠습니다",
    "보내드릴까요?",
    "발송 예정입니다",
    "보내드릴게요",
    "발송하겠습니다",
    "발송했나요?",
    "발송되면 알려드릴게요",
    "발송 완료 후 연락드리겠습니다",
    "발송 완료 예정입니다",
    "아직 발송되지 않았습니다",
    "발송하지 않았습니다",
    "발송을 못 했습니다",
    "보내 주셨습니다",
    "자료를 보내드린 후 연락드리겠습니다",
    "미발송 건입니다",
    "발송 완료 여부를 확인하겠습니다",
    "처리되었는지 확인해 보겠습니다",
    "접수하셨나요?",
    "변경을 원하시면 말씀해 주세요",
    "처리 기간은 3일입니다",
    "발송했다면 송장번호가 있습니다",
    "첨부파일을 확인해 주세요",
    "요청하신 자료",
    "접수되면 안내드리겠습니다",
]


@pytest.mark.parametrize("text", NOT_CLAIMS)
def test_promises_offers_questions_and_negations_are_not_claims(text):
    assert find_action_claims(text) == []


def test_one_claim_per_occurrence_across_kinds():
    claims = find_action_claims("제안서를 보내드렸고 접수 완료했습니다. 발주도 넣어 드렸고 주소도 변경했습니다.")
    assert [c.kind for c in claims] == ["send", "receipt", "register", "process"]


# --- sentences and clean text ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("안녕하세요. 단가는 3만원입니다.", ["안녕하세요.", "단가는 3만원입니다."]),
        ("확인했습니다.다음 주에 연락드릴게요.", ["확인했습니다.", "다음 주에 연락드릴게요."]),
        ("가능할까요?네 가능합니다!", ["가능할까요?", "네 가능합니다!"]),
        ("할인율은 12.5%입니다. 감사합니다", ["할인율은 12.5%입니다.", "감사합니다"]),
        ("1. 제품명 확인\n2. 단가 확인", ["1. 제품명 확인", "2. 단가 확인"]),
        ("감사합니다~ 좋은 하루 보내세요", ["감사합니다~", "좋은 하루 보내세요"]),
        ("가격은 3~5만원입니다.", ["가격은 3~5만원입니다."]),
        ("첫 줄\n\n둘째 줄", ["첫 줄", "둘째 줄"]),
        ('"정말요?" 네.', ['"정말요?"', "네."]),
        ("Dr.Jart+ 제품입니다.", ["Dr.Jart+ 제품입니다."]),
        ("그런데... 확인해 볼게요.", ["그런데...", "확인해 볼게요."]),
        ("네. 확인했습니다.", ["네.", "확인했습니다."]),
    ],
)
def test_sentence_boundaries(text, sentences):
    found = split_sentences(text)
    assert [sentence.text for sentence in found] == sentences
    assert all(text[sentence.start : sentence.end] == sentence.text for sentence in found)


def test_text_without_keeps_line_structure_and_tidies_spaces():
    text = "첫  문장입니다. 빠질 문장입니다.\n둘째 줄입니다.\n\n\n셋째 단락입니다."
    sentences = split_sentences(text)
    assert text_without(text, sentences, [1]) == "첫 문장입니다.\n둘째 줄입니다.\n\n셋째 단락입니다."
    assert text_without(text, sentences, range(len(sentences))) == ""


# --- names --------------------------------------------------------------------------------------------


@pytest.fixture
def brands():
    return NameIndex.build(
        ["삼성전자", "삼성", "LG전자", "LG", "오뚜기", "무지", "CJ제일제당", "갤럭시 S24", "Dr.Jart+"]
    )


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("삼성전자는 좋습니다", ["삼성전자"]),
        ("오뚜기에서 나온 제품", ["오뚜기"]),
        ("삼성 제품", ["삼성"]),
        ("삼성이 만든", ["삼성"]),
        ("무지개가 떴습니다", []),
        ("무지에서 샀어요", ["무지"]),
        ("LG전자와 LG", ["LG전자", "LG"]),
        ("ALGO 알고리즘", []),
        ("lg전자 제품", ["lg전자"]),
        ("ＬＧ전자 제품", ["ＬＧ전자"]),
        ("CJ제일제당 햇반", ["CJ제일제당"]),
        ("갤럭시 S24 출시", ["갤럭시 S24"]),
        ("갤럭시S24 출시", ["갤럭시S24"]),
        ("Dr.Jart+ 크림", ["Dr.Jart+"]),
        ("오뚜기몰 할인", ["오뚜기"]),
        ("삼성전자측 답변", ["삼성전자"]),
        ("신삼성 브랜드", []),
    ],
)
def test_names_are_found_as_words_leftmost_longest(brands, text, found):
    assert [match.text for match in brands.find(text)] == found


def test_legal_form_markers_are_not_part_of_a_vendor_name():
    vendors = NameIndex.build(["(주)대한물산", "주식회사 가온상회"])
    assert [m.name for m in vendors.find("㈜대한물산과 가온상회에서")] == ["(주)대한물산", "주식회사 가온상회"]
    assert "대한물산" in vendors and "가온 상회" not in vendors


def test_cached_name_index_reuses_the_index_for_the_same_names():
    names = ["한빛상사", "가온상회"]
    assert cached_name_index(names) is cached_name_index(list(names))
    index = NameIndex.build(names)
    assert cached_name_index(index) is index


def test_particles_are_stripped_shortest_first():
    assert strip_particle_variants("삼성전자에서는") == ["삼성전자에서는", "삼성전자에서", "삼성전자"]
    assert strip_particle_variants("가") == ["가"]


def test_fold_keeps_offsets():
    text = "ＬＧ전자 Samsung 삼성"
    assert fold(text) == "lg전자 samsung 삼성" and len(fold(text)) == len(text)


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("삼송전자 제품", [("삼송전자", "삼성전자")]),
        ("삼송전자는 좋습니다", [("삼송전자", "삼성전자")]),
        ("오뚜가 라면", [("오뚜가", "오뚜기")]),
        ("오뚝기에서 샀어요", [("오뚝기", "오뚜기")]),
        ("삼성전자가 만든", []),
        ("삼성전자 제품", []),
        ("삼성전기 제품", []),
        ("갤럭시 S25 출시", [("갤럭시 S25", "갤럭시 S24")]),
        ("LG전지 배터리", [("LG전지", "LG전자")]),
        ("Samsong", []),
    ],
)
def test_misspellings_are_one_character_from_an_evidence_brand(draft, expected):
    known = NameIndex.build(["삼성전자", "삼성전기", "오뚜기", "갤럭시 S24", "LG전자", "Samsung"])
    evidence = EvidenceText(["삼성전자와 오뚜기, 갤럭시 S24, LG전자 입고"])
    found = find_misspellings(draft, known_brands=known, evidence=evidence, min_length=3)
    assert [(m.word, m.brand) for m in found] == expected


def test_misspelling_of_a_brand_the_evidence_lacks_is_not_reported():
    known = NameIndex.build(["삼성전자", "오뚜기"])
    found = find_misspellings("삼송전자", known_brands=known, evidence=EvidenceText(["오뚜기"]), min_length=3)
    assert found == []


def test_an_evidence_word_is_not_a_misspelling():
    known = NameIndex.build(["하이트"])
    evidence = EvidenceText(["하이트 맥주와 화이트 와인"])
    assert find_misspellings("화이트 와인", known_brands=known, evidence=evidence, min_length=3) == []


def test_short_brands_get_exact_checks_only():
    known = NameIndex.build(["농심"])
    evidence = EvidenceText(["농심 라면"])
    assert find_misspellings("농삼 라면", known_brands=known, evidence=evidence, min_length=3) == []
    assert [m.word for m in find_misspellings("농삼", known_brands=known, evidence=evidence, min_length=2)] == ["농삼"]


def test_ending_stripper_takes_the_longest_ending_that_leaves_a_stem_and_repeats_up_to_its_limit():
    from agent.verification.korean import EndingStripper

    once = EndingStripper(["은", "요", "에서", "에서는"])
    twice = EndingStripper(["은", "요", "에서", "에서는"], times=2)
    assert once("계약서에서는") == "계약서"  # 에서는 before 에서
    assert once("할인은요") == "할인은" and twice("할인은요") == "할인"
    assert once("단은") == "단은"  # a one-character stem is not left
    assert EndingStripper(["에서는"], min_stem=1)("집에서는") == "집"
    assert once("") == ""
