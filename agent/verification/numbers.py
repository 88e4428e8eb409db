"""Amounts and percentages in Korean text: find them with their normalised values, never invent them.

A number becomes a quantity only when something says it is money or a percentage: a currency unit
(``원``, ``₩``, ``KRW``), a percent unit, a big multiplier (``3만``, unless a count unit follows) or
thousands separators (``27,000이고``). Dates, times, phone numbers, counts and model names carry none
of these and are left alone. Hangul numerals (``오만원``) count only with a multiplier and ``원``.
See docs/verification.md for the full list of forms.
"""

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache
from itertools import accumulate
from typing import NamedTuple

from agent.verification.korean import PARTICLES, UNIT_FOLLOWERS, is_hangul_syllable


class QuantityKind(StrEnum):
    AMOUNT = "amount"
    PERCENT = "percent"
    PERCENT_POINT = "percent_point"


# Members looked up once: attribute access on an enum class is slow, and these run for every number.
_AMOUNT, _PERCENT, _PERCENT_POINT = QuantityKind.AMOUNT, QuantityKind.PERCENT, QuantityKind.PERCENT_POINT
UNIT_BY_KIND = {_AMOUNT: "KRW", _PERCENT: "%", _PERCENT_POINT: "%p"}


@dataclass(frozen=True, slots=True)
class Quantity:
    kind: str
    value: int | float  # won for amounts, percent (points) otherwise; int where integral
    unit: str  # "KRW", "%" or "%p"
    approx: bool  # 약 3만원, 3만원대, 3만원 정도: compared by the base value
    span: tuple[int, int]
    raw: str

    def as_dict(self) -> dict:
        return {
            "kind": str(self.kind),
            "value": self.value,
            "unit": self.unit,
            "approx": self.approx,
            "span": list(self.span),
            "raw": self.raw,
        }


SMALL_MULTIPLIERS = {"십": 10, "백": 100, "천": 1000}
BIG_MULTIPLIERS = {"만": 10**4, "억": 10**8, "조": 10**12}
HANGUL_DIGITS = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
_HANGUL_NUMERAL_CHARS = frozenset(HANGUL_DIGITS) | frozenset(SMALL_MULTIPLIERS) | frozenset(BIG_MULTIPLIERS)

_NUM = r"[0-9]+(?:,[0-9]{3}(?![0-9]))*(?:\.[0-9]+)?"
# One term: a number, an optional 십/백/천 and an optional 만/억/조 closing the group of terms before it.
_TERM_RE = re.compile(rf"({_NUM})([십백천]?)([만억조]?)")
# Terms follow each other directly or after one space, and a space may only follow a multiplier:
# "1억 2천만", "12만 3,400" and "3만5천" are one number, "2026 3만" is not.
_EXPR_RE = re.compile(rf"{_NUM}[십백천]?[만억조]?(?:(?<=[십백천만억조]) ?{_NUM}[십백천]?[만억조]?)*")
# The same with one space allowed before a multiplier too ("3 만원", "1 억 2 천만 원", "5 천 원"): read so
# only when 원 (or KRW) ends the number, since "3 만 개" and "2 천 명" are counts.
_SPACED_TERM_RE = re.compile(rf"({_NUM})(?: ?([십백천]))?(?: ?([만억조]))?")
_SPACED_EXPR_RE = re.compile(
    rf"{_NUM}(?: ?[십백천])?(?: ?[만억조])?(?:(?<=[십백천만억조]) ?{_NUM}(?: ?[십백천])?(?: ?[만억조])?)*"
)
# Where a number may start (never inside a word like S24 or a number like 1,000), and only where
# something after it can make it a quantity — this keeps plain dates and codes out of Python code.
# These checks follow the number's first digit.
_CANDIDATE_CHECKS = (
    "(?:(?<=[₩￦][0-9])|(?<=[₩￦] [0-9])|(?<=KRW[0-9])|(?<=KRW [0-9])"
    "|(?<![0-9A-Za-z.,_][0-9])"
    "(?=[0-9,.]*(?: ?[십백천만억조]|,[0-9]{3}|-[0-9]| ?(?:[원%％~～〜]|퍼센트|프로|KRW|[Ww]on))))"
)
_CANDIDATE_RE = re.compile("[0-9]" + _CANDIDATE_CHECKS)
_VALID_GROUPING_RE = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?")
_MULTIPLIER_RE = re.compile(r"[십백천만억조]")
# Deleting zeros, separators, multipliers and spaces from a written number leaves its non-zero digits in
# order, and those are the non-zero digits of its value (3만5천 → "35" → 35,000; 1억 5만 → "15" → 100,050,000).
_INSIGNIFICANT = str.maketrans("", "", "0,. 십백천만억조")
_MULTIPLIER_CHARS = frozenset("십백천만억조")
_CHAIN_CHARS = frozenset("0123456789,.") | _MULTIPLIER_CHARS
_FIRST_NUMBER_RE = re.compile(_NUM)  # the number the parser would read, not the whole digit run
# A number with a multiplier right after it (one space allowed): a leading multiplier other than 1.
_LEADING_MULTIPLIER_RE = re.compile(_NUM + " ?[십백천만억조]")

# 원 starts a few ordinary words (원래, 원칙 ...): after a number those are not the currency.
_WON = r"원(?![래칙활격숭망룸두])"
_UNIT_RE = re.compile(
    r" ?(?:"
    r"(?P<point>[%％] ?[pP](?:[tT])?(?![A-Za-z])|[%％] ?포인트|퍼센트 ?포인트|프로 ?포인트)"
    r"|(?P<percent>[%％]|퍼센트|프로(?![모그젝필세듀덕틴바토게파펠]))"
    rf"|(?P<won>{_WON}|KRW(?![A-Za-z])|[Ww]on(?![A-Za-z]))"
    r")"
)
_RANGE_SEPARATOR_RE = re.compile(r" ?[~～〜] ?|-(?=[0-9])")
_APPROX_SUFFIX_RE = re.compile(r" ?(?:정도|쯤|가량|내외|안팎|남짓|전후)")
_APPROX_PREFIXES = ("대략적으로", "어림잡아", "대략", "얼추", "약")
_PREFIX_LAST_CHARS = {" ", "₩", "￦", "W", *(prefix[-1] for prefix in _APPROX_PREFIXES)}

# Units that make a number a count or a measure, not money ("3만 개", "10,000EA", "3만 엔").
_COUNT_UNITS = sorted(
    (
        "개월",
        "개국",
        "개사",
        "개소",
        "개",
        "박스",
        "상자",
        "명",
        "분",
        "인분",
        "인",
        "건",
        "장",
        "대",
        "병",
        "봉지",
        "봉",
        "팩",
        "세트",
        "켤레",
        "벌",
        "권",
        "통",
        "캔",
        "회원",
        "회",
        "번",
        "차례",
        "곳",
        "점",
        "가지",
        "마리",
        "판",
        "줄",
        "알",
        "톤",
        "킬로",
        "그램",
        "리터",
        "미터",
        "평",
        "시간",
        "초",
        "일",
        "주",
        "년",
        "월",
        "호",
        "층",
        "등",
        "위",
        "배",
        "부",
        "쪽",
        "페이지",
        "자",
        "글자",
        "뷰",
        "조회",
        "가구",
        "세대",
        "포인트",
        "마일리지",
        "마일",
        "달러",
        "엔",
        "위안",
        "유로",
        "파운드",
        "불",
        "피스",
        "롤",
        "매",
        "묶음",
        "다스",
        "포대",
        "포",
        "카톤",
        "팔레트",
        "파레트",
        "컨테이너",
        "품목",
        "종",
        "다운로드",
        "팔로워",
        "구독자",
        "주문",
        "세",
        "살",
        "가입자",
        "고객",
    ),
    key=len,
    reverse=True,
)
_COUNT_UNIT_RE = re.compile(" ?(" + "|".join(_COUNT_UNITS) + ")")
# What may follow a count unit in the same word ("3만 개씩", "3만 명입니다").
_COUNT_FOLLOWERS = (*UNIT_FOLLOWERS, "째", "님", "입니다", "이에요")

_HANGUL_NUMERAL_RE = re.compile(
    r"(?<![가-힣0-9])(?<![0-9] )[일이삼사오육칠팔구십백천만억조]+(?: [일이삼사오육칠팔구십백천만억조]+)*"
    rf"(?= ?{_WON})"
)
_WON_AFTER_HANGUL_RE = re.compile(rf" ?{_WON}")


def format_quantity(quantity: Quantity) -> str:
    """As a reason line shows it: 35,000원, 12.5%, 3%p."""
    if quantity.kind == _AMOUNT:
        return f"{quantity.value:,}원"
    return f"{quantity.value}{quantity.unit}"


def parse_quantities(text: str) -> list[Quantity]:
    """Every amount, percentage and percentage-point value in ``text``, in order of position."""
    found = _parse_arabic(text) + _parse_hangul(text)
    found.sort(key=lambda quantity: quantity.span)
    return found


# Evidence passages whose answers are remembered (an LRU keyed by the passage text), and how many
# answers one passage keeps before it starts afresh. An entry holds the caller's string and a few flags.
_PASSAGE_MEMO_SIZE = 2048
_ANSWERS_PER_PASSAGE = 512

Pair = tuple[str, int | float]
_NO_PAIRS: frozenset[Pair] = frozenset()


def quantity_values_among(passages: Iterable[str], wanted: Iterable[Quantity]) -> set[Pair]:
    """The ``(kind, value)`` pairs of ``wanted`` that some passage states (as a value, a range end or an
    approximation's base) — the same answer as parsing every passage fully, without doing so.

    Evidence is long and full of numbers, and a full parse costs Python work for each of them. A written
    number's non-zero digits are its value's non-zero digits in order (3만5천 and 35,000 are "35"), so
    a literal search for each wanted value's digits finds the only places that can state it, and the
    exact parser runs from the start of the number chain around each place; the search ends once every
    wanted value is found. What a passage states is remembered per passage text, so rewrite rounds and
    repeated questions do not search the same evidence for the same value again.
    """
    remaining = {(quantity.kind, quantity.value) for quantity in wanted}
    if not remaining:  # a draft without amounts and percentages: no passage needs its memo entry
        return set()
    found: set[Pair] = set()
    open_questions: list[tuple[_PassageNumbers, set[Pair]]] = []  # passages with pairs not yet settled
    for passage in passages:
        numbers = _passage_numbers(passage)
        stated, unknown = numbers.answers(remaining)
        found |= stated
        if unknown:
            open_questions.append((numbers, unknown))
    still_wanted = remaining - found
    unsearched = [numbers for numbers, unknown in open_questions if not unknown.isdisjoint(still_wanted)]
    if unsearched:
        found |= _search_passages(unsearched, still_wanted)
    return found


def states_pair(text: str, pair: Pair) -> bool:
    """Whether ``parse_quantities(text)`` yields ``pair`` (as a value, a range end or an approximation's base),
    found as ``quantity_values_among`` finds it, without a full parse and without a memo entry."""
    if pair in _stated_pairs(text, {pair}):
        return True
    return pair[0] == _AMOUNT and any((quantity.kind, quantity.value) == pair for quantity in _parse_hangul(text))


@lru_cache(maxsize=_PASSAGE_MEMO_SIZE)
def _passage_numbers(passage: str) -> "_PassageNumbers":
    return _PassageNumbers(passage)


class _PassageNumbers(dict):
    """What one evidence passage is known to state: the mapping itself holds an answer per ``(kind, value)`` once a
    search settled it (a dict, not an object holding one: every passage of new evidence gets an entry, and each
    object is one more for the young-generation garbage collections to walk). Answers depend on the text alone,
    so they never go stale (a changed passage is another key). Shared between threads safely: a race costs a
    repeated search, never a wrong answer."""

    __slots__ = ("hangul_amounts", "text")

    def __init__(self, text: str):
        super().__init__()
        self.text = text
        self.hangul_amounts: frozenset[Pair] | None = None  # amounts in Hangul numerals, once looked for

    def answers(self, pairs: set[Pair]) -> tuple[set[Pair] | frozenset[Pair], set[Pair]]:
        """The pairs known to be stated here, and the pairs not settled yet (both read-only)."""
        if not self:  # a passage not searched yet
            return _NO_PAIRS, pairs
        stated = set()
        unknown = set()
        for pair in pairs:
            answer = self.get(pair)
            if answer:
                stated.add(pair)
            elif answer is None:
                unknown.add(pair)
        return stated, unknown

    def learn(self, pairs: Iterable[Pair], stated: bool) -> None:
        if len(self) >= _ANSWERS_PER_PASSAGE:
            self.clear()
        self.update(dict.fromkeys(pairs, stated))


def _search_passages(passages: list[_PassageNumbers], wanted_pairs: set[Pair]) -> set[Pair]:
    """Search ``passages`` together for ``wanted_pairs`` and teach each passage what the search settled:
    a pair found is stated by the passage it was found in; a pair the whole search did not find is stated
    by none of them."""
    text = "\n".join(numbers.text for numbers in passages)  # no number, unit or range crosses a line break
    starts = list(accumulate((len(numbers.text) + 1 for numbers in passages[:-1]), initial=0))
    found_at = _stated_pairs(text, wanted_pairs)
    for pair, position in found_at.items():
        passages[bisect_right(starts, position) - 1].learn((pair,), True)
    found = set(found_at)
    if missing_amounts := {pair for pair in wanted_pairs - found if pair[0] == _AMOUNT}:
        if any(numbers.hangul_amounts is None for numbers in passages):
            _learn_hangul_amounts(passages, text, starts)
        for numbers in passages:
            if stated := missing_amounts & numbers.hangul_amounts:
                numbers.learn(stated, True)
                found |= stated
    if not_stated := wanted_pairs - found:
        for numbers in passages:
            numbers.learn(not_stated, False)
    return found


def _learn_hangul_amounts(passages: list[_PassageNumbers], text: str, starts: list[int]) -> None:
    """Give each passage the amounts written in Hangul numerals in it (few: 오만원, 삼만 오천 원), from one
    pass over the passages joined as ``text`` (passage ``i`` starting at ``starts[i]``)."""
    amounts: list[set[Pair]] = [set() for _ in passages]
    for quantity in _parse_hangul(text):
        amounts[bisect_right(starts, quantity.span[0]) - 1].add((quantity.kind, quantity.value))
    for numbers, pairs in zip(passages, amounts, strict=True):
        # Most passages have none: one shared empty set, not a new object per passage that every young-generation
        # garbage collection must walk (20 a draft of new evidence, ~a fifth of what a draft leaves behind).
        numbers.hangul_amounts = frozenset(pairs) if pairs else _NO_PAIRS


def _stated_pairs(text: str, wanted_pairs: set[Pair]) -> dict[Pair, int]:
    """The pairs of ``wanted_pairs`` that a full parse of ``text`` yields from Arabic digits, each with
    where it was found. Only the number chains where a value still unfound may be written are parsed:
    two literal-led patterns per first one or two significant digits (led by that digit, or by zeros as
    in "0.5%"); a pattern stops once its values are found, the search once all are. Numbers whose digits
    are not their value's ("1.5천 2백" is 1,700) are few and parsed first, whatever the values."""
    found: dict[Pair, int] = {}
    resume_at: dict[int, int] = {}  # chain start → where a full parse goes on after the chain's scanned part
    for decimal in _DECIMAL_TERM_WITH_MORE_RE.finditer(text):
        start = _decimal_number_start(text, decimal.start())
        chain_start = _chain_start(text, start)
        scanned_until = resume_at.get(chain_start, chain_start)
        if start >= scanned_until:
            resume_at[chain_start] = _scan_chain(text, scanned_until, start, found)
    unfound = wanted_pairs - found.keys()
    if not unfound:
        return {pair: found[pair] for pair in wanted_pairs}
    values, largest, prefixes = _search_terms(unfound)
    for prefix in sorted(prefixes):
        for pattern in _number_run_patterns(prefix):
            position = 0
            while prefix in prefixes and (match := pattern.search(text, position)):
                position = match.start() + 1  # overlapping: a number may start inside a run
                if not _may_state(text, match, values, largest):
                    continue
                hit = match.start()
                chain_start = _chain_start(text, hit)
                scanned_until = resume_at.get(chain_start, chain_start)
                if hit < scanned_until:  # parsed already, for an earlier hit in the same chain
                    continue
                resume_at[chain_start] = _scan_chain(text, scanned_until, hit, found)
                if newly_found := unfound & found.keys():
                    unfound -= newly_found
                    if not unfound:
                        return {pair: found[pair] for pair in wanted_pairs}
                    values, largest, prefixes = _search_terms(unfound)
    return {pair: position for pair, position in found.items() if pair in wanted_pairs}


# A decimal term with a multiplier that more terms follow: its digits and the next terms' overlap
# ("1.5천 2백" is 1,700, "0.31억 2천만" is 51,000,000), so the signature rule does not hold for it.
# (Whole-number terms cannot overlap: the parser stops at a term as large as the unit before it.)
_DECIMAL_TERM_WITH_MORE_RE = re.compile(r"\.(?<=[0-9]\.)[0-9]+ ?(?:[십백천] ?[만억조]?|[만억조]) ?[0-9]")


def _decimal_number_start(text: str, point: int) -> int:
    """Where the number holding the decimal point at ``point`` starts (digits and separators before it)."""
    start = point
    while start > 0 and (text[start - 1].isdigit() or text[start - 1] == ","):
        start -= 1
    while not text[start].isdigit():  # a separator cannot start a number
        start += 1
    return start


def _search_terms(pairs: set[Pair]) -> tuple[set[int | float], dict[str, int | float], set[str]]:
    """The values of ``pairs``, the largest value per signature, and the signatures' first one or two
    digits (the search patterns' prefixes)."""
    values = {value for _, value in pairs}
    largest: dict[str, int | float] = {}
    for value in values:
        signature = value_signature(value)
        largest[signature] = max(value, largest.get(signature, value))
    return values, largest, {signature[:2] for signature in largest}


def _may_state(text: str, match: re.Match, values: set[int | float], largest: dict[str, int | float]) -> bool:
    """Whether the number run at ``match`` may state one of ``values`` (``largest``: the largest value per
    signature). The first number's own digits begin a signature and the whole run of terms begins with
    it (a shorter well-formed prefix may be the value). A quantity starting here is at least its first
    term ("3만" is at least 30,000, whatever follows), so not when that exceeds every such value. A plain
    number states its own value, or as a range's bare low end that value times the high end's leading
    multiplier; the range's high end starts a number of its own."""
    run = match.group()
    first_number = _FIRST_NUMBER_RE.match(run).group()
    significant = first_number.translate(_INSIGNIFICANT)
    whole_run = run.translate(_INSIGNIFICANT)
    ceiling = None
    for signature, value in largest.items():  # a loop, not any(): this runs for every candidate number
        if whole_run.startswith(signature) and signature.startswith(significant):
            ceiling = value if ceiling is None else max(ceiling, value)
    if ceiling is None:
        return False
    scale = _first_term_multiplier(run, len(first_number))
    if scale > 1:
        return _to_number(first_number) * scale <= ceiling
    if run.rstrip(" .,") != first_number or not _VALID_GROUPING_RE.fullmatch(first_number):
        return True  # more terms follow, or an odd grouping: the parser decides
    number = _to_number(first_number)
    if normalise_number(number) in values:
        return True
    # Else only as the bare low end of a range, worth the high end's leading multiplier ("3~5만원"); without a
    # multiplier after the high end's first number that is 1, and the number itself is no value (a phone number).
    separator = _RANGE_SEPARATOR_RE.match(text, match.start() + len(first_number))
    if separator is None or not _LEADING_MULTIPLIER_RE.match(text, separator.end()):
        return False
    if _read_expr(text, separator.end()) is None:
        return False
    return normalise_number(number * _high_end_multiplier(text, separator.end())) in values


def _first_term_multiplier(written: str, number_end: int) -> int:
    """What the 십/백/천 and 만/억/조 right after a term's number multiply it by ("3천만" → 10⁷)."""
    small = SMALL_MULTIPLIERS.get(written[number_end : number_end + 1], 1)
    big_at = number_end + (small > 1)
    return small * BIG_MULTIPLIERS.get(written[big_at : big_at + 1], 1)


_INSIGNIFICANT_RUN = "[0,. 십백천만억조]*"
# After a number's first digit: the rest of that number (as _NUM reads it: digits, groups of three after a
# comma, decimals) is all zeros — what a one-digit signature needs ("3,000" and "30" yes, "3,500" no).
_ONLY_ZEROS_AFTER = r"(?=0*+(?![1-9])(?:,000(?![0-9]))*+(?!,[0-9]{3}(?![0-9]))(?!\.0*[1-9]))"
_RUN_OF_TERMS = "[0-9,. 십백천만억조]*"


@lru_cache(maxsize=128)
def _number_run_patterns(prefix: str) -> tuple[re.Pattern, ...]:
    """Candidate numbers whose significant digits begin with ``prefix`` (one or two digits; none for the
    value 0), with the run of terms after them: one pattern for numbers led by the prefix's first digit,
    one for numbers led by zeros. Each starts with a literal, so the regex engine skips ahead fast, and
    tries the cheap look at the next digits before the candidate checks; at most 91 prefixes, compiled
    once each, never one pattern per wanted value."""
    if not prefix:  # only numbers of zeros state 0
        return (re.compile("0" + _CANDIDATE_CHECKS + _RUN_OF_TERMS),)
    rest = "".join(_INSIGNIFICANT_RUN + digit for digit in prefix[1:])
    led_by_digit = f"{prefix[0]}(?={rest})" if rest else prefix[0] + _ONLY_ZEROS_AFTER
    led_by_zeros = f"0(?={_INSIGNIFICANT_RUN}{prefix[0]}{rest})"
    return tuple(re.compile(lead + _CANDIDATE_CHECKS + _RUN_OF_TERMS) for lead in (led_by_digit, led_by_zeros))


def _scan_chain(text: str, position: int, last_start: int, found: dict[Pair, int]) -> int:
    """Parse exactly as ``parse_quantities`` would from ``position``, for numbers starting up to
    ``last_start``; add their pairs to ``found`` (with where they start) and return where a full parse
    would go on."""
    for start in range(position, last_start + 1):
        if start >= position and text[start].isdigit() and _CANDIDATE_RE.match(text, start):
            quantities, end = _parse_at(text, start)
            for quantity in quantities:
                found.setdefault((quantity.kind, quantity.value), start)
            position = max(end, start + 1)
    return position


@lru_cache(maxsize=4096)  # prices and rates recur across drafts
def value_signature(value: int | float) -> str:
    """The non-zero digits of a value in order: what every written form of it holds once zeros, separators,
    multipliers and spaces are taken out (35,000 and 3만5천: "35")."""
    return format(Decimal(str(value)), "f").translate(_INSIGNIFICANT)


def _chain_start(text: str, position: int) -> int:
    """The first digit of the run of number terms that ``position`` lies in ("12만 3,400" for the 3)."""
    start = position
    while start > 0:
        before = text[start - 1]
        if before in _CHAIN_CHARS or (
            before == " "
            and start > 1
            and (text[start - 2] in _MULTIPLIER_CHARS or text[start : start + 1] in _MULTIPLIER_CHARS)
        ):
            start -= 1
        else:
            break
    while start < position and not text[start].isdigit():
        start += 1
    return start


# 원 right after a Hangul numeral syllable (or one space after it) — not after a digit's multiplier, as in
# the many "10만원" — where a Hangul amount can end. It starts with the literal 원, which the regex engine
# finds fast; the syllables are looked for behind it.
_WON_AFTER_NUMERAL_RE = re.compile(
    "원(?:(?<=[{0}]원)(?<![0-9][{0}]원)|(?<=[{0}] 원))".format("일이삼사오육칠팔구십백천만억조")
)


def _hangul_matches_near_won(text: str) -> Iterator[re.Match]:
    """The Hangul numeral matches ``_HANGUL_NUMERAL_RE.finditer`` would give, found from each 원 that a
    numeral syllable precedes, backwards (Korean evidence holds far more 원 than Hangul numerals, and
    ``_HANGUL_NUMERAL_RE`` starts with lookbehinds, so a pass of it over all the text is slow)."""
    for won in _WON_AFTER_NUMERAL_RE.finditer(text):
        index = won.start()
        run_start = index
        while run_start > 0 and (text[run_start - 1] in _HANGUL_NUMERAL_CHARS or text[run_start - 1] == " "):
            run_start -= 1
        # A numeral starts only after a space or where no syllable or digit precedes: "10만원" holds none.
        before = text[run_start - 1] if run_start else ""
        if " " not in text[run_start:index] and ("0" <= before <= "9" or "가" <= before <= "힣"):
            continue
        if match := _HANGUL_NUMERAL_RE.search(text, run_start, index + 2):
            yield match


def normalise_number(value: int | Decimal) -> int | float:
    """An int where the value is integral, else a float (JSON-friendly, equal values compare equal)."""
    if isinstance(value, int):
        return value
    return int(value) if value == value.to_integral_value() else float(value)


class _Expr(NamedTuple):  # a tuple: made for every candidate number, and cheap to make
    """A parsed run of number terms, before a kind is known."""

    start: int
    end: int
    value: int | Decimal
    has_multiplier: bool
    has_big_multiplier: bool
    has_separator: bool
    # What the first term's multipliers amount to: "5만" → 10⁴, "3천만" → 10⁷ (for "2~3천만원").
    leading_multiplier: int


class _Unit(NamedTuple):
    kind: QuantityKind
    end: int


def _parse_arabic(text: str) -> list[Quantity]:
    found: list[Quantity] = []
    position = 0
    while match := _CANDIDATE_RE.search(text, position):
        quantities, end = _parse_at(text, match.start())
        found.extend(quantities)
        position = max(end, match.end())
    return found


def _parse_at(text: str, start: int) -> tuple[list[Quantity], int]:
    """Quantities starting with the number at ``start`` and the position to scan on from."""
    low = _read_expr(text, start)
    if low is None:
        return [], start + 1
    if _SPACE_BEFORE_MULTIPLIER_RE.match(text, low.end):
        spaced = _read_expr(text, start, spaced=True)
        if spaced.end > low.end and _ends_in_won(text, spaced):
            low = spaced
    span_start, currency_prefix, approx = _read_prefixes(text, start)
    cursor = low.end
    if low.has_multiplier and text.startswith("여", cursor):  # 3만여 원: more than 30,000
        approx, cursor = True, cursor + 1
    unit = _read_unit(text, cursor)
    if unit is None and not currency_prefix and (separator := _RANGE_SEPARATOR_RE.match(text, cursor)):
        high_quantities, high_end = _parse_at(text, separator.end())
        if high_quantities:
            high = high_quantities[0]
            # "3~5만원": a bare low end takes the high end's multiplier (30,000 and 50,000).
            value = low.value if low.has_multiplier else low.value * _high_end_multiplier(text, separator.end())
            approx = approx or high.approx
            low_quantity = Quantity(
                kind=high.kind,
                value=normalise_number(value),
                unit=high.unit,
                approx=approx,
                span=(span_start, low.end),
                raw=text[span_start : low.end],
            )
            high_quantity = Quantity(high.kind, high.value, high.unit, approx, high.span, high.raw)
            return [low_quantity, high_quantity, *high_quantities[1:]], high_end
    if unit is not None:
        kind, cursor = unit.kind, unit.end
        if kind is _AMOUNT and text.startswith("대", cursor):  # 3만원대: in the 30,000s
            approx, cursor = True, cursor + 1
    elif currency_prefix or (
        (low.has_big_multiplier or low.has_separator) and not _followed_by_other_unit(text, cursor)
    ):
        kind = _AMOUNT
    else:
        return [], low.end
    if suffix := _APPROX_SUFFIX_RE.match(text, cursor):
        approx, cursor = True, suffix.end()
    quantity = Quantity(
        kind=kind,
        value=normalise_number(low.value),
        unit=UNIT_BY_KIND[kind],
        approx=approx,
        span=(span_start, cursor),
        raw=text[span_start:cursor],
    )
    return [quantity], cursor


def _high_end_multiplier(text: str, start: int) -> int:
    """The leading multiplier of a range's high end at ``start`` ("5만원", "5 만원": 10⁴)."""
    spaced = _read_expr(text, start, spaced=True)
    if _ends_in_won(text, spaced):
        return spaced.leading_multiplier
    return _read_expr(text, start).leading_multiplier


def _read_expr(text: str, start: int, spaced: bool = False) -> _Expr | None:
    """The longest well-formed number at ``start`` (descending units, sane groups), or None; ``spaced``
    allows a space before a multiplier ("3 만")."""
    match = (_SPACED_EXPR_RE if spaced else _EXPR_RE).match(text, start)
    if match is None:
        return None
    written = match.group()
    if _MULTIPLIER_RE.search(written) is None:  # a plain number: the common case, kept cheap
        if _VALID_GROUPING_RE.fullmatch(written) is None:
            return None
        return _Expr(start, match.end(), _to_number(written), False, False, "," in written, 1)
    total = 0
    group = 0
    last_big = last_small = None  # multipliers must strictly descend
    group_closed_by_bare_term = False
    end = start
    has_multiplier = has_big = has_separator = False
    leading_multiplier = 1
    for index, term in enumerate((_SPACED_TERM_RE if spaced else _TERM_RE).finditer(written)):
        number_text, small, big = term.groups()
        small, big = small or "", big or ""
        if _VALID_GROUPING_RE.fullmatch(number_text) is None or (index and "." in number_text):
            break
        number = _to_number(number_text)
        small_value = SMALL_MULTIPLIERS.get(small, 1)
        term_value = number * small_value
        if group_closed_by_bare_term or (last_small is not None and term_value >= last_small):
            break
        big_value = BIG_MULTIPLIERS.get(big)
        group_value = group + term_value
        if last_big is not None and group_value * (big_value or 1) >= last_big:
            break
        if big_value is not None:
            total += group_value * big_value
            group, last_small, last_big = 0, None, big_value
        else:
            group = group_value
            last_small = small_value if small else None
            group_closed_by_bare_term = not small
        if index == 0:
            leading_multiplier = small_value * (big_value or 1)
            has_separator = "," in number_text
        has_multiplier = has_multiplier or bool(small or big)
        has_big = has_big or big_value is not None
        end = start + term.end()
    if end == start:
        return None
    return _Expr(start, end, total + group, has_multiplier, has_big, has_separator, leading_multiplier)


_SPACE_BEFORE_MULTIPLIER_RE = re.compile(" [십백천만억조]")


def _ends_in_won(text: str, expr: _Expr) -> bool:
    """Whether 원 or KRW (after an optional 여) follows the number: a spaced multiplier is money only then."""
    cursor = expr.end + text.startswith("여", expr.end)
    unit = _read_unit(text, cursor)
    return unit is not None and unit.kind is _AMOUNT


def _to_number(written: str) -> int | Decimal:
    digits = written.replace(",", "")
    return Decimal(digits) if "." in digits else int(digits)


def _read_prefixes(text: str, start: int) -> tuple[int, bool, bool]:
    """Where the quantity's span starts, whether a currency sign precedes it, whether 약 … does."""
    if text[start - 1 : start] not in _PREFIX_LAST_CHARS:
        return start, False, False
    cursor = start
    currency = False
    before = cursor - 1 if text[cursor - 1 : cursor] == " " else cursor
    if text[before - 1 : before] not in _PREFIX_LAST_CHARS:  # the usual "는 3,000원": nothing before
        return start, False, False
    if text[before - 1 : before] in ("₩", "￦"):
        currency, cursor = True, before - 1
    elif text[before - 3 : before] == "KRW" and not text[before - 4 : before - 3].isalpha():
        currency, cursor = True, before - 3
    before = cursor - 1 if text[cursor - 1 : cursor] == " " else cursor
    for prefix in _APPROX_PREFIXES:
        prefix_start = before - len(prefix)
        # 약 must start its word: "예약 3만원" is a booking, not an approximation.
        if (
            prefix_start >= 0
            and text.startswith(prefix, prefix_start)
            and (prefix_start == 0 or not is_hangul_syllable(text[prefix_start - 1]))
        ):
            return prefix_start, currency, True
    return cursor, currency, False


def _read_unit(text: str, position: int) -> _Unit | None:
    match = _UNIT_RE.match(text, position)
    if match is None:
        return None
    if match.group("point"):
        return _Unit(_PERCENT_POINT, match.end())
    if match.group("percent"):
        return _Unit(_PERCENT, match.end())
    return _Unit(_AMOUNT, match.end())


def _followed_by_other_unit(text: str, position: int) -> bool:
    """A count or measure unit ("3만 개"), or a Latin unit ("1,000 mAh"), follows the number."""
    cursor = position + 1 if text[position : position + 1] == " " else position
    if text[cursor : cursor + 1].isascii() and text[cursor : cursor + 1].isalpha():
        return True
    match = _COUNT_UNIT_RE.match(text, position)
    if match is None:
        return False
    rest_start = match.end()
    rest_end = rest_start
    while rest_end < len(text) and is_hangul_syllable(text[rest_end]):
        rest_end += 1
    rest = text[rest_start:rest_end]
    return not rest or rest in PARTICLES or rest.startswith(_COUNT_FOLLOWERS)


def _parse_hangul(text: str) -> list[Quantity]:
    found = []
    for match in _hangul_matches_near_won(text):
        start = match.start()
        chunks = match.group().split(" ")
        # A chunk joins the next one across a space only if it ends in 만/억/조 ("삼만 오천 원"); else
        # the earlier chunks are separate words ("이 만원" is "this 10,000 won").
        for index in range(len(chunks) - 1, 0, -1):
            if chunks[index - 1][-1] not in BIG_MULTIPLIERS:
                start += sum(len(chunk) + 1 for chunk in chunks[:index])
                chunks = chunks[index:]
                break
        value = hangul_numeral_value("".join(chunks))
        won = _WON_AFTER_HANGUL_RE.match(text, match.end())
        if value is None or won is None:  # won is None only past a search's end: 원래, 원칙 ...
            continue
        end = won.end()
        approx = False
        if text.startswith("대", end):
            approx, end = True, end + 1
        if suffix := _APPROX_SUFFIX_RE.match(text, end):
            approx, end = True, suffix.end()
        span_start, _, prefixed_approx = _read_prefixes(text, start)
        found.append(
            Quantity(
                kind=_AMOUNT,
                value=value,
                unit=UNIT_BY_KIND[_AMOUNT],
                approx=approx or prefixed_approx,
                span=(span_start, end),
                raw=text[span_start:end],
            )
        )
    return found


def hangul_numeral_value(numeral: str) -> int | None:
    """The value of a Hangul numeral like 삼만오천 or 일억이천만; None unless well formed with a multiplier.

    억 and 조 need a numeral before them (조원 is a team member, 일조원 is money); 만, 천, 백 and 십
    stand for one of themselves (만원, 천원).
    """
    total = group = 0
    digit = None
    last_small = last_big = None
    has_multiplier = False
    for char in numeral:
        if char in HANGUL_DIGITS:
            if digit is not None:  # 삼사만 is "three or four ten-thousands", not a number
                return None
            digit = HANGUL_DIGITS[char]
        elif char in SMALL_MULTIPLIERS:
            small = SMALL_MULTIPLIERS[char]
            if last_small is not None and small >= last_small:
                return None
            group += (digit or 1) * small
            digit, last_small, has_multiplier = None, small, True
        else:
            big = BIG_MULTIPLIERS[char]
            if last_big is not None and big >= last_big:
                return None
            group += digit or 0
            if group == 0:
                if big > BIG_MULTIPLIERS["만"]:
                    return None
                group = 1
            total += group * big
            group, digit, last_small, last_big, has_multiplier = 0, None, None, big, True
    if not has_multiplier:
        return None
    return total + group + (digit or 0)
