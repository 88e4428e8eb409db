"""The verification engine's fast paths and memos answer exactly as the plain definitions do.

Evidence answers are remembered per passage text, brand words per index, folded passages per text; these
tests check that a remembered answer is never stale and that every shortcut equals the slow definition.
"""

import re
from itertools import accumulate, pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from agent.verification import (
    NameIndex,
    Violation,
    cached_name_index,
    claims,
    numbers,
    parse_quantities,
    split_sentences,
    verify_draft,
)
from agent.verification.brands import EvidenceText, find_misspellings, name_patterns
from agent.verification.edits import Alphabet
from agent.verification.engine import _sentences_holding
from agent.verification.korean import fold, strip_particle_variants
from agent.verification.numbers import quantity_values_among
from agent.verification.other_vendors import (
    _ABOUT_VENDOR_RE,
    MIN_NEAR_MISS_LENGTH,
    PRODUCT_MASK,
    VENDOR_MASK,
    _may_hold_masked_clauses,
    _NearMisses,
    _words,
)
from agent.verification.sentences import _single_spaced
from vendors.name_folding import FoldedText


def _pairs(quantities) -> set:
    return {(quantity.kind, quantity.value) for quantity in quantities}


# --- evidence numbers: the targeted search and what each passage remembers ----------------------------

_PASSAGE_FRAGMENTS = st.sampled_from(
    [
        "3만원",
        "30,000원",
        "35,000원",
        "3만5천원",
        "12만 3,400원",
        "20만 1,000원",
        "0.5%",
        "15%",
        "3%p",
        "3~5만원",
        "10~15%",
        "2~3천만원",
        "1-3만원",
        "5 ~ 7천원",
        "1,000~2,000원",
        "₩3~5",
        "1.5천 2백원",
        "0.31억2천만원",
        "3만 1.5천 2백원",
        "2026-11-30",
        "02-1234-5678",
        "3만 개",
        "오만원",
        "삼만 오천 원",
        "약 3만원",
        "₩12,500",
        "KRW 3,000",
        "0원",
        "1억 5만원",
        "1,000원",
        "3 만원",
        "12 만 3,400원",
        "1 억 2 천만 원",
        "5 천 원",
        "3 만 개",
        " 만",
        "3",
        "0",
        " ",
        "원",
        "만",
        "~",
        "-",
        ",",
        "단가",
        "\n",
    ]
)
_PROBES = (
    "3만원 35,000원 0.5% 15% 3%p 30,000원 50,000원 12345원 5% 123400원 1억 0원 1,000원 12,500원 10% "
    "2천만원 3천만원 1만원 5천원 7,000원 2,000원 3원 1원 2원 5원 1,700원 51,000,000원 3,400원"
)


@settings(max_examples=300)
@given(
    passages=st.lists(st.lists(_PASSAGE_FRAGMENTS, min_size=1, max_size=8).map("".join), min_size=1, max_size=4),
    picks=st.lists(st.integers(0, 30), max_size=4),
)
def test_property_remembered_search_over_passages_equals_a_full_parse(passages, picks):
    """Several passages searched for some values, then for more (answers partly remembered), then for the
    first ones again (all remembered): every answer is what a full parse of every passage gives."""
    numbers._passage_numbers.cache_clear()
    full = {pair for passage in passages for pair in _pairs(parse_quantities(passage))}
    probes = parse_quantities(_PROBES)
    own = [quantity for passage in passages for quantity in parse_quantities(passage)]
    more = probes + [quantity for index, quantity in enumerate(own) if index in picks]
    for wanted in (probes[: len(probes) // 2], more, probes[: len(probes) // 2], more):
        assert quantity_values_among(passages, wanted) == _pairs(wanted) & full
    for passage in passages:  # what was learnt together is attributed to the right passage
        assert quantity_values_among([passage], more) == _pairs(more) & _pairs(parse_quantities(passage))


def test_a_decimal_term_followed_by_more_terms_is_found():
    """ "1.5천 2백원" is 1,700: its digits are not its value's, so the digit search alone would miss it."""
    for passage, value in (("단가 1.5천 2백원", 1700), ("총액 0.31억2천만원", 51000000), ("3만 1.5천 2백원", 1700)):
        wanted = parse_quantities(f"{value:,}원")
        assert quantity_values_among([passage], wanted) == {("amount", value)}, passage


def test_a_changed_passage_is_searched_afresh():
    wanted = parse_quantities("30,000원 35,000원")
    assert quantity_values_among(["변경 전 단가는 30,000원입니다."], wanted) == {("amount", 30000)}
    assert quantity_values_among(["변경 전 단가는 35,000원입니다."], wanted) == {("amount", 35000)}
    assert quantity_values_among(["변경 전 단가는 30,000원입니다."], wanted) == {("amount", 30000)}


def test_evidence_seen_before_is_not_searched_again(monkeypatch):
    """A rewrite round asks about the same evidence: the answers come from the passages' memory."""
    passages = ["재검증 배송비는 3,000원이고 할인율은 15%입니다.", "재검증 무료 배송 기준은 5만원입니다."]
    wanted = parse_quantities("3,000원 15% 7,000원 5만원")
    first = quantity_values_among(passages, wanted)
    searched = []
    monkeypatch.setattr(numbers, "_search_passages", lambda *arguments: searched.append(arguments) or set())
    assert quantity_values_among(list(passages), wanted) == first
    assert first == {("amount", 3000), ("percent", 15), ("amount", 50000)}
    assert searched == []


def test_only_unsettled_values_are_searched_and_only_where_unsettled(monkeypatch):
    settled = "부분 검색 배송비는 3,000원입니다."
    fresh = "부분 검색 무료 배송 기준은 5만원입니다."
    assert quantity_values_among([settled], parse_quantities("3,000원 5만원")) == {("amount", 3000)}
    searches = []
    search = numbers._search_passages
    monkeypatch.setattr(
        numbers,
        "_search_passages",
        lambda passages, pairs: searches.append(([p.text for p in passages], pairs)) or search(passages, pairs),
    )
    found = quantity_values_among([settled, fresh], parse_quantities("3,000원 5만원"))
    assert found == {("amount", 3000), ("amount", 50000)}
    assert searches == [([fresh], {("amount", 50000)})]


def test_a_passage_keeps_a_bounded_number_of_answers(monkeypatch):
    monkeypatch.setattr(numbers, "_ANSWERS_PER_PASSAGE", 4)
    passage = "상한 검사: 1,000원, 3,000원, 5,000원, 7,000원, 9,000원"
    for thousands in range(1, 11):
        stated = thousands % 2 == 1
        wanted = parse_quantities(f"{thousands},000원")
        assert quantity_values_among([passage], wanted) == (_pairs(wanted) if stated else set())
        assert len(numbers._passage_numbers(passage)) <= 4


def test_hangul_amounts_are_found_in_any_passage_of_a_joint_search():
    passages = ["한글 금액 첫 구절", "한글 금액 둘째 구절은 오만원", "셋째 구절은 삼만 오천 원이고 3,000원"]
    wanted = parse_quantities("5만원 35,000원 3,000원 만원")
    assert quantity_values_among(passages, wanted) == {("amount", 50000), ("amount", 35000), ("amount", 3000)}
    assert numbers._passage_numbers(passages[1]).hangul_amounts == {("amount", 50000)}


@settings(max_examples=500)
@given(text=st.text(alphabet="일이삼사오육칠팔구십백천만억조 원래가대약05\n", max_size=16))
def test_property_hangul_numerals_found_from_each_won_equal_a_full_regex_pass(text):
    found = [match.span() for match in numbers._hangul_matches_near_won(text)]
    assert found == [match.span() for match in numbers._HANGUL_NUMERAL_RE.finditer(text)]


# --- folding and the evidence text ----------------------------------------------------------------------

_FULL_WIDTH_TO_HALF = {code: chr(code - 0xFEE0).lower() for code in range(0xFF01, 0xFF5F)}


@settings(max_examples=500)
@given(
    text=st.text(
        alphabet=st.one_of(
            st.sampled_from("AZaz09가힣 ＡＺａｚ０！～\uff00\uff5f\uf000\ufffd😀ÉİßΣ"),
            st.characters(),
        ),
        max_size=30,
    )
)
def test_property_fold_lowers_latin_and_narrows_full_width_only(text):
    expected = "".join(
        char.lower() if "A" <= char <= "Z" else _FULL_WIDTH_TO_HALF.get(ord(char), char) for char in text
    )
    assert fold(text) == expected


@pytest.mark.parametrize(
    ("passages", "pattern", "contained"),
    [
        (["Kaiba 행사"], "kaiba", True),
        (["KAIBA 행사"], "kaiba", True),
        (["kAiBa 행사"], "kaiba", True),
        (["ＫＡＩＢＡ 행사"], "kaiba", True),
        (["Dr.Jart+ 입고"], "dr.jart+", True),
        (["LG전자 입고"], "lg전자", True),
        (["첫 구절", "갤럭시 S24 입고"], "갤럭시 s24", True),
        (["Kaibo 행사"], "kaiba", False),
        (["카이바 행사"], "kaiba", False),
        (["Kai", "ba"], "kaiba", False),
    ],
)
def test_evidence_contains_a_folded_pattern_in_any_case_or_width(passages, pattern, contained):
    assert EvidenceText(passages).contains(pattern) is contained


def test_a_changed_passage_is_folded_afresh():
    assert EvidenceText(["접힘 검사 Kaiba"]).contains("kaiba")
    assert not EvidenceText(["접힘 검사 Kaibo"]).contains("kaiba")
    assert EvidenceText(["접힘 검사 Kaibo"]).has_word("kaibo")
    assert not EvidenceText(["접힘 검사 Kaibo"]).has_word("kaiba")


def test_the_same_evidence_list_shares_one_evidence_text_and_its_answers():
    passages = ["공유 검사: Kaiba 행사", "오뚜기 입고"]
    evidence = EvidenceText.of(passages)
    assert EvidenceText.of(tuple(passages)) is evidence
    assert evidence.contains("kaiba") and evidence.has_word("오뚜기") and not evidence.contains("kaibo")
    assert EvidenceText.of([*passages, "새 구절"]) is not evidence
    assert not EvidenceText.of(["공유 검사: Kaibo 행사", "오뚜기 입고"]).contains("kaiba")


# --- brands and vendors -----------------------------------------------------------------------------------


def test_full_width_punctuation_ends_a_word():
    """ "Samsung！" is the brand and an exclamation mark, not a misspelling of the brand."""
    known = NameIndex.build(["Samsung", "삼성전자"])
    evidence = EvidenceText(["Samsung, 삼성전자 입고"])
    assert find_misspellings("Samsung！ 삼성전자．", known_brands=known, evidence=evidence, min_length=3) == []
    found = find_misspellings("삼송전자！ 좋아요", known_brands=known, evidence=evidence, min_length=3)
    assert [(misspelling.word, misspelling.brand) for misspelling in found] == [("삼송전자", "삼성전자")]


def test_words_remembered_without_candidates_do_not_hide_a_misspelling_later():
    known = NameIndex.build(["오뚜기", "삼성전자"])
    evidence = EvidenceText(["오뚜기와 삼성전자 입고"])
    for _ in range(2):  # the second time every word is remembered
        found = find_misspellings("오뚜가 라면과 좋은 제품", known_brands=known, evidence=evidence, min_length=3)
        assert [(misspelling.word, misspelling.brand) for misspelling in found] == [("오뚜가", "오뚜기")]
    assert find_misspellings("오뚜가 라면", known_brands=known, evidence=EvidenceText(["삼성전자"]), min_length=3) == []


def _words_near(names: list[str]):
    """Random words, and words one or two edits from a name (a character substituted, inserted or deleted)."""
    edit = st.tuples(st.sampled_from(names), st.integers(0, 5), st.sampled_from("가나마상ab1"), st.sampled_from("sid"))

    def edited(picked) -> str:
        name, position, char, kind = picked
        position = min(position, len(name))
        if kind == "s":
            return name[:position] + char + name[position + 1 :]
        if kind == "i":
            return name[:position] + char + name[position:]
        return name[:position] + name[position + 1 :]

    one_edit = edit.map(edited)
    two_edits = st.tuples(one_edit, st.integers(0, 5), st.sampled_from("마b2")).map(
        lambda picked: picked[0][: picked[1]] + picked[2] + picked[0][picked[1] :]
    )
    return st.one_of(st.text(alphabet="가나다라마상사ab12", max_size=6), one_edit, two_edits)


@given(
    st.lists(st.text(alphabet="가나다라상사ab1", min_size=1, max_size=5), min_size=1, max_size=8).flatmap(
        lambda names: st.tuples(st.just(names), _words_near(names))
    )
)
def test_property_one_edit_look_up_equals_a_distance_to_every_name(names_and_word):
    """The alphabet bound never drops a name one edit from the word: the index answers as a loop over the names."""
    names, word = names_and_word
    index = NameIndex.build(names)
    patterns = {pattern for name in index.names for pattern in name_patterns(name)}
    assert index.patterns_one_edit_from(word) == sorted(p for p in patterns if Levenshtein.distance(word, p) == 1)
    if Alphabet(patterns).is_beyond_one_edit(word):
        assert all(Levenshtein.distance(word, pattern) > 1 for pattern in patterns)


@given(
    st.lists(st.text(alphabet="가나다라상사", min_size=2, max_size=5), min_size=1, max_size=8).flatmap(
        lambda names: st.tuples(st.just(names), _words_near(names))
    )
)
def test_property_vendor_near_miss_look_up_equals_a_distance_to_every_name(names_and_word):
    """A word is one edit from a vendor name (three characters or more) exactly when some such name is."""
    names, word = names_and_word
    near_misses = _NearMisses(frozenset(names), frozenset())
    long_names = [name for name in names if len(name) >= MIN_NEAR_MISS_LENGTH]
    expected = any(Levenshtein.distance(word, name) == 1 for name in long_names)
    assert near_misses._one_edit_from_a_name(word) == expected


def _suspects_by_definition(word: str, names: list[str], brands: frozenset[str]) -> tuple[str, ...]:
    """The word's forms with and without each particle, three characters or more, neither a name nor a brand, at
    distance 1 from a name of three characters or more."""
    return tuple(
        variant
        for variant in strip_particle_variants(word)
        if len(variant) >= MIN_NEAR_MISS_LENGTH
        and variant not in names
        and variant not in brands
        and any(Levenshtein.distance(variant, name) == 1 for name in names if len(name) >= MIN_NEAR_MISS_LENGTH)
    )


@given(
    st.lists(st.text(alphabet="가나다라상사", min_size=2, max_size=5), min_size=1, max_size=8).flatmap(
        lambda names: st.tuples(
            st.just(names),
            st.lists(_words_near(names).map(lambda word: word + "는" if len(word) % 2 else word), max_size=8),
            st.lists(st.one_of(_words_near(names), _words_near(names).map(lambda word: word * 2 + "에서")), max_size=8),
        )
    )
)
def test_property_words_with_suspects_are_those_one_edit_from_a_name_whatever_was_looked_up_before(picked):
    """Quiet words remembered by one draft never hide a suspect of the next one, and long words are cut off only
    when no form of them can be one edit from a name."""
    names, first, second = picked
    brands = frozenset(names[:1])
    near_misses = _NearMisses(frozenset(names), brands)
    for words in (first, second, first + second, second):
        expected = [
            (index, found)
            for index, word in enumerate(words)
            if (found := _suspects_by_definition(word, names, brands))
        ]
        assert near_misses.with_suspects(words) == expected


def _plain_words(folded: FoldedText) -> list[tuple[int, int]]:
    """Words by definition: the folded text cut at every gap and at every change of letter class (Hangul; ASCII
    letters and digits; anything else is no letter), then every two touching words of one class joined."""
    text = folded.folded

    def letter_class(char: str) -> int:
        return 1 if "가" <= char <= "힣" else 2 if char.isascii() and char.isalnum() else 0

    words, start = [], None
    for index in range(len(text) + 1):
        ends_here = (
            index == len(text)
            or index in folded.gaps
            or (start is not None and letter_class(text[index]) != letter_class(text[start]))
        )
        if start is not None and ends_here:
            words.append((start, index))
            start = None
        if index < len(text) and start is None and letter_class(text[index]):
            start = index
    pairs = [
        (left[0], right[1])
        for left, right in pairwise(words)
        if left[1] == right[0] and letter_class(text[left[0]]) == letter_class(text[right[0]])
    ]
    return words + pairs


@given(st.text(alphabet="가나 ab-1,ㄱㅏ\u200b", max_size=30))
def test_property_other_vendor_words_are_the_words_by_definition(text):
    folded = FoldedText(text)
    assert _words(folded) == _plain_words(folded)


_PLAIN_AND_SEPARATORS = [*"가나 ab-Z1,.", "\t", "\n", "\u00a0", "\u3000", "\u2010", "\uff0d"]


@given(st.text(alphabet=st.sampled_from(_PLAIN_AND_SEPARATORS), max_size=30))
def test_property_plain_folding_maps_each_run_as_the_run_by_run_map(text):
    """A plain text with one separator between its runs skips the regex pass over it: its map must be the one built
    run by run — each run one segment from its original start, a gap where each later run starts (and at the end
    after a trailing separator)."""
    runs = [match.span() for match in re.finditer(r"[^\s\-\u2010-\u2015\u2212\ufe58\ufe63\uff0d]+", text)]
    starts = list(accumulate((end - start for start, end in runs), initial=0))
    gaps = set(starts[1:-1])
    if runs and runs[-1][1] < len(text):
        gaps.add(starts[-1])
    folded = FoldedText(text)
    assert folded.folded == "".join(text[start:end] for start, end in runs).lower()
    assert folded.gaps == gaps
    assert [folded.span(start, start + 1)[0] for start in starts[:-1]] == [start for start, _ in runs]


@given(
    st.lists(
        st.sampled_from([VENDOR_MASK, PRODUCT_MASK, "는", "측", "의", "사례", " ", "\n", "[다른", "벤더]", "가나"]),
        max_size=12,
    ).map("".join)
)
def test_property_masked_clause_screen_equals_one_regex_search(text):
    """The mask found by ``str.find`` and the pattern matched there answer as the pattern searched for."""
    expected = PRODUCT_MASK in text or _ABOUT_VENDOR_RE.search(text) is not None
    assert _may_hold_masked_clauses((text,)) == expected


def test_cached_name_index_hits_for_a_fresh_tuple_of_equal_names():
    """The pipeline builds a new tuple from the database for every question: equal names, new objects."""
    names = tuple(f"캐시브랜드{number}" for number in range(300))
    index = cached_name_index(names)
    fresh = tuple("".join(list(name)) for name in names)
    assert fresh == names and fresh is not names and fresh[0] is not names[0]
    assert cached_name_index(fresh) is index
    assert cached_name_index(list(fresh)) is index


# --- claims, sentences, clean text --------------------------------------------------------------------------


def _plain_kind_pattern(kind: claims.ActionKind) -> re.Pattern:
    """The claim pattern written as one plain alternation: noun, then one of its three endings."""
    nouns = "|".join(sorted(claims._ACTION_NOUNS[kind].split(), key=len, reverse=True))
    noun = rf"(?<!미)(?:{nouns})"
    branches = [
        rf"{noun}{claims._PARTICLE} ?(?:처리 ?)?{claims._NOUN_PAST}{claims._STATEMENT_ENDING}",
        rf"{noun}{claims._PARTICLE} ?{claims._COMPLETE}",
        rf"{noun} ?(?:해 ?)?드린{claims._ADNOMINAL_END}",
    ]
    if kind in claims._NATIVE_PAST:  # receipts have no native verb
        branches.append(rf"(?:{claims._NATIVE_PAST[kind]}){claims._STATEMENT_ENDING}")
    if kind in claims._NATIVE_ADNOMINAL:
        branches.append(rf"(?:{claims._NATIVE_ADNOMINAL[kind]}){claims._ADNOMINAL_END}")
    return re.compile("|".join(branches), re.MULTILINE)


def test_claim_nouns_begin_neither_each_other_nor_a_native_verb():
    """What lets each noun carry its own endings in the literal-led claim pattern."""
    for kind in claims.ActionKind:
        nouns = claims._ACTION_NOUNS[kind].split()
        assert [(noun, other) for noun in nouns for other in nouns if noun != other and noun.startswith(other)] == []
        stems = f"{claims._NATIVE_PAST.get(kind, '')}|{claims._NATIVE_ADNOMINAL.get(kind, '')}".split("|")
        assert {noun[0] for noun in nouns}.isdisjoint(stem[0] for stem in stems if stem)


_CLAIM_FRAGMENTS = st.sampled_from(
    [
        "발송",
        "미발송",
        "처리",
        "접수",
        "완료",
        "변경",
        "업데이트",
        "보내",
        "보냈",
        "바꿨",
        "드렸",
        "드린",
        "했",
        "되었",
        "됐",
        "습니다",
        "어요",
        "다",
        "면",
        " ",
        "을",
        "이",
        "해 ",
        "후",
        ".",
        "\n",
        "예정",
        "입니다",
    ]
)


@settings(max_examples=500)
@given(text=st.lists(_CLAIM_FRAGMENTS, max_size=10).map("".join))
def test_property_literal_led_claim_patterns_match_as_the_plain_alternation(text):
    for kind, pattern in claims._PATTERNS.items():
        plain = _plain_kind_pattern(kind)
        assert [match.span() for match in pattern.finditer(text)] == [match.span() for match in plain.finditer(text)]


@settings(max_examples=300)
@given(text=st.text(alphabet="다요가 .!?~\n1A)”…。", max_size=30))
def test_property_sentences_cover_the_text_in_order_without_surrounding_space(text):
    sentences = split_sentences(text)
    assert all(sentence.text == text[sentence.start : sentence.end] == sentence.text.strip() for sentence in sentences)
    assert all(left.end <= right.start for left, right in pairwise(sentences))
    covered = "".join(text[sentence.start : sentence.end] for sentence in sentences)
    assert re.sub(r"\s", "", covered) == re.sub(r"\s", "", text)


@given(text=st.text(alphabet=st.sampled_from(["가", "a", " ", "\t", "\u00a0", "\u3000", "\n"]), max_size=20))
def test_property_a_kept_sentence_is_single_spaced_as_the_substitution_spaces_it(text):
    """The clean text skips the space substitution for a sentence it would not change."""
    assert _single_spaced(text) == re.sub(r"[ \t\u00a0\u3000]+", " ", text)


@settings(max_examples=300)
@given(
    text=st.text(alphabet="다요가 .!?\n", min_size=1, max_size=30),
    spans=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 6)), max_size=5),
)
def test_property_sentences_holding_a_violation_are_those_it_overlaps(text, spans):
    sentences = split_sentences(text)
    violations = [
        Violation("amount", 1, text[start : start + length], (start, start + length), "") for start, length in spans
    ]
    expected = {
        index
        for index, sentence in enumerate(sentences)
        for violation in violations
        if violation.span[0] < sentence.end and sentence.start < violation.span[1]
    }
    assert _sentences_holding(violations, sentences) == expected


def test_verifying_again_over_remembered_evidence_gives_the_same_result():
    evidence = ["반복 검증: Kaiba 행사 단가는 9,700원이며 할인율은 5%입니다.", "배송비는 3,000원입니다."]
    draft = "Kaiba 행사 단가는 9,700원입니다. 배송비는 3,500원이고 할인율은 7%입니다. 자료는 보내드렸습니다."
    arguments = {
        "evidence": evidence,
        "known_brands": ["Kaiba", "Kaibo"],
        "counterpart_names": ["한빛상사"],
        "other_vendor_names": [],
        "confirmed_actions": [],
    }
    first = verify_draft(draft, **arguments)
    again = verify_draft(draft, **arguments)
    assert first == again
    assert [(violation.kind, violation.value) for violation in first.violations] == [
        ("amount", 3500),
        ("percent", 7),
        ("action_claim", None),
    ]
    assert first.clean_text == "Kaiba 행사 단가는 9,700원입니다."
