"""FAQ retrieval in the shape of seed 001, and the reads the admin uses.

    embed the query → dense search (threshold) → one relaxed retry when empty → (+ sparse candidates, RRF)
    → rerank "질문: q\\n답변: a" passages → top N
    nothing? → guarded keyword retry (substring search, at most 3) accepted only when the reranker agrees

Dense candidates are ordered by the reranker, as in the seed, and dropped only under the reranker's floor (0 for
an HTTP reranker, i.e. the seed). A sparse-only or keyword candidate never passed a semantic threshold, so it is
kept only when its rerank score clears the low-confidence threshold. When the embedding endpoint is unavailable,
the search degrades to the keyword retry (a database read, named in the trace); when the index itself is
unavailable, `FaqIndexUnavailable` is raised — a caller that cannot reach the index is told so, it never gets
keyword results passed off as the FAQ search.
"""

import logging
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection
from django.db.models import Count, Q
from django.db.models.functions import Lower

from agent.knowledge.embeddings import (
    EmbeddingError,
    embedder_get,
    normalise_text,
    search_terms,
    sparse_vector,
    text_bigrams,
)
from agent.knowledge.faq_index import (
    PASSAGE,
    FaqIndexUnavailable,
    faq_index_dense_search,
    faq_index_sparse_search,
    faq_index_stored_vectors,
    faq_index_sync,
)
from agent.knowledge.rerank import RerankError, passage_text, reranker_get
from agent.knowledge.synonyms import spoken_forms_written, verb_noun
from agent.knowledge.types import EvidenceItem
from agent.models import FaqEntry

logger = logging.getLogger(__name__)

_RRF_K = 60  # the usual reciprocal-rank-fusion constant: rank matters, raw scores of the two lists do not mix


@dataclass
class FaqSearchTrace:
    """What each stage did, for the audit trail of an answer and for the benchmark's split by stage."""

    query: str
    dense_threshold: float = 0.0
    relaxed_threshold: float = 0.0
    dense_hits: int = 0
    passage_hits: int = 0
    relaxed_retry: bool = False
    relaxed_hits: int = 0
    sparse_hits: int = 0
    candidates: int = 0
    reranker: str = ""
    rerank_failed: bool = False
    vector_error: str = ""  # the index or the embedding endpoint was unavailable; only the keyword retry ran
    low_confidence_threshold: float = 0.0
    keyword_retry: str = ""  # "" not needed, "blocked:<reason>", "no_match", "rejected", "accepted"
    keyword_hits: int = 0
    named_subject_hits: int = 0
    returned: int = 0
    top_score: float | None = None
    timings_ms: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class _Candidate:
    faq_id: int
    question: str
    answer: str
    category: str
    url: str
    stage: str  # "dense" | "passage" | "relaxed" | "sparse" | "keyword" | "named"
    dense_score: float | None = None
    question_vector: list | None = None
    passage_vector: list | None = None
    as_of: str | None = None  # when the entry was written at its source (ISO 8601): the newer answer wins
    fused: float = 0.0
    rerank_score: float = 0.0


@contextmanager
def _timed(trace: FaqSearchTrace, stage: str):
    started = time.perf_counter()
    try:
        yield
    finally:
        trace.timings_ms[stage] = trace.timings_ms.get(stage, 0.0) + (time.perf_counter() - started) * 1000


def faq_search(query: str, *, limit: int | None = None) -> list[EvidenceItem]:
    """Evidence items from the FAQ store, best first (score = rerank score)."""
    return faq_search_traced(query, limit=limit)[0]


def faq_search_traced(query: str, *, limit: int | None = None) -> tuple[list[EvidenceItem], FaqSearchTrace]:
    query = spoken_forms_written((query or "").strip())
    limit = settings.FAQ_TOP_N_FOR_LLM if limit is None else limit
    trace = FaqSearchTrace(query=query)
    if limit <= 0:
        return [], trace
    if not normalise_text(query):
        trace.keyword_retry = "blocked:empty"
        return [], trace

    embedder = embedder_get()
    thresholds = embedder.score_thresholds()
    reranker = reranker_get()
    confidence = reranker.confidence_thresholds()
    trace.dense_threshold, trace.relaxed_threshold = thresholds.search, thresholds.relaxed
    trace.reranker, trace.low_confidence_threshold = reranker.name, confidence.low

    query_vector, accepted = None, []
    try:
        query_vector, shortlist = _vector_candidates(query, embedder, thresholds, trace)
    except EmbeddingError as error:
        # No vector search this time; the keyword retry below still reads the database.
        logger.warning("FAQ vector search unavailable: %s", error)
        trace.vector_error = str(error)
    else:
        with _timed(trace, "rerank"):
            accepted = _rerank_and_accept(query, query_vector, shortlist, reranker, confidence, trace)

    if not accepted:
        with _timed(trace, "keyword"):
            accepted = _keyword_retry(query, query_vector, reranker, confidence.low, trace)
    if query_vector is not None:
        with _timed(trace, "named_subject"):
            named = _named_subject_entries(query, query_vector, reranker, accepted, trace)
        accepted = _with_places_for(named, accepted, limit)

    accepted.sort(key=lambda candidate: -candidate.rerank_score)
    items = [_evidence(candidate, confidence) for candidate in accepted[:limit]]
    trace.returned = len(items)
    trace.top_score = items[0].score if items else None
    return items, trace


def _vector_candidates(query, embedder, thresholds, trace) -> tuple:
    """Sync, embed, dense search of the stored questions and of the whole passages with one relaxed retry, optional
    sparse search; fused by reciprocal rank. The passage search finds an entry whose answer, not its question, holds
    what is asked ("재고 숫자는 얼마 간격으로 반영" → "재고 현황을 볼 수 있나요? … 1시간마다 갱신")."""
    with _timed(trace, "sync"):
        faq_index_sync()
    with _timed(trace, "embed"):
        query_vector = embedder.embed_queries([query])[0]
    with _timed(trace, "dense"):
        by_question, by_passage = _dense_hits(query_vector, thresholds.search)
        trace.dense_hits, trace.passage_hits = len(by_question), len(by_passage)
        stage = "dense"
        if not by_question and not by_passage:
            trace.relaxed_retry, stage = True, "relaxed"
            by_question, by_passage = _dense_hits(query_vector, thresholds.relaxed)
            trace.relaxed_hits = len(by_question) + len(by_passage)
    candidates = {hit.payload["faq_id"]: _candidate(hit, stage, dense_score=hit.score) for hit in by_question}
    for hit in by_passage:
        candidates.setdefault(
            hit.payload["faq_id"], _candidate(hit, "passage" if stage == "dense" else stage, dense_score=hit.score)
        )
    _fuse(candidates, [hit.payload["faq_id"] for hit in by_question])
    _fuse(candidates, [hit.payload["faq_id"] for hit in by_passage])

    if settings.FAQ_HYBRID_SEARCH:
        with _timed(trace, "sparse"):
            sparse_hits = faq_index_sparse_search(sparse_vector(query), limit=settings.FAQ_TOP_K)
        trace.sparse_hits = len(sparse_hits)
        for hit in sparse_hits:
            candidates.setdefault(hit.payload["faq_id"], _candidate(hit, "sparse"))
        _fuse(candidates, [hit.payload["faq_id"] for hit in sparse_hits])

    shortlist = sorted(candidates.values(), key=lambda candidate: -candidate.fused)[: settings.FAQ_RERANK_CANDIDATES]
    trace.candidates = len(shortlist)
    return query_vector, shortlist


def _dense_hits(query_vector, threshold: float) -> tuple[list, list]:
    """The nearest stored questions and (with FAQ_PASSAGE_SEARCH) the nearest whole passages, at or above
    `threshold`."""
    by_question = faq_index_dense_search(query_vector, limit=settings.FAQ_TOP_K, score_threshold=threshold)
    if not settings.FAQ_PASSAGE_SEARCH:
        return by_question, []
    by_passage = faq_index_dense_search(
        query_vector, limit=settings.FAQ_TOP_K, score_threshold=threshold, using=PASSAGE
    )
    return by_question, by_passage


def _candidate(hit, stage: str, *, dense_score: float | None = None) -> _Candidate:
    payload, vectors = hit.payload, hit.vector or {}
    return _Candidate(
        faq_id=payload["faq_id"],
        question=payload["question"],
        answer=payload["answer"],
        category=payload.get("category", ""),
        url=payload.get("url", ""),
        stage=stage,
        dense_score=dense_score,
        question_vector=vectors.get("dense"),
        passage_vector=vectors.get(PASSAGE),
        as_of=payload.get("source_created_at"),
    )


def _fuse(candidates: dict[int, _Candidate], ranked_ids: list[int]) -> None:
    for rank, faq_id in enumerate(ranked_ids):
        candidates[faq_id].fused += 1.0 / (_RRF_K + rank + 1)


def _rerank(query, query_vector, candidates: list[_Candidate], reranker, trace) -> None:
    """Set each candidate's rerank score; when the reranker fails, fall back to the dense score."""
    if not candidates:
        return
    passages = [passage_text(candidate.question, candidate.answer) for candidate in candidates]
    vectors = {"query_vector": query_vector}
    if all(candidate.passage_vector is not None for candidate in candidates):
        vectors["question_vectors"] = [candidate.question_vector for candidate in candidates]
        vectors["passage_vectors"] = [candidate.passage_vector for candidate in candidates]
    try:
        scores = reranker.rerank(query, passages, **vectors)
    except RerankError as error:
        logger.warning("FAQ rerank failed, keeping the retrieval order: %s", error)
        trace.rerank_failed = True
        scores = [candidate.dense_score or 0.0 for candidate in candidates]
    for candidate, score in zip(candidates, scores, strict=True):
        candidate.rerank_score = float(score)


def _rerank_and_accept(query, query_vector, shortlist, reranker, confidence, trace) -> list[_Candidate]:
    _rerank(query, query_vector, shortlist, reranker, trace)
    if trace.rerank_failed:
        return [candidate for candidate in shortlist if candidate.stage != "sparse"]
    return [
        candidate
        for candidate in shortlist
        if candidate.rerank_score >= confidence.floor
        and (candidate.stage != "sparse" or candidate.rerank_score >= confidence.low)
    ]


def keyword_retry_block_reason(query: str) -> str:
    """Why the keyword retry must not run for this query ("" when it may): too short, or only over-broad words."""
    terms = search_terms(query)
    if len("".join(terms)) < settings.FAQ_KEYWORD_RETRY_MIN_CHARS:
        return "too_short"
    blocked = set(settings.FAQ_KEYWORD_RETRY_BLOCKLIST)
    if not [term for term in terms if term not in blocked]:
        return "over_broad"
    return ""


def _keyword_retry(query, query_vector, reranker, low, trace) -> list[_Candidate]:
    reason = keyword_retry_block_reason(query)
    if reason:
        trace.keyword_retry = f"blocked:{reason}"
        return []
    blocked = set(settings.FAQ_KEYWORD_RETRY_BLOCKLIST)
    terms = sorted(
        {term for term in search_terms(query) if term not in blocked and len(term) >= 2}, key=len, reverse=True
    )
    matches = faq_keyword_matches(terms, limit=settings.FAQ_KEYWORD_RETRY_LIMIT)
    trace.keyword_hits = len(matches)
    if not matches:
        trace.keyword_retry = "no_match"
        return []
    candidates = _keyword_candidates(matches, query_vector, stage="keyword")
    _rerank(query, query_vector, candidates, reranker, trace)
    if trace.rerank_failed or max(candidate.rerank_score for candidate in candidates) < low:
        trace.keyword_retry = "rejected"
        return []
    trace.keyword_retry = "accepted"
    return [candidate for candidate in candidates if candidate.rerank_score >= low]


def _keyword_candidates(entries: list[FaqEntry], query_vector, *, stage: str) -> list[_Candidate]:
    stored = _stored_vectors(entries) if query_vector is not None else {}
    return [
        _Candidate(
            faq_id=entry.pk,
            question=entry.question,
            answer=entry.answer,
            category=entry.category,
            url=entry.url,
            stage=stage,
            question_vector=stored.get(str(entry.point_id), {}).get("dense"),
            passage_vector=stored.get(str(entry.point_id), {}).get(PASSAGE),
            as_of=entry.source_created_at.isoformat() if entry.source_created_at else None,
        )
        for entry in entries
    ]


# A one-syllable noun of place or time with its particle (`안에`, `전에`) says where or when, never what.
_PLACING_WORD = re.compile(r"^[안전후뒤위중내밖앞때][에엔은도]?$")


def _named_subject_entries(query, query_vector, reranker, accepted, trace) -> list[_Candidate]:
    """Entries holding a rare noun of the question (one at most FAQ_RARE_TERM_ENTRIES entries begin a word with:
    `시식`, `이자`, `선물세트`) and another of its words, that the vector search did not bring: the question names
    their subject exactly, in words its embedding barely weighs (`시식 행사 … 언제까지 신청` → `시식 행사를 하고
    싶어요`, `… 늦게 들어오면 이자 붙나요` → `지연 이자를 받을 수 있나요`). A verb the sources write as a noun counts
    as that noun (`단가 올리` → `단가 인상`). A question whose rare words no entry has (`휴가`, `와이파이`) gets
    nothing from here; an over-broad word (the keyword retry's blocklist) or a word the morphological analyser
    reads as a verb, adverb or numeral (`받고`, `하나에`) is never the rare one."""
    blocked = set(settings.FAQ_KEYWORD_RETRY_BLOCKLIST)
    words = sorted({term for term in search_terms(query) if len(term) >= 2 and not _PLACING_WORD.match(term)})
    if len(words) < 2:
        return []
    # Loaded once per process (the local answerer loads it too): verb forms are no subject (docs/knowledge.md).
    from agent.llm.morphology import non_nouns

    verbs = non_nouns(query)
    terms = sorted(
        {verb_noun(word) or word for word in words if verb_noun(word) or not any(v.startswith(word) for v in verbs)}
    )
    if len(terms) < 2:
        return []
    using = {term: _word_starting_entries(term) for term in terms if term not in blocked}
    rare = [term for term, found in using.items() if 0 < len(found) <= settings.FAQ_RARE_TERM_ENTRIES]
    have = {candidate.faq_id for candidate in accepted}
    entries = {
        entry.pk: entry
        for term in rare
        for entry in using[term]
        if entry.pk not in have and sum(_begins_word(word, entry) for word in terms) >= 2
    }
    if not entries:
        return []
    candidates = _keyword_candidates(list(entries.values()), query_vector, stage="named")
    _rerank(query, query_vector, candidates, reranker, trace)
    trace.named_subject_hits = len(candidates)
    return sorted(candidates, key=lambda candidate: -candidate.rerank_score)


def _begins_word(term: str, entry: FaqEntry) -> bool:
    """Whether `term` begins a word of the entry's question or answer (`도로` is not in `별도로`)."""
    return re.search(rf"(?<![0-9a-z가-힣]){re.escape(term)}", f"{entry.question} {entry.answer}".lower()) is not None


# A word that this many entries hold, even inside other words, is no rare word: the scan for one stops there.
_RARE_SCAN_LIMIT = 50


def _word_starting_entries(term: str) -> list[FaqEntry]:
    """Active entries in which `term` begins a word, at most one more than a rare word may have (that many also
    when more than _RARE_SCAN_LIMIT entries hold it at all)."""
    contains = Q(question_lower__contains=term) | Q(answer_lower__contains=term)
    if connection.vendor == "postgresql":
        contains &= Q(search_bigrams__contains=text_bigrams(term))  # through the GIN index, as the keyword retry
    rows = list(
        FaqEntry.objects.annotate(question_lower=Lower("question"), answer_lower=Lower("answer"))
        .filter(contains, status=FaqEntry.Status.ACTIVE)
        .order_by("pk")[: _RARE_SCAN_LIMIT + 1]
    )
    if len(rows) > _RARE_SCAN_LIMIT:
        return rows[: settings.FAQ_RARE_TERM_ENTRIES + 1]
    return [entry for entry in rows if _begins_word(term, entry)][: settings.FAQ_RARE_TERM_ENTRIES + 1]


def _with_places_for(named: list[_Candidate], accepted: list[_Candidate], limit: int) -> list[_Candidate]:
    """`accepted` with each named-subject entry in the top `limit`, in place of the lowest other entries."""
    if not named:
        return accepted
    others = sorted(accepted, key=lambda candidate: -candidate.rerank_score)
    keep = max(limit - len(named), 0)
    return [*others[:keep], *named[:limit]]


def _stored_vectors(entries: list[FaqEntry]) -> dict[str, dict]:
    """The index's vectors of keyword matches, so the local reranker need not embed them again; an entry the
    index lacks (not yet synced) is embedded by the reranker as before."""
    try:
        return faq_index_stored_vectors(entry.point_id for entry in entries)
    except FaqIndexUnavailable:
        return {}


def faq_keyword_matches(terms: list[str], *, limit: int, field: str = "both") -> list[FaqEntry]:
    """Active entries containing any of the terms (substring, so particles do not defeat it), the entries
    matching most terms first, question matches before answer matches."""
    terms = [term.lower() for term in terms if term]
    if not terms:
        return []
    on_postgresql = connection.vendor == "postgresql"
    condition = Q()
    for term in terms:
        # LOWER(column) LIKE '%term%' rather than icontains' UPPER on both sides: cheaper per row.
        contains = Q()
        if field in ("question", "both"):
            contains |= Q(question_lower__contains=term)
        if field in ("answer", "both"):
            contains |= Q(answer_lower__contains=term)
        if on_postgresql and len(term) >= 2:
            # An entry holding the term holds all its bigrams: the GIN index on search_bigrams (migration 0007)
            # finds those few entries, and LIKE only rechecks them instead of scanning every entry.
            contains &= Q(search_bigrams__contains=text_bigrams(term))
        condition |= contains
    rows = list(
        FaqEntry.objects.annotate(question_lower=Lower("question"), answer_lower=Lower("answer"))
        .filter(condition, status=FaqEntry.Status.ACTIVE)
        .order_by("-source_created_at")[:200]
    )

    def strength(entry: FaqEntry) -> tuple:
        in_question = sum(term in entry.question.lower() for term in terms)
        in_answer = sum(term in entry.answer.lower() for term in terms)
        return (-(in_question + in_answer), -in_question)

    return sorted(rows, key=strength)[:limit]


def _evidence(candidate: _Candidate, confidence) -> EvidenceItem:
    score = round(candidate.rerank_score, 4)
    level = "high" if score >= confidence.high else "medium" if score >= confidence.low else "low"
    return EvidenceItem(
        source_kind="faq",
        reference=f"faq:{candidate.faq_id}",
        text=passage_text(candidate.question, candidate.answer),
        score=score,
        title=candidate.question,
        url=candidate.url,
        extra={
            "stage": candidate.stage,
            "dense_score": None if candidate.dense_score is None else round(candidate.dense_score, 4),
            "category": candidate.category,
            "confidence": level,
            "as_of": candidate.as_of,
        },
    )


# --- reads for the admin ------------------------------------------------------------------------------------


def faq_keyword_search(query: str, *, field: str = "both", limit: int = 50) -> list[FaqEntry]:
    """Admin keyword search: the whole phrase as a substring of the question, the answer or either."""
    query = (query or "").strip()
    if not query:
        return []
    condition = Q()
    if field in ("question", "both"):
        condition |= Q(question__icontains=query)
    if field in ("answer", "both"):
        condition |= Q(answer__icontains=query)
    return list(
        FaqEntry.objects.filter(condition, status=FaqEntry.Status.ACTIVE).order_by("-source_created_at")[:limit]
    )


def faq_category_counts() -> list[dict]:
    """Active entries per category, largest first."""
    return list(
        FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE)
        .values("category")
        .annotate(count=Count("id"))
        .order_by("-count", "category")
    )


def faq_similar_questions(questions: list[str], *, min_score: float, limit: int = 3) -> list[list[tuple[int, float]]]:
    """For each question, the active entries whose stored question is closest by the dense question vector, with
    their score (the cosine), at or above `min_score`, best first. Both sides are embedded as stored questions
    (document mode): this compares a question with questions, not a query with answers. Raises
    FaqIndexUnavailable or EmbeddingError when the index or the embedder cannot answer."""
    if not questions:
        return []
    faq_index_sync()
    vectors = embedder_get().embed_documents(questions)
    return [
        [
            (hit.payload["faq_id"], float(hit.score))
            for hit in faq_index_dense_search(vector, limit=limit, score_threshold=min_score)
        ]
        for vector in vectors
    ]
