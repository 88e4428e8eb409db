"""Masking other vendors' names: longest match, compound words, counts, the counterpart's own name, 10k names."""

import random
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.knowledge.masking import BRAND_MASK, MASK, VendorMasker, mask, mask_evidence, vendor_masker
from agent.knowledge.types import EvidenceItem
from agent.verification.other_vendors import name_forms
from vendors.name_folding import FoldedText, folded_text
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory

GAON = SimpleNamespace(pk=1)  # 가온상사
GAON_DISTRIBUTION = SimpleNamespace(pk=2)  # 가온상사유통
DAEHAN = SimpleNamespace(pk=3)  # 대한물산
NAMES = [
    (1, "가온상사"),
    (2, "가온상사유통"),
    (3, "대한물산"),
    (3, "대한"),  # alias
    (4, "대한물산업"),
    (5, "(주)ABC 트레이딩"),
    (6, "한"),  # one character: ignored
    (7, "대한가온"),
]


@pytest.fixture(scope="module")
def masker():
    return VendorMasker(NAMES)


def test_folding_maps_every_folded_character_back_to_the_original():
    """Folding lower-cases Latin, maps full-width forms and drops spaces; each folded character knows where it was."""
    text = "ＡＢＣ 트레이딩 Abc"
    folded = FoldedText(text)
    assert folded.folded == "abc트레이딩abc"
    assert folded.span(3, 7) == (4, 8)


@given(
    st.text(
        alphabet=st.sampled_from(
            [*"가온상사 Gaon-SANGSA\t\n\u00a0\u3000\u2010\u2212\uff0d", "ㄱ", "ㅏ", "㈜", "\u200b", "Ａ"]
        ),
        max_size=40,
    )
)
def test_folded_text_alone_is_the_folding_without_its_map(text):
    """Evidence is searched in its folded form only; plain text (Hangul syllables, ASCII, separators) takes a
    shorter path to the same string."""
    assert folded_text(text) == FoldedText(text).folded


def test_name_forms_cover_marks_and_spaces_and_skip_one_character_names():
    """A name counts as written and without `(주)`-style marks, spaces left out; one-character names are dropped."""
    assert name_forms("(주)ABC 트레이딩") == {"(주)abc트레이딩", "abc트레이딩"}
    assert name_forms("한") == set()


@pytest.mark.parametrize(
    "text",
    [
        "가온 상사는 결품률이 높습니다",
        "가온\u200b상사는 결품률이 높습니다",
        "ㄱㅏ온상사는 결품률이 높습니다",
        "가온-상사는 결품률이 높습니다",
        "가 온 상 사는 결품률이 높습니다",
    ],
)
def test_every_spelling_of_a_name_is_masked_with_its_original_characters(text):
    """Spaces, hyphens, zero-width characters and loose jamo inside a name do not hide it; the mask replaces every
    original character of the name."""
    masker = VendorMasker([(1, "가온상사"), (3, "대한물산")])
    assert masker.mask(text, counterpart=DAEHAN) == (f"{MASK}는 결품률이 높습니다", 1)


@pytest.mark.parametrize(
    "text", ["GAON  SANGSA 단가", "gaon-sangsa 단가", "Gaon Sangsa 단가", "ＧＡＯＮ　ＳＡＮＧＳＡ 단가"]
)
def test_a_latin_alias_is_masked_in_any_case_width_and_spacing(text):
    masker = VendorMasker([(1, "가온상사"), (1, "GAON SANGSA")])
    assert masker.mask(text, counterpart=DAEHAN) == (f"{MASK} 단가", 1)


def test_a_name_split_by_a_space_must_start_a_word():
    """`대한 빛깔` is not the vendor `한빛`: a match that needs a space dropped starts a word (and a two-character
    name ends one); written without a space, names still match inside words."""
    masker = VendorMasker([(4, "한빛"), (1, "가온상사")])
    assert masker.mask("대한 빛깔, 한 빛깔", counterpart=DAEHAN) == ("대한 빛깔, 한 빛깔", 0)
    assert masker.mask("한 빛에서 납품", counterpart=DAEHAN) == (f"{MASK}에서 납품", 1)
    assert masker.mask("신가온상사측", counterpart=DAEHAN) == (f"신{MASK}측", 1)


def test_longest_match_wins(masker):
    """`가온상사유통` is one mention, not `가온상사` plus a left-over `유통`."""
    assert masker.mask("가온상사유통에 문의", counterpart=DAEHAN) == (f"{MASK}에 문의", 1)


@pytest.mark.parametrize(
    "text", ["대한물산에서 보냈습니다", "대한물산측 답변", "대한물산의 단가", "(대한물산)", "대한물산님"]
)
def test_names_inside_compound_words_are_masked(masker, text):
    """Names glued to particles and suffixes are found: there are no word boundaries in Korean to wait for."""
    masked, count = masker.mask(text, counterpart=GAON)
    assert count == 1
    assert "대한물산" not in masked and MASK in masked


def test_every_mention_is_counted(masker):
    """The count is the number of replaced mentions, aliases included."""
    masked, count = masker.mask("대한물산과 가온상사, 그리고 다시 대한에게", counterpart=None)
    assert (masked, count) == (f"{MASK}과 {MASK}, 그리고 다시 {MASK}에게", 3)


def test_counterpart_name_is_kept_even_around_another_vendors_shorter_name(masker):
    """The counterpart `가온상사유통` stays as written although `가온상사` is another vendor; `가온상사` alone is
    still masked for it."""
    masked, count = masker.mask("가온상사유통 단가표, 가온상사 단가표", counterpart=GAON_DISTRIBUTION)
    assert (masked, count) == (f"가온상사유통 단가표, {MASK} 단가표", 1)


def test_counterpart_name_wins_over_an_overlapping_shorter_name():
    """`대한가온` overlaps the counterpart's `가온상사유통` in `대한가온상사유통`: the longer counterpart name wins."""
    masker = VendorMasker([(2, "가온상사유통"), (7, "대한가온")])

    assert masker.mask("대한가온상사유통", counterpart=GAON_DISTRIBUTION) == ("대한가온상사유통", 0)
    assert masker.mask("대한가온상사", counterpart=GAON_DISTRIBUTION) == (f"{MASK}상사", 1)


def test_another_vendors_longer_name_around_the_counterparts_is_masked(masker):
    """`대한물산업` is another vendor even though it contains the counterpart's `대한물산`."""
    assert masker.mask("대한물산업체와 대한물산", counterpart=DAEHAN) == (f"{MASK}체와 대한물산", 1)


def test_latin_names_match_in_any_case_and_width(masker):
    """`ABC 트레이딩` is found as `abc 트레이딩`, `ＡＢＣ트레이딩` and `(주)ABC 트레이딩`."""
    masked, count = masker.mask("abc 트레이딩 / ＡＢＣ트레이딩 / (주)ABC 트레이딩", counterpart=DAEHAN)
    assert (masked, count) == (f"{MASK} / {MASK} / {MASK}", 3)


def test_one_character_names_are_ignored(masker):
    """A one-character name would mask ordinary syllables everywhere, so it never matches."""
    assert masker.mask("한 번 더 확인", counterpart=None) == ("한 번 더 확인", 0)


def test_brand_names_are_kept_even_around_a_vendor_alias():
    """The brand `한빛식품` is not a mention of the vendor whose alias is `한빛`; the alias alone still is, and a brand
    spelled exactly like a vendor's name is masked (on a tie the mask wins)."""
    masker = VendorMasker([(4, "한빛유통"), (4, "한빛"), (16, "금강제과")], brands=[("한빛식품", []), ("금강제과", [])])

    masked, count = masker.mask("한빛식품 김치, 한빛에서 납품, 한빛유통측, 금강제과 과자", counterpart=DAEHAN)

    assert (masked, count) == (f"한빛식품 김치, {MASK}에서 납품, {MASK}측, {MASK} 과자", 3)


def test_a_brand_only_other_vendors_carry_is_masked_as_their_product():
    """`고운들` is carried by 가온상사 alone: in 대한물산's room it is another vendor's data. `한빛식품` is carried by
    both and stays; in 가온상사's own room `고운들` stays; a staff room's masker keeps every brand."""
    masker = VendorMasker([(1, "가온상사"), (3, "대한물산")], brands=[("고운들", [1]), ("한빛식품", [1, 3])])
    text = "고운들 절임배추 행사가 9,900원, 한빛식품 참기름 15,000원"

    assert masker.mask(text, counterpart=DAEHAN) == (
        f"{BRAND_MASK} 절임배추 행사가 9,900원, 한빛식품 참기름 15,000원",
        1,
    )
    assert masker.mask(text, counterpart=GAON) == (text, 0)
    assert masker.without_brand_masking().mask(text, counterpart=DAEHAN) == (text, 0)
    assert masker.mask("고 운 들 절임배추", counterpart=DAEHAN) == (f"{BRAND_MASK} 절임배추", 1)


def test_the_counterparts_own_words_may_say_a_brand_it_carries_short():
    """In 대한물산's own question `한빛 깍두기` is its brand 한빛식품 said short, though 한빛 is also 한빛유통's alias:
    read as the counterpart's words it stays; the full vendor name, evidence (the default) and a room whose vendor
    does not carry 한빛식품 still mask it."""
    masker = VendorMasker([(3, "대한물산"), (4, "한빛유통"), (4, "한빛")], brands=[("한빛식품", [3])])
    question = "한빛 깍두기 5kg 단가랑 한빛유통 최소 주문 금액 알려주세요"

    assert masker.mask(question, counterpart=DAEHAN, own_brand_short_names=True) == (
        f"한빛 깍두기 5kg 단가랑 {MASK} 최소 주문 금액 알려주세요",
        1,
    )
    assert masker.mask(question, counterpart=DAEHAN) == (
        f"{MASK} 깍두기 5kg 단가랑 {MASK} 최소 주문 금액 알려주세요",
        2,
    )
    assert masker.mask(question, counterpart=GAON, own_brand_short_names=True)[1] == 2


def test_mask_item_masks_title_text_and_extra_and_counts_all(masker):
    """Title, text and strings inside `extra` are masked; mask_count adds every replacement."""
    item = EvidenceItem(
        source_kind="hub",
        reference="hub:policies:chunk-1",
        text="가온상사와 대한물산의 반품 기준",
        score=0.8,
        workspace="policies",
        title="가온상사 반품",
        extra={"entities": ["가온상사", "반품"], "meta": {"writer": "대한물산 담당"}, "rank": 3},
    )

    masked = masker.mask_item(item, counterpart=DAEHAN)

    assert masked.text == f"{MASK}와 대한물산의 반품 기준"
    assert masked.title == f"{MASK} 반품"
    assert masked.extra == {"entities": [MASK, "반품"], "meta": {"writer": "대한물산 담당"}, "rank": 3}
    assert masked.mask_count == 3
    assert (masked.reference, masked.score, masked.workspace) == (item.reference, item.score, item.workspace)


def test_mask_item_returns_an_untouched_item_as_is(masker):
    """Nothing to mask: the same item comes back with mask_count unchanged."""
    item = EvidenceItem(source_kind="faq", reference="faq:1", text="반품은 7일 이내", score=0.9)
    assert masker.mask_item(item, counterpart=DAEHAN) is item


def test_ten_thousand_names_are_masked_in_one_pass():
    """10,000 vendors (plus aliases) in one automaton: every planted name is found, nothing else is touched."""
    rng = random.Random(7)
    syllables = "가나다라마바사아자차카타파하강남동서북산천해솔빛"
    unique: set[str] = set()
    while len(unique) < 10_000:
        unique.add("".join(rng.choice(syllables) for _ in range(rng.randint(3, 6))) + "상사")
    names = sorted(unique)
    masker = VendorMasker([(i, name) for i, name in enumerate(names)] + [(0, "공통별칭")])
    planted = rng.sample(names, 20)
    text = " 그리고 ".join(f"{name}에서" for name in planted) + " 공통별칭측"

    masked, count = masker.mask(text, counterpart=SimpleNamespace(pk=-1))

    assert count == 21
    assert masker.pattern_count >= 10_000
    assert masked == " 그리고 ".join(f"{MASK}에서" for _ in planted) + f" {MASK}측"


VOCABULARY = [
    "가온상사",
    "가온상사유통",
    "대한물산",
    "대한",
    "대한물산업",
    "ABC 트레이딩",
    "대한가온",
    "단가",
    "의",
    " ",
    "측",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(VOCABULARY), max_size=12))
def test_no_vendor_name_survives_masking_for_an_unknown_counterpart(pieces):
    """Property: with no counterpart, the masked text contains no vendor name (of two or more characters)."""
    masker = VendorMasker(NAMES)
    masked, _ = masker.mask("".join(pieces), counterpart=None)

    folded = FoldedText(masked).folded
    assert not [name for _, name in NAMES for variant in name_forms(name) if variant in folded]


@pytest.mark.django_db
def test_module_mask_uses_the_current_vendors_and_rebuilds_when_they_change():
    """The process masker is cached by the vendors' names revision and rebuilt after a rename."""
    counterpart = VendorFactory(code="1001", name="대한물산")
    other = VendorFactory(code="1002", name="가온상사")
    first = vendor_masker()

    assert vendor_masker() is first
    assert mask("가온상사와 대한물산", counterpart=counterpart) == (f"{MASK}와 대한물산", 1)

    other.name = "누리상사"
    other.aliases = ["누리"]
    other.save()

    assert vendor_masker() is not first
    assert mask("가온상사와 누리상사, 누리", counterpart=counterpart) == (f"가온상사와 {MASK}, {MASK}", 2)


@pytest.mark.django_db
def test_process_masker_keeps_brands_and_rebuilds_when_a_brand_is_added():
    """Brands from the brand table are kept; adding one changes the revision, so the next masker knows it."""
    counterpart = VendorFactory(code="1001", name="대한물산")
    VendorFactory(code="1004", name="한빛유통", aliases=["한빛"])

    assert mask("한빛식품 김치", counterpart=counterpart) == (f"{MASK}식품 김치", 1)

    BrandFactory(name="한빛식품")

    assert mask("한빛식품 김치", counterpart=counterpart) == ("한빛식품 김치", 0)


@pytest.mark.django_db
def test_inactive_vendors_are_still_masked():
    """A deactivated vendor's name is still another vendor's name."""
    counterpart = VendorFactory(code="1001", name="대한물산")
    VendorFactory(code="1003", name="옛날상회", is_active=False)

    [item] = mask_evidence(
        [EvidenceItem(source_kind="faq", reference="faq:9", text="옛날상회 사례", score=0.7)], counterpart=counterpart
    )

    assert (item.text, item.mask_count) == (f"{MASK} 사례", 1)


@pytest.mark.django_db
def test_process_masker_masks_a_brand_only_other_vendors_carry_and_follows_product_changes():
    """Who carries a brand comes from the current products: once the counterpart carries `고운들` too, it stays."""
    from vendors.tests.factories_records import ProductFactory

    counterpart = VendorFactory(code="1001", name="대한물산")
    other = VendorFactory(code="1002", name="가온상사")
    brand = BrandFactory(name="고운들")
    ProductFactory(vendor=other, brand=brand, name="고운들 절임배추 10kg", sku="GA-100", unit_price=32000)

    assert mask("고운들 절임배추 행사가", counterpart=counterpart) == (f"{BRAND_MASK} 절임배추 행사가", 1)
    assert mask("고운들 절임배추 행사가", counterpart=other) == ("고운들 절임배추 행사가", 0)

    ProductFactory(vendor=counterpart, brand=brand, name="고운들 절임배추 5kg", sku="DH-100", unit_price=18000)

    assert mask("고운들 절임배추 행사가", counterpart=counterpart) == ("고운들 절임배추 행사가", 0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["", " ", "-", "\u200b", "  ", " - ", "\u2060"]), min_size=3, max_size=3))
def test_a_name_with_any_spaces_hyphens_or_invisible_characters_between_its_characters_is_masked(separators):
    """Property: `가온상사` with any mix of separators and invisible characters between its syllables is masked,
    all its original characters with it."""
    name = "가" + separators[0] + "온" + separators[1] + "상" + separators[2] + "사"
    masker = VendorMasker([(1, "가온상사"), (3, "대한물산")])
    assert masker.mask(f"보고서: {name}는 결품률이 높습니다", counterpart=DAEHAN) == (
        f"보고서: {MASK}는 결품률이 높습니다",
        1,
    )


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="가온ㄱㅏㄴ상사 -\u200bA㈜ｂ", max_size=20))
def test_folded_positions_map_back_in_order_inside_the_original(text):
    """Property: every folded character maps to a non-empty span of the original, in order."""
    folded = FoldedText(text)
    spans = [folded.span(index, index + 1) for index in range(len(folded.folded))]
    assert all(0 <= start < end <= len(text) for start, end in spans)
    assert spans == sorted(spans)
