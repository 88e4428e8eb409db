"""Which words of a question are no nouns, read by a morphological analyser (kiwipiepy).

The local answerer requires a statement to name the question's subject words. Rules on word endings
(`korean_text`, `focus`) miss verb forms they were not written for (`받고`, `들어와요`, `나왔어요`), adverbs (`자주`,
`잘못`) and numerals (`하나에`), and such a word required as a subject word makes a statement that answers look
like one about another subject. The analyser reads each word in its sentence: a word whose first morpheme is a
verb, adjective or auxiliary stem, an adverb, a numeral or a determiner is no noun. A noun with a 하다/되다 ending
(`단종하려면`) starts with its noun and is one.

Kiwi's model takes ~4–8 s to load and ~500 MB of memory (docs/agent.md), so it is loaded once per process, on the
first question the local answerer reads — only the process that answers with it pays for it.
"""

import re
import threading
from functools import lru_cache

# Verb (VV), adjective (VA), auxiliary (VX) and negative copula (VCN) stems — kiwi marks regular and irregular
# conjugations with -R / -I —, adverbs (MAG, MAJ), numerals (NR), determiners (MM) and interjections (IC).
_NOT_NOUN_TAG_RE = re.compile(r"^(VV|VA|VX|VCN)(-[RI])?$|^(MAG|MAJ|NR|MM|IC)$")
_WORD_RE = re.compile(r"[0-9A-Za-z가-힣]+")

_analyser = None
_analyser_lock = threading.Lock()


def _kiwi():
    global _analyser
    if _analyser is None:
        with _analyser_lock:
            if _analyser is None:
                from kiwipiepy import Kiwi

                _analyser = Kiwi()
    return _analyser


def analyser_load() -> None:
    """Load the analyser now rather than on the first question (a server that must answer its first request
    within a client's timeout)."""
    _kiwi()


@lru_cache(maxsize=8192)
def non_nouns(text: str) -> frozenset[str]:
    """The Hangul words of ``text`` (runs of Hangul, Latin letters and digits, as `korean_text.words` reads them)
    whose first morpheme is no noun: "재고 실사는 얼마나 자주 받고 해요?" → {얼마나, 자주, 받고, 해요}."""
    if not _WORD_RE.search(text):
        return frozenset()
    starts: dict[int, str] = {}
    for token in _kiwi().tokenize(text):
        starts.setdefault(token.start, token.tag)
    return frozenset(
        match[0]
        for match in _WORD_RE.finditer(text)
        if _NOT_NOUN_TAG_RE.match(starts.get(match.start(), "")) and "가" <= match[0][0] <= "힣"
    )
