"""Which words of a question are no nouns, read by a morphological analyser (kiwipiepy).

The local answerer requires a statement to name the question's subject words. Rules on word endings
(`korean_text`, `focus`) miss verb forms they were not written for (`받고`, `들어와요`, `나왔어요`), adverbs (`자주`,
`잘못`) and numerals (`하나에`), and such a word required as a subject word makes a statement that answers look
like one about another subject. The analyser reads each word in its sentence: a word whose first morpheme is a
verb, adjective or auxiliary stem, an adverb, a numeral or a determiner is no noun. A noun with a 하다/되다 ending
(`단종하려면`) starts with its noun and is one.

Kiwi's model takes seconds to load and ~500 MB of memory (docs/agent.md), so it is loaded once per process: in a
worker consuming the agent queue by its main process before the fork (`agent.warmup.celery_worker_init`), the
children sharing it; elsewhere on the first question the local answerer reads or the first FAQ search that needs it.
"""

import re
import threading
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

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

                analyser = Kiwi()
                # Kiwi builds the rest of its model (about half the time and memory) on the first analysis: done
                # here, the load is whole. One text is analysed in the calling thread, never in Kiwi's thread pool,
                # so a forked child (which has no copy of those threads) analyses with the parent's instance.
                analyser.tokenize("")
                _analyser = analyser
    return _analyser


def analyser_load() -> None:
    """Load the analyser now rather than on the first question (a worker before it forks its pool, a server that
    must answer its first request within a client's timeout)."""
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


@lru_cache(maxsize=8192)
def whole_nouns(text: str) -> frozenset[str]:
    """The Hangul words of ``text`` the analyser reads as one common or proper noun, whole: `김해`, `이천`."""
    if not _WORD_RE.search(text):
        return frozenset()
    tags = {(token.start, token.len): token.tag for token in _kiwi().tokenize(text)}
    return frozenset(
        match[0]
        for match in _WORD_RE.finditer(text)
        if "가" <= match[0][0] <= "힣" and tags.get((match.start(), len(match[0]))) in ("NNG", "NNP")
    )


# Common and proper nouns and a noun-deriving suffix continue a noun: 할인폭, 데이터.
_NOUN_TAG_RE = re.compile(r"^(NNG|NNP|XSN)$")
# What may follow a noun inside one written word for it still to name that noun: particles, the copula, endings,
# and 하다/되다-deriving suffixes (`납품한`, `업데이트돼요`).
_AFTER_NOUN_TAG_RE = re.compile(r"^(J[A-Z]*|VCP|E[A-Z]*|XSV|XSA|VV)(-[RI])?$")
_CORE_PARTICLE_TAGS = frozenset({"JX", "JKS", "JKO"})
_LIGHT_VERBS = frozenset({"되", "받"})
# Nouns that, glued after another noun, leave it what the word names: one case of it (`교환건`), the time of it
# (`추석때`).
_CASE_NOUNS = frozenset({"건", "때"})
DEPENDENT = ""  # a word that starts with a dependent noun (`쪽은`, `번에`, `거`): it names no subject


@lru_cache(maxsize=8192)
def word_nouns(text: str) -> Mapping[str, str]:
    """For the Hangul words of ``text`` that are a noun with something after it, the noun — the particle read
    off even after one syllable, where rules keep it (`차는` → 차, `돈은` → 돈, `업데이트돼요` → 업데이트) —, and
    DEPENDENT for a word that starts with a dependent noun (`쪽은`, `번에`)."""
    if not _WORD_RE.search(text):
        return MappingProxyType({})
    tokens = _kiwi().tokenize(text)
    nouns: dict[str, str] = {}
    for match in _WORD_RE.finditer(text):
        word = match[0]
        if not "가" <= word[0] <= "힣":
            continue
        inside = [token for token in tokens if match.start() <= token.start < match.end()]
        if not inside:
            continue
        # `쪽은`, `거는`; not `대금` (read 대 + 금), whose dependent noun goes on into a noun
        if inside[0].tag == "NNB" and not any(_NOUN_TAG_RE.match(token.tag) for token in inside[1:]):
            nouns[word] = DEPENDENT
            continue
        end = match.start()
        rest = inside
        while rest and _NOUN_TAG_RE.match(rest[0].tag) and rest[0].start == end:
            end, rest = rest[0].start + rest[0].len, rest[1:]
        noun_run = inside[: len(inside) - len(rest)]
        if len(noun_run) >= 2 and noun_run[-1].form in _CASE_NOUNS:
            # `교환건`, `반품건은`: one case of the noun before it, which is what the word names
            end, rest = noun_run[-1].start, []
        # After the noun only particles, the copula and endings (a `VV` only as 되다 or 받다 after a noun:
        # 업데이트돼요, 지급받을); a one-syllable noun only before a subject, topic or object particle (`바로` is
        # no 바 with 로).
        if (
            end > match.start()
            and end < match.end()
            and all(
                (_AFTER_NOUN_TAG_RE.match(token.tag) and (not token.tag.startswith("VV") or token.form in _LIGHT_VERBS))
                # `발주한거`, `입고된건`, `예약할때`: the dependent noun (or 때) of an adnominal ending, written without
                # its space
                or ((token.tag == "NNB" or token.form in _CASE_NOUNS) and index and rest[index - 1].tag == "ETM")
                for index, token in enumerate(rest)
            )
            and (end - match.start() >= 2 or rest[0].tag in _CORE_PARTICLE_TAGS)
        ):
            nouns[word] = text[match.start() : end]
    return MappingProxyType(nouns)  # cached and shared: read-only


@lru_cache(maxsize=8192)
def compound_parts(word: str) -> tuple[str, ...]:
    """The nouns of a compound noun written as one word, each of two or more syllables (`김해센터` → 김해, 센터;
    `세금계산서` → 세금, 계산서); () for a word that is one noun or not only nouns (`참기름`, `교환건`)."""
    if not _WORD_RE.fullmatch(word) or not "가" <= word[0] <= "힣":
        return ()
    tokens = _kiwi().tokenize(word)
    if len(tokens) < 2 or not all(token.tag in ("NNG", "NNP") and token.len >= 2 for token in tokens):
        return ()
    return tuple(token.form for token in tokens)
