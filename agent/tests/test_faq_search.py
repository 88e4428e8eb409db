"""The FAQ retrieval pipeline of seed 001 with a controllable embedder and reranker (the index and the database
are real: Qdrant local mode in a temporary folder, PostgreSQL)."""

import math

import numpy as np
import pytest
from django.test.utils import CaptureQueriesContext

from agent.knowledge import embeddings, rerank
from agent.knowledge.embeddings import Embedder, ScoreThresholds, text_bigrams
from agent.knowledge.faq import faq_search, faq_search_traced, keyword_retry_block_reason
from agent.knowledge.faq_index import FaqIndexUnavailable, faq_index_reset
from agent.knowledge.faq_services import faq_entry_create
from agent.knowledge.rerank import ConfidenceThresholds, Reranker, RerankError

pytestmark = pytest.mark.django_db

QUERY = "질의"


class AngleEmbedder(Embedder):
    """Puts the query on the x axis and each known text at a chosen cosine to it; unknown texts are orthogonal."""

    name = "angle"

    def __init__(self):
        self.cosines: dict[str, float] = {}

    @property
    def dimension(self) -> int:
        return 3

    def _vector(self, text: str) -> list[float]:
        if text not in self.cosines:
            return [0.0, 0.0, 1.0]
        cosine = self.cosines[text]
        return [cosine, math.sqrt(max(0.0, 1 - cosine * cosine)), 0.0]

    def embed_queries(self, texts):
        return np.array([[1.0, 0.0, 0.0] for _ in texts], dtype=np.float32)

    def embed_documents(self, texts):
        return np.array([self._vector(text) for text in texts], dtype=np.float32)

    def score_thresholds(self):
        return ScoreThresholds(search=0.6, relaxed=0.5)


class ScriptedReranker(Reranker):
    """Scores passages by the question they contain; unknown questions score `default`."""

    name = "scripted"

    def __init__(self, default=0.5):
        self.scores: dict[str, float] = {}
        self.default = default
        self.fail = False
        self.calls: list[list[str]] = []
        self.vectors: list[dict] = []

    def rerank(self, query, passages, **vectors):
        if self.fail:
            raise RerankError("down")
        self.calls.append(list(passages))
        self.vectors.append(vectors)
        return [self.scores.get(rerank.question_of(passage), self.default) for passage in passages]

    def confidence_thresholds(self):
        return ConfidenceThresholds(floor=0.2, low=0.65, high=0.75)


@pytest.fixture
def faq_index(settings, tmp_path):
    settings.QDRANT_URL = ""
    settings.QDRANT_PATH = str(tmp_path / "qdrant")
    settings.FAQ_HYBRID_SEARCH = False
    faq_index_reset()
    yield
    faq_index_reset()


@pytest.fixture
def embedder(monkeypatch, faq_index):
    fake = AngleEmbedder()
    monkeypatch.setitem(embeddings._embedders, ("local",), fake)
    return fake


@pytest.fixture
def reranker(monkeypatch):
    fake = ScriptedReranker()
    monkeypatch.setitem(rerank._rerankers, ("local",), fake)
    return fake


@pytest.fixture
def add(embedder, django_capture_on_commit_callbacks):
    def add(question, *, cosine=0.0, answer="답변입니다.", **fields):
        embedder.cosines[question] = cosine
        with django_capture_on_commit_callbacks(execute=True):
            return faq_entry_create(question=question, answer=answer, **fields)

    return add


def test_only_entries_above_the_dense_threshold_are_candidates(add, reranker):
    """The first pass keeps points at or above the provider's threshold (0.6 here); a 0.3 neighbour is not reranked."""
    near = add("가까운 질문", cosine=0.7)
    add("먼 질문", cosine=0.3)

    items, trace = faq_search_traced(QUERY)

    assert [item.reference for item in items] == [f"faq:{near.pk}"]
    assert trace.dense_hits == 1 and trace.relaxed_retry is False
    assert reranker.calls == [["질문: 가까운 질문\n답변: 답변입니다."]]


def test_an_entry_whose_answer_holds_what_is_asked_is_found_by_its_passage(add, embedder, reranker):
    """The stored question is far (0.1) but the whole passage is near (0.8): the passage search brings the entry,
    once, with the `passage` stage; an entry near by both is one candidate of the `dense` stage."""
    embedder.cosines[rerank.passage_text("재고 현황을 볼 수 있나요?", "재고 데이터는 1시간마다 갱신됩니다.")] = 0.8
    embedder.cosines[rerank.passage_text("재고 갱신 주기", "답변입니다.")] = 0.75
    by_answer = add("재고 현황을 볼 수 있나요?", cosine=0.1, answer="재고 데이터는 1시간마다 갱신됩니다.")
    by_both = add("재고 갱신 주기", cosine=0.7)

    items, trace = faq_search_traced(QUERY)

    assert trace.dense_hits == 1 and trace.passage_hits == 2 and trace.candidates == 2
    stages = {item.reference: item.extra["stage"] for item in items}
    assert stages == {f"faq:{by_answer.pk}": "passage", f"faq:{by_both.pk}": "dense"}
    assert len(reranker.calls) == 1 and len(reranker.calls[0]) == 2


def test_without_the_passage_search_only_stored_questions_are_candidates(add, embedder, reranker, settings):
    """FAQ_PASSAGE_SEARCH off: the entry near only by its passage is not searched for."""
    settings.FAQ_PASSAGE_SEARCH = False
    embedder.cosines[rerank.passage_text("재고 현황을 볼 수 있나요?", "재고 데이터는 1시간마다 갱신됩니다.")] = 0.8
    add("재고 현황을 볼 수 있나요?", cosine=0.1, answer="재고 데이터는 1시간마다 갱신됩니다.")
    near = add("재고 갱신 주기", cosine=0.7)

    items, trace = faq_search_traced(QUERY)

    assert trace.passage_hits == 0
    assert [item.reference for item in items] == [f"faq:{near.pk}"]


def test_an_empty_first_pass_retries_once_with_the_relaxed_threshold(add, reranker):
    """Nothing at 0.6 → one retry at 0.5, which finds the 0.55 entry; the item records the relaxed stage."""
    entry = add("조금 먼 질문", cosine=0.55)

    items, trace = faq_search_traced(QUERY)

    assert trace.dense_hits == 0 and trace.relaxed_retry is True and trace.relaxed_hits == 1
    assert [item.reference for item in items] == [f"faq:{entry.pk}"]
    assert items[0].extra["stage"] == "relaxed"


def test_reranker_orders_the_candidates_and_its_score_is_the_evidence_score(add, reranker):
    """Dense order 0.9 > 0.7 is replaced by the reranker's 0.4 < 0.8; top N caps the list."""
    first = add("덴스 1등", cosine=0.9)
    second = add("덴스 2등", cosine=0.7)
    reranker.scores = {"덴스 1등": 0.4, "덴스 2등": 0.8}

    items = faq_search(QUERY)

    assert [item.reference for item in items] == [f"faq:{second.pk}", f"faq:{first.pk}"]
    assert [item.score for item in items] == [0.8, 0.4]
    assert faq_search(QUERY, limit=1)[0].reference == f"faq:{second.pk}"


def test_evidence_item_has_the_shared_shape(add, reranker):
    """source_kind faq, reference faq:<id>, text "질문: …\\n답변: …", title = question, url, score = rerank score."""
    entry = add(
        "세금계산서 발행일?", cosine=0.8, answer="매월 5일까지", url="https://example.test/tax", category="정산"
    )
    reranker.scores = {"세금계산서 발행일?": 0.9}

    (item,) = faq_search(QUERY)

    assert item.source_kind == "faq"
    assert item.reference == f"faq:{entry.pk}"
    assert item.text == "질문: 세금계산서 발행일?\n답변: 매월 5일까지"
    assert item.title == "세금계산서 발행일?"
    assert item.url == "https://example.test/tax"
    assert item.score == 0.9
    assert item.extra["confidence"] == "high" and item.extra["category"] == "정산"


def test_a_candidate_under_the_rerank_floor_is_dropped(add, reranker):
    """Passing the dense threshold is not enough when the reranker puts it under the floor (0.2 here)."""
    add("점수 낮은 질문", cosine=0.9)
    reranker.scores = {"점수 낮은 질문": 0.1}

    assert faq_search(QUERY) == []


def test_when_the_reranker_fails_the_dense_order_is_kept(add, reranker):
    """A reranker outage degrades to retrieval order with the dense scores, it does not lose the evidence."""
    add("덴스 1등", cosine=0.9)
    add("덴스 2등", cosine=0.7)
    reranker.fail = True

    items, trace = faq_search_traced(QUERY)

    assert trace.rerank_failed is True
    assert [item.title for item in items] == ["덴스 1등", "덴스 2등"]
    assert items[0].score == pytest.approx(0.9, abs=1e-3)


@pytest.mark.parametrize(
    ("query", "reason"),
    [("할인", "over_broad"), ("요금?", "over_broad"), ("감면은요", "over_broad"), ("할인 요금", "over_broad"),
     ("?", "too_short"), ("ㅋ", "too_short"), ("희망드림", ""), ("단말기는 어디서 받나요", "")],
)  # fmt: skip
def test_keyword_retry_guard(query, reason):
    """Over-broad single words (and only such words) or a query under the minimum length never retry by keyword."""
    assert keyword_retry_block_reason(query) == reason


def test_keyword_retry_never_runs_for_an_over_broad_word(add, reranker):
    """`할인` appears in an entry, but a substring hit on it proves nothing: no retry, no evidence."""
    add("행사 할인 분담은?", cosine=0.0)
    reranker.default = 0.99

    items, trace = faq_search_traced("할인")

    assert items == []
    assert trace.keyword_retry == "blocked:over_broad"


def test_keyword_retry_is_accepted_when_the_reranker_clears_the_low_confidence_threshold(add, reranker):
    """A short proper noun under both dense thresholds is found by substring (particles included) and kept at 0.9."""
    entry = add("희망드림 기획전은 무엇인가요?", cosine=0.1)
    reranker.scores = {"희망드림 기획전은 무엇인가요?": 0.9}

    items, trace = faq_search_traced("희망드림은요?")

    assert trace.relaxed_retry is True and trace.keyword_retry == "accepted"
    assert [item.reference for item in items] == [f"faq:{entry.pk}"]
    assert items[0].extra["stage"] == "keyword"


def test_keyword_retry_reranks_with_the_vectors_stored_in_the_index(add, reranker, embedder):
    """The keyword matches are in the index already: their stored vectors go to the reranker, so the local
    reranker does not embed them again."""
    add("희망드림 기획전은 무엇인가요?", cosine=0.1)
    reranker.scores = {"희망드림 기획전은 무엇인가요?": 0.9}

    faq_search_traced("희망드림은요?")

    stored = embedder.embed_documents(["희망드림 기획전은 무엇인가요?"])[0]
    keyword_call = reranker.vectors[-1]
    assert np.allclose(keyword_call["question_vectors"][0], stored)
    assert len(keyword_call["passage_vectors"]) == 1


def test_keyword_retry_is_rejected_when_the_reranker_disagrees(add, reranker):
    """The substring hit scores 0.5 < 0.65: the references stay empty so the agent falls back to guidance."""
    add("희망드림 기획전은 무엇인가요?", cosine=0.1)
    reranker.scores = {"희망드림 기획전은 무엇인가요?": 0.5}

    items, trace = faq_search_traced("희망드림")

    assert items == []
    assert trace.keyword_retry == "rejected"


def test_keyword_retry_reranks_at_most_three_matches(add, reranker):
    """Five entries contain the term; at most FAQ_KEYWORD_RETRY_LIMIT (3) go to the reranker."""
    for number in range(5):
        add(f"희망드림 안내 {number}", cosine=0.0)
    reranker.default = 0.9

    items, trace = faq_search_traced("희망드림")

    assert trace.keyword_hits == 3
    assert len(reranker.calls[-1]) == 3 and len(items) == 3


def test_keyword_retry_does_not_run_when_the_vector_search_found_evidence(add, reranker):
    """The keyword retry is a last resort: dense evidence present → no retry."""
    add("희망드림 기획전은 무엇인가요?", cosine=0.8)

    _, trace = faq_search_traced("희망드림")

    assert trace.keyword_retry == ""


def test_hybrid_sparse_only_candidate_needs_the_low_confidence_score(add, reranker, settings):
    """With hybrid search a lexical match that failed the dense thresholds is kept only when the reranker gives
    it at least the low-confidence threshold (0.65)."""
    settings.FAQ_HYBRID_SEARCH = True
    settings.FAQ_RARE_TERM_ENTRIES = 0  # the entry names a rare word of the query: that rule is tested on its own
    add("대한물산 전용 물류센터는 어디인가요?", cosine=0.0)

    reranker.scores = {"대한물산 전용 물류센터는 어디인가요?": 0.5}
    items, trace = faq_search_traced("대한물산 물류센터 위치")
    assert trace.sparse_hits == 1 and items == []

    reranker.scores = {"대한물산 전용 물류센터는 어디인가요?": 0.7}
    items = faq_search("대한물산 물류센터 위치")
    assert [item.extra["stage"] for item in items] == ["sparse"]


def test_retired_and_deleted_entries_are_not_found(add, reranker, django_capture_on_commit_callbacks):
    """A changed question retires the old entry: only the new one is evidence."""
    from agent.knowledge.faq_services import faq_entry_update

    old = add("예전 질문", cosine=0.9)
    reranker.default = 0.9
    embeddings._embedders[("local",)].cosines["새 질문"] = 0.9
    with django_capture_on_commit_callbacks(execute=True):
        new = faq_entry_update(old.pk, question="새 질문", answer="답변입니다.")

    assert [item.reference for item in faq_search(QUERY)] == [f"faq:{new.pk}"]


def test_blank_query_returns_nothing(faq_index):
    assert faq_search("  ?! ") == []


def test_an_index_held_by_a_process_that_does_not_serve_it_is_an_error_not_keyword_results(add, reranker, settings):
    """The local folder held by a client that does not serve it (here a bare QdrantClient): the search says the
    index is unavailable instead of answering from the keyword retry as if it were the FAQ search."""
    from qdrant_client import QdrantClient

    add("희망드림 기획전은 무엇인가요?", cosine=0.9)
    reranker.scores = {"희망드림 기획전은 무엇인가요?": 0.9}
    faq_index_reset()
    other = QdrantClient(path=settings.QDRANT_PATH)
    try:
        with pytest.raises(FaqIndexUnavailable, match="held by another process"):
            faq_search_traced("희망드림 참여")
    finally:
        other.close()


def test_a_zero_budget_returns_nothing_without_searching(faq_index):
    """A budget of 0 (EVIDENCE_BUDGET_FAQ=0) switches the FAQ off instead of falling back to the default top N."""
    items, trace = faq_search_traced("반품 접수는 어떻게 하나요?", limit=0)
    assert items == []
    assert trace.timings_ms == {}


def test_keyword_matches_ignore_case(faq_index):
    """LOWER(column) LIKE keeps Latin case-insensitive, per field."""
    from agent.knowledge.faq import faq_keyword_matches

    faq_entry_create(question="HACCP 인증서는 어디서 받나요?", answer="파트너센터 [품질] 메뉴에서 내려받습니다.")
    faq_entry_create(question="반품 기한", answer="수령 후 7일 이내 Return 신청")
    assert [e.question for e in faq_keyword_matches(["haccp"], limit=3)] == ["HACCP 인증서는 어디서 받나요?"]
    assert [e.question for e in faq_keyword_matches(["RETURN"], limit=3, field="answer")] == ["반품 기한"]
    assert faq_keyword_matches(["return"], limit=3, field="question") == []


def test_keyword_matches_find_two_syllable_terms_inside_words_and_need_every_bigram(faq_index):
    """`단가` inside `단가는` is found; `참기름` needs 참기 and 기름 together, in one word of either field."""
    from agent.knowledge.faq import faq_keyword_matches

    faq_entry_create(question="공급 단가는 언제 바뀌나요?", answer="분기마다 공지합니다.")
    faq_entry_create(question="참기 신청", answer="기름 종류는 따로 문의해 주세요.")
    faq_entry_create(question="참기름 유통기한", answer="제조일로부터 18개월입니다.")
    assert [e.question for e in faq_keyword_matches(["단가"], limit=3)] == ["공급 단가는 언제 바뀌나요?"]
    assert [e.question for e in faq_keyword_matches(["참기름"], limit=3)] == ["참기름 유통기한"]
    assert [e.question for e in faq_keyword_matches(["18개월"], limit=3, field="answer")] == ["참기름 유통기한"]


def test_keyword_match_query_uses_the_bigram_index_on_postgresql(faq_index):
    """The keyword retry must not scan every entry: at the size of a real FAQ store its query is planned on the
    GIN index of search_bigrams, and the bigrams stored are those of question and answer."""
    from django.db import connection

    from agent.knowledge.faq import faq_keyword_matches
    from agent.models import FaqEntry

    with connection.cursor() as cursor:
        # 20,000 filler entries made in SQL (fast); their bigrams come from syllables that 단가 and 공지 lack.
        cursor.execute(
            """
            INSERT INTO agent_faqentry (question, answer, question_key, category, url, source, source_id,
                source_created_at, status, point_id, created_at, updated_at, search_bigrams)
            SELECT n || '번 질문', '답변', md5(n::text), '', '', '', '', now(), 'active', gen_random_uuid(), now(),
                now(), (SELECT jsonb_agg(substr('나다라마바사아자차카타파하', 1 + (random() * 11)::int, 2))
                        FROM generate_series(1, 40 + n % 2))
            FROM generate_series(1, 20000) AS n
            """
        )
    faq_entry_create(question="공급 단가는 언제 바뀌나요?", answer="분기마다 공지합니다.")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agent_faqentry")
        with CaptureQueriesContext(connection) as captured:
            found = faq_keyword_matches(["단가", "공지"], limit=3)
        cursor.execute("EXPLAIN " + captured.captured_queries[-1]["sql"])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert [entry.question for entry in found] == ["공급 단가는 언제 바뀌나요?"]
    assert "agent_faqentry_search_bigrams_gin" in plan, plan
    assert FaqEntry.objects.get(question="공급 단가는 언제 바뀌나요?").search_bigrams == text_bigrams(
        "공급 단가는 언제 바뀌나요? 분기마다 공지합니다."
    )


def test_an_entry_naming_a_rare_word_of_the_question_and_another_is_found_in_a_place_of_its_own(add, reranker):
    """The embedding misses `시식` (cosine 0), the reranker scores it low: the entry still holds the question's
    rare word and another of its words (`행사`), so it names the subject asked and takes a place among the top
    entries, in place of the lowest dense one."""
    for number in range(5):
        add(f"행사 안내 {number}번은 무엇인가요?", cosine=0.9)
    tasting = add("시식 행사를 하고 싶어요.", answer="시식 행사는 행사 3주 전까지 신청해 주세요.", cosine=0.0)
    reranker.scores = {"시식 행사를 하고 싶어요.": 0.1}

    items, trace = faq_search_traced("시식 행사 하려면 언제까지 신청해야 돼요?", limit=5)

    assert f"faq:{tasting.pk}" in [item.reference for item in items]
    assert len(items) == 5
    assert next(item for item in items if item.reference == f"faq:{tasting.pk}").extra["stage"] == "named"
    assert trace.named_subject_hits == 1


def test_no_entry_is_named_by_a_common_word_a_word_no_entry_has_or_a_word_inside_another(add, reranker, settings):
    """`휴가` is in no entry and `신청` in many: nothing is named. A word used by more than FAQ_RARE_TERM_ENTRIES
    entries is not rare; `도로` inside `별도로` does not begin a word; `안에` says where, not what."""
    settings.FAQ_RARE_TERM_ENTRIES = 2
    for number in range(3):
        add(f"신청 절차 {number}번은?", answer="신청은 파트너센터에서 합니다.", cosine=0.0)
    add("입고는 어떻게 하나요?", answer="별도로 입고하며 3일 안에 검수합니다.", cosine=0.0)
    reranker.default = 0.3  # under the keyword retry's threshold: only the named-subject rule could bring them

    assert faq_search_traced("휴가 신청은 어떻게 하나요?")[0] == []
    assert faq_search_traced("입고 온도 몇 도로 맞춰요?")[0] == []
    assert faq_search_traced("입고 며칠 안에 돼요?")[0] == []
    # A verb form is no subject word: `검수해요` the analyser reads as a noun with its ending, `맞춰요` as a verb.
    assert faq_search_traced("입고 온도 맞춰요?")[0] == []
    [named] = faq_search_traced("입고 검수는 며칠 안에 해요?")[0]
    assert named.extra["stage"] == "named"
