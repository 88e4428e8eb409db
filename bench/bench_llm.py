"""LLM layer overhead on one core, no database, no network beyond 127.0.0.1.

Run: .venv/bin/python bench/bench_llm.py

Reports p50/p95 per call for
(a) the local answerer composing an answer from three tool results of 5 evidence items each (~6,000
    characters), against a baseline in the same run: only splitting the same results into sentences with
    the verification splitter (the least any extractive answerer must do);
(b) the local follow-up rewrite rule, per question;
(c) the OpenAI-compatible provider (openai client, own retry loop, parsing) against a fake chat-completions
    server on 127.0.0.1 that answers at once, against a baseline in the same run: a bare httpx POST of the
    same request body to the same server with the JSON decoded (the transport floor).
Prints a markdown snippet for docs/benchmarks.md.
"""

import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django
import httpx

from agent.llm.base import ToolSpec, tool_result_message
from agent.llm.fake_server import FakeOpenAIServer, chat_completion_body
from agent.llm.local import LocalAnswerer
from agent.llm.openai_compat import OpenAICompatibleProvider
from agent.llm.prompts import answer_system_prompt, rewrite_messages
from agent.verification import split_sentences

WARMUP = 50
RUNS_LOCAL = 2_000
RUNS_REWRITE = 5_000
RUNS_HTTP = 500
COMMAND = ".venv/bin/python bench/bench_llm.py"

QUERY_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
TOOLS = [ToolSpec(name, "검색", QUERY_SCHEMA) for name in ("search_records", "search_hub", "search_faq")]
_TOPICS = ["하이패스 단말기", "물류센터 입고", "월말 정산", "반품 회수", "신규 상품 등록", "프로모션 행사", "납품 계약"]


def _tool_result(source: str, seed: int) -> str:
    items = []
    for number in range(1, 6):
        topic = _TOPICS[(seed + number) % len(_TOPICS)]
        items.append(
            f"[{number}] ({source} · {topic} 안내)\n"
            f"질문: {topic} 관련 기준은 어떻게 되나요?\n"
            f"답변: {topic} 기준은 거래처 계약서에 따릅니다. {topic} 신청은 매월 {number + 5}일까지 접수됩니다. "
            f"{topic} 단가는 {30 + number},000원이며 부가세는 별도입니다. "
            "자세한 조건은 계약 부속서를 참고하시기 바랍니다. "
            f"[다른 벤더]의 {topic} 조건은 안내하지 않습니다.\n"
            f"출처: https://example.com/{source}/{seed}/{number}"
        )
    return "\n\n".join(items)


def _conversation(question: str) -> list[dict]:
    messages = [
        {"role": "system", "content": answer_system_prompt(vendor_name="대한물산")},
        {"role": "user", "content": question},
    ]
    calls = LocalAnswerer().chat(messages, tools=TOOLS)
    messages.append(calls.as_message())
    for index, call in enumerate(calls.tool_calls):
        messages.append(tool_result_message(call.id, _tool_result(call.name, index)))
    return messages


def _timed(function, runs: int) -> list[float]:
    for _ in range(WARMUP):
        function()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _p(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] if q < 100 else max(samples)


def main() -> None:
    # The local answerer reads its limits from the settings (defaults: 3 sentences, floor 0.3).
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    django.setup()
    answerer = LocalAnswerer()
    messages = _conversation("하이패스 단말기 단가가 얼마인가요?")
    results = [message["content"] for message in messages if message["role"] == "tool"]
    evidence_chars = sum(map(len, results))
    answer = answerer.chat(messages, tools=TOOLS).content
    assert answer, "the benchmark conversation must produce an answer"

    local = _timed(lambda: answerer.chat(messages, tools=TOOLS), RUNS_LOCAL)
    split_only = _timed(lambda: [split_sentences(line) for text in results for line in text.splitlines()], RUNS_LOCAL)

    rewrite_request = rewrite_messages(
        "그럼 얼마야?",
        [
            {"role": "user", "text": "하이패스 단말기가 뭔가요?"},
            {"role": "assistant", "text": "하이패스 단말기는 통행료 자동 결제 장치입니다."},
        ],
    )
    rewrite = _timed(lambda: answerer.chat(rewrite_request, purpose="rewrite"), RUNS_REWRITE)

    request_messages = [{"role": "system", "content": "규칙"}, {"role": "user", "content": "하이패스 단말기 단가?"}]
    with FakeOpenAIServer() as server:
        server.enqueue(200, chat_completion_body(content="하이패스 단말기 단가는 31,000원입니다."))
        provider = OpenAICompatibleProvider(
            base_url=server.base_url, api_key="bench", model="fake-model", timeout_seconds=10, max_retries=0
        )
        body = {
            "model": "fake-model",
            "messages": request_messages,
            "temperature": 0.2,
            "tools": [tool.as_openai() for tool in TOOLS],
            "tool_choice": "auto",
        }
        with httpx.Client(base_url=server.base_url, timeout=10) as client:

            def raw_post():
                response = client.post("/chat/completions", json=body)
                response.raise_for_status()
                return response.json()["choices"][0]["message"]["content"]

            http_raw = _timed(raw_post, RUNS_HTTP)
        http_provider = _timed(lambda: provider.chat(request_messages, tools=TOOLS), RUNS_HTTP)

    rows = [
        ("local answerer, compose answer (3 results, 15 items)", local),
        ("baseline: sentence split of the same results only", split_only),
        ("local rewrite rule, one follow-up", rewrite),
        ("OpenAI-compatible provider → fake server on 127.0.0.1", http_provider),
        ("baseline: bare httpx POST + JSON decode, same server", http_raw),
    ]
    print(f"# LLM layer — {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs")
    print(f"command: {COMMAND}")
    print(f"evidence: {evidence_chars} characters in {len(results)} tool results; answer: {len(answer)} characters\n")
    print("| what | p50 ms | p95 ms | calls/s (1 core, p50) |")
    print("|---|---:|---:|---:|")
    for label, samples in rows:
        p50 = statistics.median(samples)
        print(f"| {label} | {p50:.3f} | {_p(samples, 95):.3f} | {1000 / p50:,.0f} |")
    print()
    print(f"local answer / split-only: {statistics.median(local) / statistics.median(split_only):.1f}×")
    print(f"provider / bare POST: {statistics.median(http_provider) / statistics.median(http_raw):.2f}×")


if __name__ == "__main__":
    main()
