"""Rerankers: score (query, passage) pairs on a 0–1 scale so the confidence thresholds mean something.

The local reranker is deterministic and needs no download: a logistic blend of embedding cosines and
character-bigram overlap. An HTTP reranker speaking the common `/rerank` shape (Cohere, Jina, TEI, vLLM,
Infinity …) is used when `RERANK_URL` is set. Confidence thresholds belong to one reranker, like the dense
thresholds belong to one embedder.
"""

import math
import threading
from dataclasses import dataclass

import httpx
import numpy as np
from django.conf import settings

from agent.knowledge.embeddings import EmbeddingError, embedder_get, search_terms


class RerankError(RuntimeError):
    """The reranker failed; callers fall back to the retrieval order."""


@dataclass(frozen=True)
class ConfidenceThresholds:
    floor: float  # below: dropped even after passing the dense threshold (0 keeps the seed's behaviour)
    low: float  # below: not trusted on its own (a sparse-only or keyword-retry hit needs at least this)
    high: float  # at or above: a confident match


class Reranker:
    name: str = ""

    def rerank(self, query: str, passages: list[str], **vectors) -> list[float]:
        """One score in [0, 1] per passage, in the passages' order.

        `vectors` may carry precomputed embeddings (`query_vector`, `question_vectors`, `passage_vectors`);
        rerankers that do not use them ignore them.
        """
        raise NotImplementedError

    def confidence_thresholds(self) -> ConfidenceThresholds:
        raise NotImplementedError


def passage_text(question: str, answer: str) -> str:
    """The passage shape the seed reranks: question and answer together."""
    return f"질문: {question}\n답변: {answer}"


def question_of(passage: str) -> str:
    head = passage.split("\n답변:", 1)[0]
    return head.removeprefix("질문:").strip()


def char_bigrams(text: str) -> set[str]:
    """Character bigrams of the topic words (particles stripped, question frames dropped); one-letter words kept."""
    grams = set()
    for term in search_terms(text):
        if len(term) == 1:
            grams.add(term)
        grams.update(term[index : index + 2] for index in range(len(term) - 1))
    return grams


def pair_features(query: str, passages: list[str], query_vector, question_vectors, passage_vectors) -> np.ndarray:
    """The local reranker's four features of each (query, passage) pair, one row per passage: cosine(query,
    question), cosine(query, "질문: q\n답변: a"), and the share of the query's character bigrams found in the
    question and in the whole passage. `manage.py fit_faq_reranker` fits the weights on the same rows."""
    query_vector = np.asarray(query_vector, dtype=np.float32)
    question_cosines = np.asarray(question_vectors, dtype=np.float32) @ query_vector
    passage_cosines = np.asarray(passage_vectors, dtype=np.float32) @ query_vector
    query_grams = char_bigrams(query)
    rows = []
    for index, passage in enumerate(passages):
        if query_grams:
            in_question = len(query_grams & char_bigrams(question_of(passage))) / len(query_grams)
            in_passage = len(query_grams & char_bigrams(passage)) / len(query_grams)
        else:
            in_question = in_passage = 0.0
        rows.append((question_cosines[index], passage_cosines[index], in_question, in_passage))
    return np.asarray(rows, dtype=np.float32).reshape(len(passages), 4)


class LocalReranker(Reranker):
    """Logistic blend of the four `pair_features`.

    The weights come from `manage.py fit_faq_reranker` (docs/knowledge.md, "Fitting the local reranker"): a logistic
    regression over the candidates the demo FAQ's dense search brings for ~370 labelled questions (the FAQ
    paraphrases of the calibration quality sets and `agent/tests/data/faq_eval.jsonl`), the expected entry against
    the others. The bias is then set so the best candidate of every unrelated calibration question (lunch, stocks,
    weather …) stays just under the floor, which keeps the seed's 0.65 / 0.75 meaning "probably right" /
    "confident". Held-out figures (questions the fit never saw) are in docs/knowledge.md.
    """

    name = "local"
    WEIGHTS = np.array([2.936, 7.210, 2.076, 5.480], dtype=np.float32)
    BIAS = -6.346

    def rerank(self, query, passages, *, query_vector=None, question_vectors=None, passage_vectors=None, **_):
        if not passages:
            return []
        embedder = embedder_get()
        try:
            if query_vector is None:
                query_vector = embedder.embed_queries([query])[0]
            if question_vectors is None or passage_vectors is None:
                # One call for both: the local model's cost is per call more than per text.
                texts = [question_of(passage) for passage in passages] + list(passages)
                vectors = embedder.embed_documents(texts)
                question_vectors, passage_vectors = vectors[: len(passages)], vectors[len(passages) :]
        except EmbeddingError as error:
            raise RerankError(f"local reranker could not embed: {error}") from error
        features = pair_features(query, passages, query_vector, question_vectors, passage_vectors)
        logits = features @ self.WEIGHTS + self.BIAS
        return [1.0 / (1.0 + math.exp(-float(logit))) for logit in logits]

    def confidence_thresholds(self) -> ConfidenceThresholds:
        return ConfidenceThresholds(
            floor=settings.FAQ_RERANK_FLOOR_LOCAL,
            low=settings.FAQ_LOW_CONFIDENCE_THRESHOLD_LOCAL,
            high=settings.FAQ_HIGH_CONFIDENCE_THRESHOLD_LOCAL,
        )


class HttpReranker(Reranker):
    """POST {url} {"model", "query", "documents", "top_n"} → {"results": [{"index", "relevance_score"}]}."""

    name = "http"

    def __init__(self, *, url: str, api_key: str = "", model: str = ""):
        self.url = url
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=settings.RERANK_TIMEOUT_SECONDS, headers=headers)

    def rerank(self, query, passages, **_):
        if not passages:
            return []
        body = {"query": query, "documents": list(passages), "top_n": len(passages)}
        if self.model:
            body["model"] = self.model
        try:
            response = self._client.post(self.url, json=body)
            response.raise_for_status()
            results = response.json()["results"]
            scores = [0.0] * len(passages)
            for result in results:
                scores[int(result["index"])] = float(result["relevance_score"])
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as error:
            raise RerankError(f"reranker at {self.url} failed: {error}") from error
        return scores

    def confidence_thresholds(self) -> ConfidenceThresholds:
        return ConfidenceThresholds(
            floor=settings.FAQ_RERANK_FLOOR_HTTP,
            low=settings.FAQ_LOW_CONFIDENCE_THRESHOLD_HTTP,
            high=settings.FAQ_HIGH_CONFIDENCE_THRESHOLD_HTTP,
        )


_rerankers: dict[tuple, Reranker] = {}
_rerankers_lock = threading.Lock()


def reranker_get() -> Reranker:
    """The configured reranker, one instance per configuration per process."""
    key = ("http", settings.RERANK_URL, settings.RERANK_MODEL) if settings.RERANK_URL else ("local",)
    with _rerankers_lock:
        reranker = _rerankers.get(key)
        if reranker is None:
            if settings.RERANK_URL:
                reranker = HttpReranker(
                    url=settings.RERANK_URL, api_key=settings.RERANK_API_KEY, model=settings.RERANK_MODEL
                )
            else:
                reranker = LocalReranker()
            _rerankers[key] = reranker
    return reranker
