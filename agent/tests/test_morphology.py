"""The analyser's reading of a question's words: which are nouns, and which name no subject."""

import pytest

from agent.llm import morphology


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # a particle is read off even after one syllable
        ("회수 차는 언제 와요?", {"차는": "차"}),
        ("11월에 납품한 거 돈은 언제 들어와요?", {"납품한": "납품", "거": morphology.DEPENDENT, "돈은": "돈"}),
        # a dependent noun names no subject
        ("이천 센터 쪽은요?", {"쪽은요": morphology.DEPENDENT}),
        # ...but not when it goes on into a noun: 대금 is read 대 + 금
        ("7월에 저희 대금 왜 늦게 들어왔었죠?", {}),
        # the dependent noun of an adnominal ending, written without its space
        ("참기름 30박스 발주한거 납기 언제예요?", {"발주한거": "발주"}),
        # a case of a noun, or the time of it, is about the noun
        ("고객 교환건 회수 확인되면 며칠 안에 보내요?", {"교환건": "교환", "확인되면": "확인"}),
        ("올해 추석때 이천센터 며칠부터 쉬었었죠?", {"추석때": "추석", "며칠부터": "며칠"}),
        # 때 after an adnominal ending, written without its space: the verb's noun
        ("상품명 등록할때 어떤 순서로 써야돼요?", {"등록할때": "등록", "순서로": "순서"}),
        # 되다 and 받다 after a noun keep the noun
        ("행사 실적 데이터는 언제 업데이트돼요?", {"데이터는": "데이터", "업데이트돼요": "업데이트"}),
        ("지급받을 통장을 바꾸려면 어떻게 해요?", {"지급받을": "지급", "통장을": "통장"}),
        # a one-syllable noun only before a subject, topic or object particle: 바로 is an adverb, not 바 with 로
        ("3PL 업체 창고에서 저희 물건 바로 내보내도 문제 없나요?", {"창고에서": "창고"}),
    ],
)
def test_word_nouns(question, expected):
    assert morphology.word_nouns(question) == expected


def test_words_that_are_nouns_alone_or_verbs_are_not_listed():
    nouns = morphology.word_nouns("재고 실사는 얼마나 자주 받고 해요?")

    assert "재고" not in nouns  # a bare noun needs no reading
    assert not {"얼마나", "자주", "받고", "해요"} & nouns.keys()


def test_compound_parts():
    """A compound written as one word is named by its nouns written apart; one noun, or a noun with a suffix, is not
    split."""
    assert morphology.compound_parts("김해센터") == ("김해", "센터")
    assert morphology.compound_parts("세금계산서") == ("세금", "계산서")
    assert morphology.compound_parts("참기름") == ()
    assert morphology.compound_parts("교환건") == ()
