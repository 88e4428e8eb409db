"""Qdrant Edge (`qdrant-edge-py`) against qdrant-client's local mode for the FAQ index's dense search.

    .venv/bin/python bench/bench_faq_edge.py --sizes 20000,100000 --queries 200

Points: the 201 demo FAQ questions embedded with the local USE model (document mode), each repeated in scopes as
a unit vector near it (cosine ~0.85 to its question, like the same question asked per brand or channel); queries:
the 78 labelled questions of agent/tests/data/faq_eval.jsonl (query mode), cycled. For each engine and size a
fresh child process builds the store in a temporary folder, closes it, then measures the open (the cost a worker
pays on its first search), the resident memory the open added, and `queries` searches of the top 30 by dot
product with the FAQ's payload-free request. Recall@30 is against exact (numpy) top 30 of the same vectors.
Baseline in the same run: numpy brute force.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TOP = 30


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _vectors(size: int) -> tuple[np.ndarray, np.ndarray]:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from agent.knowledge.embeddings import embedder_get

    embedder = embedder_get()
    faq = [json.loads(line) for line in (ROOT / "demo/data/faq.jsonl").read_text().splitlines() if line.strip()]
    questions = list(dict.fromkeys(row.get("q") or row["question"] for row in faq))
    evaluation = [json.loads(line) for line in (ROOT / "agent/tests/data/faq_eval.jsonl").read_text().splitlines()]
    base = embedder.embed_documents(questions).astype(np.float32)
    queries = embedder.embed_queries([row["query"] for row in evaluation]).astype(np.float32)
    rng = np.random.default_rng(7)
    rows = base[np.arange(size) % len(base)]
    noise = rng.normal(size=rows.shape).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    points = 0.85 * rows + 0.53 * noise
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    return points.astype(np.float32), queries


def _child(engine: str, size: int, count: int, folder: str) -> dict:
    points, queries = _vectors(size)
    dimension = points.shape[1]
    result = {"engine": engine, "size": size}
    started = time.perf_counter()
    if engine == "local":
        from qdrant_client import QdrantClient, models

        client = QdrantClient(path=folder)
        client.create_collection(
            "faq", vectors_config={"dense": models.VectorParams(size=dimension, distance=models.Distance.DOT)}
        )
        for start in range(0, size, 1024):
            batch = points[start : start + 1024]
            client.upsert(
                "faq",
                points=[
                    models.PointStruct(id=start + i, vector={"dense": vector.tolist()}, payload={"faq_id": start + i})
                    for i, vector in enumerate(batch)
                ],
                wait=True,
            )
        client.close()
    else:
        from qdrant_edge import Distance, EdgeConfig, EdgeShard, EdgeVectorParams, Point, UpdateOperation

        shard = EdgeShard.create(
            folder, EdgeConfig(vectors={"dense": EdgeVectorParams(size=dimension, distance=Distance.Dot)})
        )
        for start in range(0, size, 1024):
            batch = points[start : start + 1024]
            shard.update(
                UpdateOperation.upsert_points(
                    [
                        Point(id=start + i, vector={"dense": vector.tolist()}, payload={"faq_id": start + i})
                        for i, vector in enumerate(batch)
                    ]
                )
            )
        shard.flush()
        shard.optimize()  # builds the HNSW index of the segments over the indexing threshold
        shard.close()
    result["build_s"] = round(time.perf_counter() - started, 1)

    before = _rss_mb()
    started = time.perf_counter()
    if engine == "local":
        client = QdrantClient(path=folder)
    else:
        shard = EdgeShard.load(folder)
    result["open_s"] = round(time.perf_counter() - started, 2)

    def search(vector, **params):
        if engine == "local":
            return [
                point.id for point in client.query_points("faq", query=vector.tolist(), using="dense", limit=TOP).points
            ]
        from qdrant_edge import Query, QueryRequest, SearchParams

        request = QueryRequest(
            limit=TOP,
            query=Query.Nearest(vector.tolist(), using="dense"),
            params=SearchParams(**params) if params else None,
        )
        return [point.id for point in shard.query(request)]

    search(queries[0])
    result["open_rss_mb"] = round(_rss_mb() - before, 1)
    exact = [set(np.argsort(-(points @ query))[:TOP].tolist()) for query in queries]
    variants = (
        {"default": {}}
        if engine == "local"
        else {"default": {}, "hnsw_ef=128": {"hnsw_ef": 128}, "exact": {"exact": True}}
    )
    for label, params in variants.items():
        timings, recalls = [], []
        for number in range(count):
            query = queries[number % len(queries)]
            started = time.perf_counter()
            found = search(query, **params)
            timings.append((time.perf_counter() - started) * 1000)
            recalls.append(len(exact[number % len(queries)] & {int(i) for i in found}) / TOP)
        timings.sort()
        result[label] = {
            "p50_ms": round(statistics.median(timings), 2),
            "p95_ms": round(timings[int(0.95 * (len(timings) - 1))], 2),
            "recall_at_30": round(statistics.mean(recalls), 3),
        }
    timings = []
    for number in range(count):
        query = queries[number % len(queries)]
        started = time.perf_counter()
        np.argsort(-(points @ query))[:TOP]
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    result["numpy"] = {
        "p50_ms": round(statistics.median(timings), 2),
        "p95_ms": round(timings[int(0.95 * (len(timings) - 1))], 2),
    }
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="20000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--engines", default="edge,local")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        engine, size, count, folder = args.child
        print(json.dumps(_child(engine, int(size), int(count), folder)))
        return
    for size in (int(value) for value in args.sizes.split(",")):
        for engine in args.engines.split(","):
            with tempfile.TemporaryDirectory() as folder:
                output = subprocess.run(
                    [sys.executable, __file__, "--child", engine, str(size), str(args.queries), folder + "/store"],
                    capture_output=True,
                    text=True,
                    check=False,
                )
            if output.returncode != 0:
                print(f"{engine} {size}: failed\n{output.stderr[-2000:]}", file=sys.stderr)
                continue
            print(output.stdout.strip().splitlines()[-1], flush=True)
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
