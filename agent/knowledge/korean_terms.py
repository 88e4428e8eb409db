"""A lightweight Korean term extractor for the knowledge hub's local graph and its query keywords.

No morphological analyser: kiwipiepy would cost ~530 MB per process for what the hub needs, which is the nouns
of business documents. The rules, in order:

1. Proper nouns come from a lexicon (vendor names and aliases, brand names and aliases), found with one
   Aho-Corasick pass, longest match first, inside compound words too (`대한물산전용` → 대한물산).
2. Other words are Hangul runs and Latin/digit words. A Hangul word loses its trailing particle (`반품은` → 반품)
   unless it ends in a noun that merely looks like one (`단가`, `한도`, `결과` …); a `하다`/`되다` predicate keeps its
   verbal noun (`신청해야` → 신청); other inflected words (`있습니다`, `빠르게`) and stopwords are dropped.
3. Latin words with a capital or a digit (`FreshPack`, `K-200`) are product names unless they are common
   business acronyms (`EDI`, `VAT`), which are concepts.
"""

import re
import unicodedata
from dataclasses import dataclass

from agent.verification.korean import EndingStripper

ORGANIZATION = "ORGANIZATION"
BRAND = "BRAND"
PRODUCT = "PRODUCT"
CONCEPT = "CONCEPT"
PROPER_NOUN_KINDS = frozenset({ORGANIZATION, BRAND, PRODUCT})

_HANGUL_WORD = r"[가-힣]+"
_LATIN_WORD = r"[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*"
_WORD = re.compile(f"{_HANGUL_WORD}|{_LATIN_WORD}")
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|\n+")


def _words(text: str) -> list[str]:
    return text.split()


# Particles and the copula; the longest that fits is stripped, only when two or more syllables remain.
_PARTICLES = _words(
    """
    에서부터 으로부터 로부터 에게서 한테서 께서는 에서는 에서도 에게는 으로는 으로도 이라도 이라면 이라는 이라고
    입니다 이에요 이예요 예요 인가요 인데요 이므로 이지만 이거나 까지는 부터는 에서 에게 한테 께서 으로 부터 까지 처럼
    보다 마다 조차 밖에 이랑 이나 이며 이고 이면 이다 에는 에도 과는 와는 라는 라고 으로서 로서 으로써 로써
    은 는 이 가 을 를 에 의 도 만 와 과 로 랑 나 엔 께
        """
)
# Nouns that end like a particle or a predicate: never cut (`단가` is not `단` + `가`, `유통기한` not `유통기` + `한`).
_NOUNS_WITH_LOOKALIKE_ENDINGS = _words(
    "단가 원가 정가 판매가 공급가 매입가 할인가 소비자가 시가 평가 추가 증가 대가 물가 국가 휴가 부가 "
    "한도 제도 정도 속도 온도 습도 용도 강도 빈도 밀도 년도 연도 "
    "결과 효과 부과 경과 초과 통과 "
    "회의 합의 협의 정의 동의 문의 주의 이의 논의 "
    "미만 기한 권한 제한 상한 하한 역할 분할 포함 "
    "경로 도로 통로 항로 차이 종이 길이 높이 무게 가게"
)
# Predicate endings after a verbal noun (`신청해야`, `발행합니다`, `반영되며`): the noun stays, the ending goes.
_VERBAL_ENDINGS = sorted(
    _words(
        """
    하였습니다 했습니다 합니다 하나요 하십시오 하세요 해주세요 해야합니다
    해야 하여야 하여 하며 하고 하는 하면 하려면 하기 하게 하지 한다 할
    한 해서 해도 했다 했고 하던 함 됩니다 되었습니다 됐습니다 되며 되고
    되는 되면 되어 되어야 돼야 된다 될 된 되기 되지 됨 시킵니다 시켜
    시키는 드립니다 드리며 드리고 드려야 받습니다 받으며 받는 받을 받은
        """
    ),
    key=len,
    reverse=True,
)
# Inflected endings of words that are not nouns at all: the word is dropped.
_NON_NOUN_ENDINGS = _words(
    "습니다 니다 어요 아요 여요 세요 는데 지만 으면 르면 다면 려면 도록 듯이 면서 으며 이며 다가 거나 든지 "
    "었다 았다 였다 겠다 했던 있는 없는 있고 없고 있어 없어 있으면 없으면 같은 같이 나요 까요 네요 군요 어서 아서 해서 "
    "롭게 스럽게 없게 있게 쉽게 빠르게 느리게 크게 작게 높게 낮게 많게 적게"
)
STOPWORDS = frozenset(
    _words(
        """
    경우 이상 이하 이내 이후 이전 관련 대한 대해 위해 위한 통해 통한 따라 따른 따라서 해당 모든 각각 이번 다음 지난
    기타 그리고 또는 및 등 또한 다만 단 만약 혹시 가능 필요 사항 내용 방법 부분 정도 때문 하나 여러 모두 전체 일부
    우리 저희 귀사 당사 고객님 담당자 여기 거기 어디 어디서 무엇 어떻게 언제 얼마 얼마나 누구 누가 어느 왜 뭐 어떤 무슨
    그것 이것 저것
    있습니다 없습니다 입니다 합니다 됩니다 바랍니다 주세요 알려주세요 궁금합니다 문의드립니다 부탁드립니다 안녕하세요
    감사합니다 기준 적용 진행 확인 안내 참고 요청 가능합니다 불가 불가능 최대 최소 매월 매주 매일 당일 익일 오전 오후
    기본 다른 일반 별도 정확 동일 각종 함께 없이 가지 연속 주요 정보 표시 자동 정상 신규 대상 사용 범위 항목 이름
    안에 전에 에서 으로 전까지 날부터 하며 내려 남은 받은 받을 미만인 끝나면 알려야 글자
        """
    )
)
# Latin words that are units, file types or generic acronyms rather than product names.
_LATIN_STOPWORDS = frozenset(_words("ea box pcs set pdf xlsx xls csv doc docx txt md url http https www com co kr"))
_ACRONYM_CONCEPTS = frozenset(_words("VAT SKU ERP EDI WMS TMS API FAQ PO MOQ HACCP GMP ISO KC QR POS CS"))
# A number with a unit (`500ml`, `20kg`, `3pcs`) is a quantity, not a product name.
_QUANTITY = re.compile(r"\d+(?:\.\d+)?[a-z]+")


@dataclass(frozen=True)
class Term:
    """One occurrence of an entity-worthy word in a text."""

    name: str  # canonical form: the lexicon's name for proper nouns, the stem otherwise
    kind: str  # ORGANIZATION | BRAND | PRODUCT | CONCEPT
    start: int  # offset in the NFKC-normalised text
    length: int  # characters of the text it was found in (a proper noun's written form, a word with its particle)


def text_normalise(text: str) -> str:
    """NFKC (full-width letters and digits, ㈜ → (주)); offsets of `Term.start` refer to this form."""
    return unicodedata.normalize("NFKC", text or "")


def _name_variants(name: str) -> set[str]:
    """How a company or brand name may be written: as is, without corporate markers, without spaces."""
    base = text_normalise(name).strip()
    bare = re.sub(r"\(주\)|주식회사|\(유\)|유한회사", "", base).strip()
    return {variant.lower() for variant in (base, bare, bare.replace(" ", "")) if len(variant) >= 2}


class ProperNounLexicon:
    """Known names, matched longest first in one pass (10,000 names do not mean 10,000 scans)."""

    def __init__(self, entries: list[tuple[str, str, str]]):
        """`entries` are (written form, canonical name, kind): an alias is written one way and named another."""
        import ahocorasick

        self._automaton = ahocorasick.Automaton()
        self.size = 0
        for written, name, kind in entries:
            for variant in _name_variants(written):
                if variant not in self._automaton:
                    self._automaton.add_word(variant, (text_normalise(name).strip(), kind, len(variant)))
                    self.size += 1
        if self.size:
            self._automaton.make_automaton()

    def find(self, normalised_text: str) -> list[Term]:
        if not self.size:
            return []
        terms = []
        for end, (name, kind, length) in self._automaton.iter_long(normalised_text.lower()):
            start = end - length + 1
            if _is_word_fragment(normalised_text, start, end):
                continue
            terms.append(Term(name=name, kind=kind, start=start, length=length))
        return terms


def _is_word_fragment(text: str, start: int, end: int) -> bool:
    """A Latin name inside a longer Latin word (`ACE` in `FACE`) is not that name; Hangul compounds are allowed."""
    before = text[start - 1] if start > 0 else " "
    after = text[end + 1] if end + 1 < len(text) else " "
    first, last = text[start], text[end]
    return (first.isascii() and first.isalnum() and before.isascii() and before.isalnum()) or (
        last.isascii() and last.isalnum() and after.isascii() and after.isalnum()
    )


def _ends_in_lookalike_noun(word: str) -> bool:
    return any(word.endswith(noun) for noun in _NOUNS_WITH_LOOKALIKE_ENDINGS)


_particle_strip = EndingStripper(_PARTICLES)


def _strip_particle(word: str) -> str:
    return word if _ends_in_lookalike_noun(word) else _particle_strip(word)


def hangul_noun(word: str) -> str | None:
    """The noun a Hangul word carries, or None when it carries none worth an entity."""
    if word in STOPWORDS:
        return None
    for ending in _VERBAL_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 2 and not _ends_in_lookalike_noun(word):
            stem = _strip_particle(word[: -len(ending)])
            return stem if stem not in STOPWORDS else None
    stem = _strip_particle(word)
    if stem == word and any(word.endswith(ending) for ending in _NON_NOUN_ENDINGS):
        return None
    if len(stem) < 2 or stem in STOPWORDS:
        return None
    return stem


def _latin_term(word: str, start: int) -> Term | None:
    if word.lower() in _LATIN_STOPWORDS or len(word) < 2 or _QUANTITY.fullmatch(word.lower()):
        return None
    if word.upper() in _ACRONYM_CONCEPTS:
        return Term(name=word.upper(), kind=CONCEPT, start=start, length=len(word))
    if any(char.isupper() for char in word) or any(char.isdigit() for char in word):
        return Term(name=word, kind=PRODUCT, start=start, length=len(word))
    return None


def terms_extract(text: str, lexicon: ProperNounLexicon | None = None) -> list[Term]:
    """Every term occurrence in `text` (NFKC-normalised first), in text order."""
    normalised = text_normalise(text)
    proper = lexicon.find(normalised) if lexicon else []
    covered = set()
    for term in proper:
        covered.update(range(term.start, term.start + term.length))
    terms = list(proper)
    for match in _WORD.finditer(normalised):
        if match.start() in covered:
            continue
        word = match.group()
        if "가" <= word[0] <= "힣":
            # Right after a digit a Hangul word is a counter or unit (`7일까지`, `12개월`), not a noun.
            follows_digit = match.start() > 0 and normalised[match.start() - 1].isdigit()
            noun = None if follows_digit else hangul_noun(word)
            term = Term(name=noun, kind=CONCEPT, start=match.start(), length=len(word)) if noun else None
        else:
            term = _latin_term(word, match.start())
        if term:
            terms.append(term)
    terms.sort(key=lambda term: term.start)
    return terms


def sentences_split(text: str) -> list[tuple[int, str]]:
    """(offset, sentence) pairs of a normalised text; list items and lines count as sentences."""
    sentences, position = [], 0
    for piece in _SENTENCE_END.split(text):
        offset = text.find(piece, position)
        position = offset + len(piece)
        stripped = piece.strip(" \t-*#>")
        if stripped:
            sentences.append((offset + piece.find(stripped), stripped))
    return sentences


def query_keywords(query: str, lexicon: ProperNounLexicon | None = None, limit: int = 8) -> tuple[list, list]:
    """LightRAG's `hl_keywords` (topics) and `ll_keywords` (entities) for a question, without an LLM.

    Low level: proper nouns first, then the other nouns in question order. High level: the nouns as one topic
    phrase, which is what a relationship's keywords and description are matched against. Both fall back to the
    question itself, so LightRAG never asks an LLM to extract them.
    """
    terms = terms_extract(query, lexicon)
    ranked = [term.name for term in terms if term.kind in PROPER_NOUN_KINDS]
    ranked += [term.name for term in terms if term.kind not in PROPER_NOUN_KINDS]
    low_level = list(dict.fromkeys(ranked))[:limit]
    if not low_level:
        fallback = query.strip()
        return [fallback], [fallback]
    return [" ".join(low_level)], low_level
