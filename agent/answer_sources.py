"""Which evidence item each sentence of an answer came from, derived in code from the answer and its evidence.

A sentence copied from the evidence (the local answerer copies; a model usually quotes values) is found in the
items whose text contains it, spaces and case aside. A reworded sentence is attributed to the item sharing most
of its character bigrams, when that share is at least REWORDED_MIN_SHARE; otherwise it has no source, which the
audit page shows as such. The `참고 자료:` block code appends is not a sentence of the answer.
"""

from dataclasses import dataclass

from agent.verification.sentences import split_sentences

REWORDED_MIN_SHARE = 0.6
REFERENCES_HEADING = "참고 자료:"


@dataclass(frozen=True)
class SentenceSource:
    sentence: str
    references: tuple[str, ...]  # evidence references (record:1, faq:2, hub:…); empty: no source found
    copied: bool  # the sentence occurs in the evidence as written


def _compact(text: str) -> str:
    return "".join(text.split()).lower()


def _bigrams(text: str) -> set[str]:
    return {text[index : index + 2] for index in range(len(text) - 1)}


def answer_body(text: str) -> str:
    """The answer without the references block code appended."""
    return text.split(REFERENCES_HEADING, 1)[0].strip()


def sentence_sources(answer: str, evidence: list) -> list[SentenceSource]:
    """One entry per sentence of `answer`; `evidence` holds objects with `reference` and `text` (evidence items
    or their stored rows)."""
    items = [(item.reference, _compact(item.text)) for item in evidence]
    sources = []
    for sentence in split_sentences(answer_body(answer)):
        compact = _compact(sentence.text)
        if not compact:
            continue
        copied = tuple(dict.fromkeys(reference for reference, text in items if compact in text))
        if copied:
            sources.append(SentenceSource(sentence.text, copied, True))
            continue
        grams = _bigrams(compact)
        best = max(
            ((len(grams & _bigrams(text)) / len(grams), reference) for reference, text in items if grams),
            default=(0.0, ""),
        )
        references = (best[1],) if best[0] >= REWORDED_MIN_SHARE else ()
        sources.append(SentenceSource(sentence.text, references, False))
    return sources
