"""Counterpart resolution rules (issue 2 section 4), checked on the pure index: no database."""

import random
import unicodedata

import pytest
from rapidfuzz import fuzz

from vendors.resolution import VendorIndex, jamo_similarity, normalize_name, split_room_name

VENDORS = [
    ("1001", "대한물산", []),
    ("1234", "가온상사", []),
    ("1235", "가온상회", []),
    ("2001", "하나식품", []),
    ("3001", "한빛유통", ["한빛"]),
    ("4001", "ABC Trading", ["에이비씨"]),
    ("5001", "(주)미래식품", []),
    ("6001", "누리", []),
    ("6002", "누리산업", []),
]
THRESHOLD = 0.80


@pytest.fixture(scope="module")
def index():
    return VendorIndex.build(VENDORS)


def resolve(index, room_name, limit=5):
    return index.resolve(room_name, typo_threshold=THRESHOLD, candidate_limit=limit)


# (room name, status, vendor code or None, reason)
CASES = [
    # With an ID
    ("(1001) 대한물산", "matched", "1001", "id"),
    ("(1001)대한물산 발주방", "matched", "1001", "id"),
    ("(1001)", "matched", "1001", "empty_name"),
    ("(1001)   ", "matched", "1001", "empty_name"),
    ("(1001) (주)", "matched", "1001", "empty_name"),
    ("(9999) 대한물산", "blocked", None, "unknown_id"),
    ("(9999)", "blocked", None, "unknown_id"),
    ("(01001) 대한물산", "blocked", None, "unknown_id"),  # the code is compared as a string
    ("(1234) 대한물산", "blocked", None, "id_typo"),  # 1234 is 가온상사; 대한물산 exists
    ("(1235) 가온상사", "blocked", None, "id_typo"),  # 가온상사 1.0 beats the ID's 가온상회 0.89
    ("(1001) 신한식품", "blocked", None, "id_typo"),  # 하나식품 0.84 >= 0.80 and beats 대한물산
    ("(1234) 가온상사 발주", "matched", "1234", "id"),  # 가온상회 scores 0.89: similar but not better
    ("(1234) 가온", "matched", "1234", "id"),  # 가온상회 ties at 1.0: not strictly more
    ("(1001) 가나다", "matched", "1001", "id"),  # others score more than the ID's vendor, but below 0.80
    ("  ( 1234 )가온상사", "matched", "1234", "id"),
    ("（１２３４）가온상사", "matched", "1234", "id"),  # full-width parentheses and digits
    ("(4001) ABC TRADING", "matched", "4001", "id"),
    # Without an ID: exact
    ("대한물산", "matched", "1001", "exact"),
    ("(주) 대한 물산", "matched", "1001", "exact"),
    ("㈜대한물산", "matched", "1001", "exact"),
    ("대한물산 주식회사", "matched", "1001", "exact"),
    ("미래식품", "matched", "5001", "exact"),  # the vendor's own (주) is dropped too
    ("abc trading", "matched", "4001", "exact"),
    ("ㄱㅏ온상사", "matched", "1234", "exact"),  # compatibility jamo composed
    ("가온\u200b상사", "matched", "1234", "exact"),  # zero-width space dropped
    ("ABC-trading", "matched", "4001", "exact"),
    ("(1234) 가온-상사", "matched", "1234", "id"),
    ("ＡＢＣ　Ｔｒａｄｉｎｇ", "matched", "4001", "exact"),  # full-width Latin and ideographic space
    ("에이비씨", "matched", "4001", "exact"),  # an alias
    ("누리", "matched", "6001", "exact"),  # exact wins although 누리산업 contains it
    # Without an ID: containment, both directions
    ("대한물산 발주방", "matched", "1001", "containment"),
    ("[공지] 한빛 유통 정산", "matched", "3001", "containment"),  # name and alias of one vendor
    ("미래식", "matched", "5001", "containment"),  # the room name inside a vendor name
    ("가온", "unresolved", None, "ambiguous"),  # inside 가온상사 and 가온상회
    ("누리산업 발주방", "unresolved", None, "ambiguous"),  # 누리 and 누리산업: no preference for the longest
    # Without an ID: nothing else
    ("신한식품", "unresolved", None, "no_match"),  # shares only the suffix with 하나식품 (0.84): no fuzzy match
    ("나래상사", "unresolved", None, "no_match"),
    ("대한뮬산", "unresolved", None, "no_match"),  # a typo without an ID is not guessed
    ("가", "unresolved", None, "no_match"),  # a contained string must be at least 2 characters
    ("", "unresolved", None, "no_match"),
    ("(주)", "unresolved", None, "no_match"),
]


@pytest.mark.parametrize(("room_name", "status", "vendor_code", "reason"), CASES)
def test_resolution_table(index, room_name, status, vendor_code, reason):
    """Each room name resolves to the status, vendor and reason the rules give."""
    result = resolve(index, room_name)
    assert (result.status, result.vendor_code, result.reason) == (status, vendor_code, reason)
    expected_name = dict((code, name) for code, name, _ in VENDORS).get(vendor_code)
    assert result.vendor_name == expected_name


def test_suffix_only_similarity_would_pass_the_fuzzy_threshold(index):
    """The no-fuzzy rule matters: 신한식품 scores >= 0.80 against 하나식품, yet the room stays unresolved."""
    result = resolve(index, "신한식품")
    assert result.candidates[0]["code"] == "2001"
    assert result.candidates[0]["score"] >= THRESHOLD
    assert result.status == "unresolved"


def test_candidates_are_the_top_vendors_by_jamo_score(index):
    """Candidates: best first, ties by code, scores exactly partial_ratio(nfd, nfd) / 100, at most the limit."""
    result = resolve(index, "(1234) 대한물산", limit=3)
    assert result.candidates[0] == {"code": "1001", "name": "대한물산", "score": 1.0}
    assert len(result.candidates) == 3
    for candidate in result.candidates:
        names = next([name, *aliases] for code, name, aliases in VENDORS if code == candidate["code"])
        assert candidate["score"] == max(jamo_similarity("대한물산", normalize_name(n)) for n in names)
    scores = [c["score"] for c in result.candidates]
    assert scores == sorted(scores, reverse=True)


def test_ambiguous_candidates_include_every_contained_vendor(index):
    """For `가온` both 가온상사 and 가온상회 score 1.0 and are listed, lower code first."""
    result = resolve(index, "가온")
    assert [(c["code"], c["score"]) for c in result.candidates[:2]] == [("1234", 1.0), ("1235", 1.0)]


def test_no_candidates_without_a_name_part(index):
    """An empty name part compares with nothing, so there are no candidates."""
    assert resolve(index, "(1001)").candidates == []


def test_unknown_id_still_lists_candidates_for_staff(index):
    """An unknown ID is blocked, and the name part's best vendors are shown."""
    result = resolve(index, "(9999) 대한물산")
    assert result.candidates[0]["code"] == "1001"


def test_typo_threshold_is_a_parameter(index):
    """Raising the threshold above the rival's score turns the suffix-only ID typo into a match."""
    result = index.resolve("(1001) 신한식품", typo_threshold=0.9, candidate_limit=5)
    assert (result.status, result.vendor_code, result.reason) == ("matched", "1001", "id")


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("(주) 대한 물산", "대한물산"),
        ("대한물산㈜", "대한물산"),
        ("주식회사 대한물산", "대한물산"),
        ("( 주 ) 대한물산", "대한물산"),
        ("ABC Trading", "abctrading"),
        ("ＡＢＣ\u3000１２３", "abc123"),
        (" 대한\t물산\n", "대한물산"),
        ("가온\u200b상사", "가온상사"),
        ("ㄱㅏ온상사", "가온상사"),
        ("가온-상사", "가온상사"),
        ("GAON  SANGSA", "gaonsangsa"),
        ("gaon-sangsa", "gaonsangsa"),
    ],
)
def test_normalize_name(raw, normalised):
    """NFKC, corporate marks dropped, Latin case folded, whitespace, hyphens and invisible characters removed,
    jamo composed."""
    assert normalize_name(raw) == normalised


@pytest.mark.parametrize(
    ("room_name", "split"),
    [
        ("(1234) 대한물산", ("1234", "대한물산")),
        ("（１２３４） 대한물산", ("1234", "대한물산")),
        (" ( 1234 )대한물산", ("1234", "대한물산")),
        ("(1234)", ("1234", "")),
        ("(주)대한물산", (None, "(주)대한물산")),
        ("대한물산 (1234)", (None, "대한물산 (1234)")),
        ("(12 34) 대한물산", (None, "(12 34) 대한물산")),
    ],
)
def test_split_room_name(room_name, split):
    """A leading `(digits)` after NFKC is the ID; anything else is all name."""
    assert split_room_name(room_name) == split


def test_jamo_similarity_is_partial_ratio_on_nfd():
    """The similarity is exactly partial_ratio over the jamo decomposition, divided by 100."""
    assert (
        jamo_similarity("가온상사", "가온상회")
        == fuzz.partial_ratio(unicodedata.normalize("NFD", "가온상사"), unicodedata.normalize("NFD", "가온상회")) / 100
    )
    assert jamo_similarity("대한물산발주방", "대한물산") == 1.0


def _reference_resolve(rows, room_name, threshold, limit):
    """The rules written out naively: every vendor scored, no index."""
    code, name_part = split_room_name(room_name)
    query = normalize_name(name_part)
    names = {
        c: [n for n in dict.fromkeys(normalize_name(x) for x in [name, *aliases]) if n] for c, name, aliases in rows
    }
    display = {c: name for c, name, _ in rows}
    nfd = unicodedata.normalize

    def score(c):
        if not query:
            return 0.0
        return max((fuzz.partial_ratio(nfd("NFD", query), nfd("NFD", n)) / 100 for n in names[c]), default=0.0)

    scores = {c: score(c) for c in names}
    ranked = sorted(((c, s) for c, s in scores.items() if s > 0), key=lambda item: (-item[1], item[0]))[:limit]
    candidates = [{"code": c, "name": display[c], "score": s} for c, s in ranked]

    def outcome(status, reason, c=None):
        return (status, c, reason, candidates)

    if code is not None:
        if code not in names:
            return outcome("blocked", "unknown_id")
        if not query:
            return outcome("matched", "empty_name", code)
        if any(s >= threshold and s > scores[code] for c, s in scores.items() if c != code):
            return outcome("blocked", "id_typo")
        return outcome("matched", "id", code)
    exact = [c for c in names if query in names[c]]
    if len(exact) == 1:
        return outcome("matched", "exact", exact[0])
    contained = [
        c for c in names if any((len(n) >= 2 and n in query) or (len(query) >= 2 and query in n) for n in names[c])
    ]
    if len(contained) == 1:
        return outcome("matched", "containment", contained[0])
    return outcome("unresolved", "ambiguous" if contained else "no_match")


def test_index_agrees_with_the_naive_rules_on_random_inputs():
    """The best-first index gives exactly the naive rules' outcome and candidates (scores, order, ties)."""
    rng = random.Random(20261130)
    syllables = "가나다온상사회물산유통한빛aB 1주㈜"
    for _ in range(150):
        rows = [
            (
                str(1000 + i),
                "".join(rng.choice(syllables) for _ in range(rng.randint(1, 6))),
                ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(0, 2))],
            )
            for i in range(rng.randint(0, 25))
        ]
        index = VendorIndex.build(rows)
        for _ in range(15):
            prefix = rng.choice(["", f"({rng.randint(998, 1000 + len(rows))}) ", "（１００２）"])
            room_name = prefix + "".join(rng.choice(syllables + "xㄱ") for _ in range(rng.randint(0, 8)))
            threshold, limit = rng.choice([0.5, 0.8, 0.95]), rng.choice([0, 1, 5, 50])
            got = index.resolve(room_name, typo_threshold=threshold, candidate_limit=limit)
            assert (got.status, got.vendor_code, got.reason, got.candidates) == _reference_resolve(
                rows, room_name, threshold, limit
            ), (rows, room_name)


def test_index_agrees_with_the_naive_rules_on_a_large_index():
    """With thousands of names sharing suffixes (several scoring pools, long candidate lists), still exact."""
    rng = random.Random(7)
    syllables = "가나다라마바사아자차카타파하온빛한대신"
    suffixes = ["상사", "상회", "물산", "유통", "식품"]
    rows = [
        (str(10000 + i), "".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))) + rng.choice(suffixes), [])
        for i in range(3000)
    ]
    index = VendorIndex.build(rows)
    rooms = [
        "상사",
        "가온상사",
        f"({rows[5][0]}) {rows[9][1]}",
        f"({rows[5][0]}) {rows[5][1]} 발주방",
        "하나 유통 정산",
    ]
    for room_name in rooms:
        for limit in (5, 700):
            got = index.resolve(room_name, typo_threshold=THRESHOLD, candidate_limit=limit)
            assert (got.status, got.vendor_code, got.reason, got.candidates) == _reference_resolve(
                rows, room_name, THRESHOLD, limit
            ), room_name
