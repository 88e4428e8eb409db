"""Masking of other vendors' names and brands in evidence and prompts (PRODUCT.md 3.6).

Every name and alias of every vendor, and every brand, goes into one automaton (`NameSpotter`, shared with the
final-text check), so a text is scanned once however many vendors there are. Names are matched in folded text
(`vendors.name_folding`): case, width, invisible characters, jamo and spaces or hyphens inside a name do not hide
it (`가온 상사`, `가온\u200b상사`, `ㄱㅏ온상사`, `GAON  SANGSA`, `gaon-sangsa`), and the original characters of the
whole match are replaced.

Which matches are replaced: longest first, then leftmost, never overlapping. A match that belongs to the
counterpart (its name or alias) is kept as written and still blocks shorter matches inside it, so the
counterpart `가온상사유통` is not masked because another vendor is called `가온상사`; a longer name of another
vendor (`대한물산업` around the counterpart's `대한물산`) is masked. Names match inside compound words
(`대한물산에서`, `대한물산측`). Names shorter than two characters are ignored: one syllable would mask
ordinary words everywhere.

Brands: a brand that none of the counterpart's products carry but another vendor's do is that vendor's data and
becomes `[다른 벤더 상품]`; a brand the counterpart carries, or nobody does, is kept — and, kept, blocks shorter
vendor names inside it (the brand `한빛식품` is not the vendor alias `한빛`). A brand spelled exactly like a vendor
name is masked as the vendor (on a tie the mask wins). Brand masking is for vendor rooms; a staff room's masker
(`brand_masking=False`) leaves brands alone. In the counterpart's own messages (`own_brand_short_names`) a vendor
name that starts a brand the counterpart carries (`한빛` of `한빛식품`) is that brand said short and stays: the
counterpart wrote it about its own goods, and its records are all the answer can come from.
"""

import copy
import dataclasses
import threading
from collections.abc import Iterable

from agent.knowledge.types import EvidenceItem
from agent.verification.other_vendors import PRODUCT_MASK, VENDOR_MASK, NameSpotter, select_spots
from vendors.name_folding import FoldedText, fold_name

MASK = VENDOR_MASK
BRAND_MASK = PRODUCT_MASK
_BRAND = "brand"  # owner tag: ("brand", carrying vendor id or None)
_VENDOR = "vendor"  # owner tag: ("vendor", vendor id)


@dataclasses.dataclass(frozen=True)
class Mention:
    start: int
    end: int
    text: str  # as written in the original text
    vendor_ids: frozenset[int]  # the vendor named, or the vendors carrying the brand
    mask: str = MASK


class VendorMasker:
    """One automaton over all vendors' names and all brands, `brands` as (name, ids of the vendors carrying it).
    Build it once per names revision and share it (read-only); `without_brand_masking()` is a copy for staff
    rooms."""

    def __init__(
        self,
        names: Iterable[tuple[int, str]],
        *,
        brands: Iterable[tuple[str, Iterable[int]]] = (),
    ):
        entries = [(name, (_VENDOR, vendor_id)) for vendor_id, name in names]
        self._brands_carried: dict[int, set[str]] = {}  # folded brand names by the vendor carrying them
        for brand, carriers in brands:
            entries.append((brand, (_BRAND, None)))
            entries += [(brand, (_BRAND, vendor_id)) for vendor_id in carriers]
            for vendor_id in carriers:
                self._brands_carried.setdefault(vendor_id, set()).add(fold_name(brand))
        self._spotter = NameSpotter(entries)
        self.pattern_count = self._spotter.pattern_count
        self.brand_masking = True

    def without_brand_masking(self) -> "VendorMasker":
        """The same masker (the automaton is shared) that keeps every brand: for staff rooms."""
        clone = copy.copy(self)
        clone.brand_masking = False
        return clone

    def mentions(self, text: str, *, counterpart, own_brand_short_names: bool = False) -> list[Mention]:
        """Other vendors' names and brands in `text` (what `mask` would replace), in order. `counterpart` is the
        resolved Vendor; None treats every vendor as another one. `own_brand_short_names`: for the counterpart's
        own words, a vendor's name that is the start of a brand the counterpart carries (`한빛` of `한빛식품`) is
        that brand said short and stays."""
        if not self.pattern_count or not text:
            return []
        counterpart_id = counterpart.pk if counterpart is not None else None
        own_brands = self._brands_carried.get(counterpart_id, set()) if own_brand_short_names else set()

        def mask_of(spot) -> str | None:
            if own_brands and self._shortens_a_brand(text[spot.start : spot.end], own_brands):
                return None
            return self._mask_of(spot, counterpart_id)

        found = []
        for spot, kept in select_spots(self._spotter.spots(FoldedText(text)), lambda spot: mask_of(spot) is None):
            if kept:
                continue
            mask = mask_of(spot)
            kind = _VENDOR if mask == MASK else _BRAND
            owners = frozenset(vendor_id for tag, vendor_id in spot.owners if tag == kind and vendor_id is not None)
            found.append(Mention(spot.start, spot.end, text[spot.start : spot.end], owners, mask))
        return found

    @staticmethod
    def _shortens_a_brand(written: str, brands: set[str]) -> bool:
        folded = fold_name(written)
        return any(brand.startswith(folded) and brand != folded for brand in brands)

    def _mask_of(self, spot, counterpart_id) -> str | None:
        """The mask for a spot, or None when it stays (the counterpart's own name, a brand it carries)."""
        vendors = {vendor_id for kind, vendor_id in spot.owners if kind == _VENDOR}
        if vendors:
            return None if counterpart_id in vendors else MASK
        carriers = {vendor_id for kind, vendor_id in spot.owners if kind == _BRAND and vendor_id is not None}
        if self.brand_masking and carriers and counterpart_id not in carriers:
            return BRAND_MASK
        return None

    def mask(self, text: str, *, counterpart, own_brand_short_names: bool = False) -> tuple[str, int]:
        """`text` with every other vendor's name replaced by MASK, every other vendor's brand by BRAND_MASK, and
        how many were replaced (`own_brand_short_names`: see `mentions`)."""
        found = self.mentions(text, counterpart=counterpart, own_brand_short_names=own_brand_short_names)
        if not found:
            return text, 0
        parts, cursor = [], 0
        for mention in found:
            parts.append(text[cursor : mention.start])
            parts.append(mention.mask)
            cursor = mention.end
        parts.append(text[cursor:])
        return "".join(parts), len(found)

    def _mask_value(self, value, counterpart) -> tuple[object, int]:
        if isinstance(value, str):
            return self.mask(value, counterpart=counterpart)
        if isinstance(value, dict):
            masked, total = {}, 0
            for key, inner in value.items():
                masked[key], count = self._mask_value(inner, counterpart)
                total += count
            return masked, total
        if isinstance(value, list | tuple):
            results = [self._mask_value(inner, counterpart) for inner in value]
            return [masked for masked, _ in results], sum(count for _, count in results)
        return value, 0

    def mask_item(self, item: EvidenceItem, *, counterpart) -> EvidenceItem:
        """The item with title, text and the strings inside `extra` masked; mask_count adds what was replaced."""
        text, in_text = self.mask(item.text, counterpart=counterpart)
        title, in_title = self.mask(item.title, counterpart=counterpart)
        extra, in_extra = self._mask_value(item.extra, counterpart)
        replaced = in_text + in_title + in_extra
        if not replaced:
            return item
        return dataclasses.replace(item, text=text, title=title, extra=extra, mask_count=item.mask_count + replaced)


# One masker per process, rebuilt when vendor or brand names, or who carries a brand, change (the vendors app's
# names revision plus the brand and product tables' revisions).
_masker_lock = threading.Lock()
_masker_cached: tuple[tuple, VendorMasker] | None = None


def _vendor_names() -> list[tuple[int, str]]:
    """(vendor id, name) for every name and alias of every vendor. Inactive vendors are included on purpose
    (unlike resolution's `vendor_names_all`): a former counterpart's name is still another vendor's name."""
    # Imported here, as below: the masker itself needs no database (bench/bench_masking.py builds one without Django).
    from vendors.selectors import vendor_name_rows

    rows = vendor_name_rows()
    return [(pk, name) for pk, name, _ in rows] + [(pk, alias) for pk, _, aliases in rows for alias in aliases]


def _brands() -> list[tuple[str, set[int]]]:
    """(brand name or alias, ids of the vendors whose current products carry the brand) for every brand."""
    from vendors.selectors import brand_carriers, brand_name_rows

    carriers = brand_carriers()
    return [
        (name, carriers.get(pk, set()))
        for pk, brand_name, aliases in brand_name_rows()
        for name in [brand_name, *aliases]
    ]


def _names_revision() -> tuple:
    from vendors.selectors import brand_table_revision, product_table_revision, vendor_names_revision

    # Which vendor carries which brand: products are added, re-branded, retired (each save moves updated_at).
    return (vendor_names_revision(), brand_table_revision(), product_table_revision())


def vendor_masker() -> VendorMasker:
    """The process's masker for the current vendor names, brands and who carries them; three cheap revision
    queries per call."""
    global _masker_cached
    # Read the revision before the names: a change in between makes the next call rebuild, never the reverse.
    revision = _names_revision()
    cached = _masker_cached
    if cached is not None and cached[0] == revision:
        return cached[1]
    with _masker_lock:
        if _masker_cached is not None and _masker_cached[0] == revision:
            return _masker_cached[1]
        masker = VendorMasker(_vendor_names(), brands=_brands())
        _masker_cached = (revision, masker)
        return masker


def mask(
    text: str, *, counterpart, masker: VendorMasker | None = None, own_brand_short_names: bool = False
) -> tuple[str, int]:
    """Mask other vendors' names and brands in `text`; `counterpart` is the resolved Vendor. Pass `masker` to
    reuse one taken for a whole run instead of checking the names revision again. `own_brand_short_names` is for
    the counterpart's own messages: a brand it carries said short (`한빛 깍두기` for 한빛식품) is not another vendor."""
    return (masker or vendor_masker()).mask(text, counterpart=counterpart, own_brand_short_names=own_brand_short_names)


def mask_evidence(items: list[EvidenceItem], *, counterpart, masker: VendorMasker | None = None) -> list[EvidenceItem]:
    """Mask other vendors' names and brands in every item; `counterpart` is the resolved Vendor (None masks every
    vendor)."""
    masker = masker or vendor_masker()
    return [masker.mask_item(item, counterpart=counterpart) for item in items]
