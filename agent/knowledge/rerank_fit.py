"""Fitting the local reranker's weights: labelled questions → candidate features → logistic regression.

A labelled question names the FAQ entry that answers it, or none (an unrelated question). Its candidates are the
entries nearest it by the stored question vector and by the whole passage, as the search brings them before any
threshold; each candidate is one row of `pair_features`, labelled 1 for the expected entry and 0 for the others.
The bias is then set from the unrelated questions, so the floor keeps meaning "not this FAQ's business".
"""

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agent.knowledge.embeddings import embedder_get
from agent.knowledge.rerank import pair_features, passage_text
from agent.knowledge.synonyms import spoken_forms_written
from agent.models import FaqEntry

# Candidates per search the fit looks at: FAQ_TOP_K, so the fit sees what the search can bring.
POOL_PER_SEARCH = 30
# How far under the floor the best unrelated candidate is put (a logit): numeric noise must not lift it over.
FLOOR_MARGIN = 0.02


class LabelledSetInvalid(ValueError):
    """A labelled file cannot be read (a line that is not JSON, or an entry that does not exist)."""


@dataclass(frozen=True)
class LabelledQuestion:
    query: str
    expected: int | None  # the FaqEntry pk that answers it; None for an unrelated question


@dataclass
class CandidateRows:
    features: np.ndarray  # one row of pair_features per candidate
    entry_ids: np.ndarray
    expected: int | None


def labelled_questions(path: Path, entries: list[FaqEntry]) -> list[LabelledQuestion]:
    """The labelled questions of one file: a quality set (lines of topic "faq" citing one `faq:<source_id>`) or
    an FAQ retrieval set (`{"query", "expected"}`, the expected entry's question, "" for an unrelated one)."""
    by_source = {entry.source_id: entry.pk for entry in entries if entry.source_id}
    by_question = {entry.question: entry.pk for entry in entries}
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise LabelledSetInvalid(f"{path.name} line {number}: {error}") from error
        if "query" in row:
            expected = row.get("expected") or ""
            if expected and expected not in by_question:
                raise LabelledSetInvalid(f"{path.name} line {number}: no FAQ entry asks {expected!r}")
            questions.append(LabelledQuestion(row["query"], by_question[expected] if expected else None))
            continue
        source = str(row.get("source", ""))
        if row.get("topic") != "faq" or not source.startswith("faq:") or "+" in source:
            continue  # another topic, or an answer joined from several sources
        source_id = source.removeprefix("faq:")
        if source_id not in by_source:
            raise LabelledSetInvalid(f"{path.name} line {number}: no FAQ entry {source_id}")
        questions.append(LabelledQuestion(row["question"], by_source[source_id]))
    return questions


def candidate_rows(questions: list[LabelledQuestion], entries: list[FaqEntry]) -> list[CandidateRows]:
    """Each question's candidates (the nearest POOL_PER_SEARCH by question and by passage, and the expected entry
    when neither search brings it) with their features."""
    embedder = embedder_get()
    passages = [passage_text(entry.question, entry.answer) for entry in entries]
    question_vectors = embedder.embed_documents([entry.question for entry in entries])
    passage_vectors = embedder.embed_documents(passages)
    ids = np.array([entry.pk for entry in entries])
    position = {entry.pk: index for index, entry in enumerate(entries)}
    queries = [spoken_forms_written(question.query) for question in questions]
    # One call for every query: the local model's cost is per call more than per text.
    query_vectors = embedder.embed_queries(queries) if queries else []
    rows = []
    for question, query, query_vector in zip(questions, queries, query_vectors, strict=True):
        nearest = set(np.argsort(-(question_vectors @ query_vector))[:POOL_PER_SEARCH])
        nearest |= set(np.argsort(-(passage_vectors @ query_vector))[:POOL_PER_SEARCH])
        if question.expected is not None:
            nearest.add(position[question.expected])
        pool = sorted(nearest)
        features = pair_features(
            query, [passages[i] for i in pool], query_vector, question_vectors[pool], passage_vectors[pool]
        )
        rows.append(CandidateRows(features, ids[pool], question.expected))
    return rows


def fit_logistic(
    features: np.ndarray, labels: np.ndarray, *, iterations: int = 20000, learning_rate: float = 2.0, l2: float = 1e-4
) -> tuple[np.ndarray, float]:
    """Weights and bias of a logistic regression by full-batch gradient descent (deterministic: no sampling)."""
    weights, bias = np.zeros(features.shape[1]), 0.0
    for _ in range(iterations):
        predicted = 1.0 / (1.0 + np.exp(-(features @ weights + bias)))
        error = predicted - labels
        weights -= learning_rate * (features.T @ error / len(labels) + l2 * weights)
        bias -= learning_rate * float(error.mean())
    return weights, bias


def training_matrix(rows: list[CandidateRows]) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the labelled questions, each candidate labelled 1 when it is the expected entry."""
    labelled = [row for row in rows if row.expected is not None]
    if not labelled:
        raise LabelledSetInvalid("the calibration files hold no labelled question to fit on")
    features = np.vstack([row.features for row in labelled])
    labels = np.concatenate([(row.entry_ids == row.expected).astype(float) for row in labelled])
    return features, labels


def floor_bias(rows: list[CandidateRows], weights: np.ndarray, floor: float) -> float:
    """The bias that puts the best candidate of every unrelated question just under `floor`."""
    unrelated = [row for row in rows if row.expected is None]
    if not unrelated:
        raise LabelledSetInvalid("the calibration files hold no unrelated question to set the floor with")
    highest = max(float((row.features @ weights).max()) for row in unrelated)
    return math.log(floor / (1.0 - floor)) - highest - FLOOR_MARGIN


def ranking_figures(rows: list[CandidateRows], weights: np.ndarray, bias: float, floor: float) -> dict:
    """hit@1 / hit@5 among the candidates kept at `floor`, and the unrelated questions with a candidate kept."""
    figures = {"labelled": 0, "hit_at_1": 0, "hit_at_5": 0, "unrelated": 0, "unrelated_answered": 0}
    for row in rows:
        scores = 1.0 / (1.0 + np.exp(-(row.features @ weights + bias)))
        order = np.argsort(-scores)
        kept = row.entry_ids[order][scores[order] >= floor]
        if row.expected is None:
            figures["unrelated"] += 1
            figures["unrelated_answered"] += int(bool(len(kept)))
            continue
        figures["labelled"] += 1
        figures["hit_at_1"] += int(bool(len(kept)) and kept[0] == row.expected)
        figures["hit_at_5"] += int(row.expected in kept[:5])
    return figures
