"""The local extractor without the hub: Korean terms, query keywords, chunks and the graph draft."""

import pytest

from agent.knowledge.hub_extract import description_merge, document_chunks, graph_draft_build
from agent.knowledge.hub_runtime import CharacterTokenizer
from agent.knowledge.korean_terms import (
    BRAND,
    CONCEPT,
    ORGANIZATION,
    PRODUCT,
    ProperNounLexicon,
    hangul_noun,
    query_keywords,
    terms_extract,
)

LEXICON = ProperNounLexicon(
    [
        ("대한물산", "대한물산", ORGANIZATION),
        ("DH물산", "대한물산", ORGANIZATION),
        ("가온상사", "가온상사", ORGANIZATION),
        ("가온상회", "가온상회", ORGANIZATION),
        ("(주)미래식품", "(주)미래식품", ORGANIZATION),
        ("고운들", "고운들", BRAND),
        ("고운뜰", "고운뜰", BRAND),
        ("ACE", "ACE", BRAND),
    ]
)


@pytest.mark.parametrize(
    ("word", "noun"),
    [
        ("반품은", "반품"),
        ("세금계산서를", "세금계산서"),
        ("정산에서는", "정산"),
        ("단가를", "단가"),  # `가` here belongs to the noun
        ("단가", "단가"),
        ("한도", "한도"),
        ("결과", "결과"),
        ("유통기한은", "유통기한"),  # `한` here is no predicate ending
        ("신청해야", "신청"),
        ("발행합니다", "발행"),
        ("반영되며", "반영"),
        ("있습니다", None),
        ("빠르게", None),
        ("다르면", None),
        ("확인하나요", None),  # a stopword once its ending is gone
        ("후", None),
    ],
)
def test_a_hangul_word_gives_its_noun_or_none(word, noun):
    assert hangul_noun(word) == noun


def test_terms_are_typed_from_the_lexicon_and_the_word_shape():
    """Vendors and brands come from the lexicon (longest first, inside compounds, aliases to their name); Latin
    words with capitals or digits are products, known acronyms concepts, quantities nothing."""
    text = "대한물산전용 상품과 ㈜미래식품, DH물산은 K-200 모델을 EDI로 500ml 단위로 발주합니다. 고운뜰 양념은 7일까지."
    terms = [(term.name, term.kind) for term in terms_extract(text, LEXICON)]

    assert ("대한물산", ORGANIZATION) in terms
    assert terms.count(("대한물산", ORGANIZATION)) == 2  # the alias DH물산 is the same vendor
    assert ("(주)미래식품", ORGANIZATION) in terms
    assert ("K-200", PRODUCT) in terms
    assert ("EDI", CONCEPT) in terms
    assert ("고운뜰", BRAND) in terms and ("고운들", BRAND) not in terms
    assert ("발주", CONCEPT) in terms
    names = [name for name, _ in terms]
    assert "500ml" not in names and "일까지" not in names  # a quantity and a counter


def test_a_latin_brand_is_not_found_inside_a_longer_latin_word():
    assert [term.name for term in terms_extract("FACE 크림과 ACE 세제", LEXICON) if term.kind == BRAND] == ["ACE"]


def test_query_keywords_put_proper_nouns_first_and_never_come_back_empty():
    """Keywords go to LightRAG as given, so it never asks an LLM for them; no noun means the question itself."""
    high, low = query_keywords("반품 기한이 가온상회도 같나요?", LEXICON)
    assert low == ["가온상회", "반품", "기한"]
    assert high == ["가온상회 반품 기한"]
    assert query_keywords("네 감사합니다", LEXICON) == (["네 감사합니다"], ["네 감사합니다"])


def test_question_words_are_not_keywords():
    """`누가`, `어느`, `어디서` name nothing: as keywords they would dilute the share of the question's nouns an
    item must contain (the score's keyword boost), pushing `반품 비용 부담` under the floor for
    `반품 택배비는 누가 내나요?`."""
    assert query_keywords("반품 택배비는 누가 내나요?", LEXICON)[1] == ["반품", "택배비"]
    assert query_keywords("참술식품은 어느 회사가 납품하나요", LEXICON)[1][-2:] == ["회사", "납품"]
    assert "어디서" not in query_keywords("인증서는 어디서 받나요?", LEXICON)[1]


def test_chunks_follow_headings_and_stay_under_the_size():
    """A heading starts a chunk and its path heads every chunk of the section; long text is cut at sentences."""
    long_paragraph = " ".join(f"{number}번째 문장은 입고 기준을 설명합니다." for number in range(60))
    content = f"# 정책\n\n머리말입니다.\n\n## 반품\n\n반품은 7일 이내입니다.\n\n## 입고\n\n{long_paragraph}\n"

    chunks = document_chunks(content, max_chars=300)

    assert chunks[0] == "정책\n\n머리말입니다."
    assert chunks[1] == "정책 > 반품\n\n반품은 7일 이내입니다."
    assert all(chunk.startswith("정책 > 입고\n\n") for chunk in chunks[2:]) and len(chunks) > 4
    assert all(len(chunk) <= 300 + len("정책 > 입고\n\n") for chunk in chunks)
    assert "".join(chunks[2:]).count("입고 기준을 설명합니다.") == 60  # nothing lost


def test_the_graph_draft_relates_entities_of_one_sentence_and_describes_them_with_it():
    chunks = ["반품 기준\n\n대한물산 상품은 검수 후 3일 이내에 반품합니다. 정산은 매월 10일에 진행합니다."]
    draft = graph_draft_build(
        doc_id="doc-1",
        file_path="doc-1:반품.md",
        chunks=chunks,
        lexicon=LEXICON,
        entities_per_chunk=10,
        relations_per_chunk=12,
    )

    assert draft.chunks == {"doc-1-0": chunks[0]}
    assert draft.entities["대한물산"].kind == ORGANIZATION
    # Each description line is the whole sentence with its section path as context; the heading is no sentence.
    assert draft.entities["대한물산"].sentences == ["[반품 기준] 대한물산 상품은 검수 후 3일 이내에 반품합니다."]
    assert ("대한물산", "반품") in draft.relations or ("반품", "대한물산") in draft.relations
    # 정산 is in another sentence than 대한물산: no relation between them.
    assert not any({"대한물산", "정산"} == {relation.source, relation.target} for relation in draft.relations.values())
    relation = next(iter(draft.relations.values()))
    assert relation.chunk_aliases == ["doc-1-0"] and relation.occurrences == {"doc-1-0": 1}


def test_only_nouns_shared_with_other_documents_become_entities_and_headings_describe_nothing():
    """With the corpus known, a common noun becomes an entity only if it is a domain term (two documents or the
    product catalogue); proper nouns always do. A heading path is context: it relates nothing, and a sentence cut
    by a soft line break is described whole."""
    chunks = ["정산 일정 > 지급\n\n대한물산 대금은 다음 달 15일에\n지급하며 정확한 금액은 정산서에 있습니다."]
    draft = graph_draft_build(
        doc_id="doc-3",
        file_path="doc-3:x",
        chunks=chunks,
        lexicon=LEXICON,
        entities_per_chunk=10,
        relations_per_chunk=12,
        domain_terms=frozenset({"대금", "정산서"}),
    )

    assert set(draft.entities) == {"대한물산", "대금", "정산서"}
    whole = "[정산 일정 > 지급] 대한물산 대금은 다음 달 15일에 지급하며 정확한 금액은 정산서에 있습니다."
    assert all(entity.sentences == [whole] for entity in draft.entities.values())
    assert all(relation.sentences == [whole] for relation in draft.relations.values())


def test_the_graph_draft_respects_its_caps_but_keeps_every_proper_noun():
    nouns = "가격 수량 품질 포장 배송 입고 출고 정산 계약 발주 재고 물류"
    sentence = f"대한물산 가온상사 가온상회 {nouns} 입니다."
    draft = graph_draft_build(
        doc_id="doc-2",
        file_path="doc-2:x",
        chunks=[sentence],
        lexicon=LEXICON,
        entities_per_chunk=5,
        relations_per_chunk=4,
    )
    assert {"대한물산", "가온상사", "가온상회"} <= set(draft.entities)
    assert len(draft.entities) == 5
    assert len(draft.relations) == 4


def test_descriptions_merge_without_repeats_and_within_the_limit():
    merged = description_merge("첫 문장.\n둘째 문장.", ["둘째 문장.", "셋째 문장."])
    assert merged == "첫 문장.\n둘째 문장.\n셋째 문장."
    assert len(description_merge("", ["가" * 400, "나" * 400])) <= 600


def test_the_tokenizer_is_one_token_per_character_and_round_trips():
    tokenizer = CharacterTokenizer()
    assert tokenizer.encode("반품 7일") == [ord(char) for char in "반품 7일"]
    assert tokenizer.decode(tokenizer.encode("정산 ₩12,500")) == "정산 ₩12,500"
