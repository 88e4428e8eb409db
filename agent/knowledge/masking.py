"""Masking of other vendors' names in evidence (PRODUCT.md 3.6).

Every name and alias of every vendor goes into one Aho-Corasick automaton, so a text is scanned once however
many vendors there are. Matching is case-insensitive for Latin letters and treats full-width forms like
their ASCII counterparts: text and names are folded character by character (NFKC, lower case), which keeps
positions, so a match in the folded text is replaced in the original one.

Which matches are replaced: longest first, then leftmost, never overlapping. A match that belongs to the
counterpart (its name or alias) is kept as written and still blocks shorter matches inside it, so the
counterpart `가온상사유통` is not masked because another vendor is called `가온상사`; a longer name of another
vendor (`대한물산업` around the counterpart's `대한물산`) is masked. Brand names are kept the same way: the brand
`한빛식품` is not another vendor's mention although a vendor's alias is `한빛` (a brand spelled exactly like a
vendor name is still masked — on a tie the mask wins). Names match inside compound words
(`대한물산에서`, `대한물산측`). Names shorter than two characters are ignored: one syllable would mask
ordinary words everywhere.
"""

import dataclasses
import threading
import unicodedata
from collections.abc import Iterable

import ahocorasick

from agent.knowledge.types import EvidenceItem
from vendors.resolution import normalize_name

MASK = "[다른 벤더]"
MIN_NAME_LENGTH = 2
# After folding (NFKC turns `㈜` into `(주)`).
_CORPORATE_MARKS = ("(주)", "(유)", "주식회사", "유한회사")


class _FoldTable(dict):
    """str.translate table computed on first sight of each character: its NFKC lower-case form if that is one
    character, else the character itself (so the folded text keeps the original's positions)."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        folded = unicodedata.normalize("NFKC", char).lower()
        if len(folded) != 1:
            folded = char.lower() if len(char.lower()) == 1 else char
        self[code] = folded
        return folded


_FOLD = _FoldTable()


def fold(text: str) -> str:
    """Same length as `text`: Latin case and full-width forms folded (`ＡＢＣ상사` → `abc상사`)."""
    return text.translate(_FOLD)


def name_variants(name: str) -> set[str]:
    """Folded spellings of a vendor name that count as that name: as written (spaces collapsed), without
    corporate marks such as `(주)` or `주식회사`, and resolution's normal form (no spaces, no marks). Variants
    shorter than MIN_NAME_LENGTH are dropped."""
    base = " ".join(fold(name).split())
    core = base
    for mark in _CORPORATE_MARKS:
        core = core.replace(mark, " ")
    variants = {base, " ".join(core.split()), normalize_name(name)}
    return {v for v in variants if len(v) >= MIN_NAME_LENGTH}


@dataclasses.dataclass(frozen=True)
class Mention:
    start: int
    end: int
    text: str  # as written in the original text
    vendor_ids: frozenset[int]


class VendorMasker:
    """One automaton over all vendors' names (and the brand names to keep). Build it once per names revision and
    share it (read-only)."""

    def __init__(self, names: Iterable[tuple[int, str]], *, kept_terms: Iterable[str] = ()):
        owners: dict[str, set[int]] = {}
        for vendor_id, name in names:
            for variant in name_variants(name):
                owners.setdefault(variant, set()).add(vendor_id)
        for term in kept_terms:
            folded = " ".join(fold(term).split())
            if len(folded) >= MIN_NAME_LENGTH:
                owners.setdefault(folded, set())  # no owner: a span to keep unless it is also a vendor's name
        self.pattern_count = len(owners)
        self._automaton = ahocorasick.Automaton()
        for pattern, vendor_ids in owners.items():
            self._automaton.add_word(pattern, (len(pattern), frozenset(vendor_ids)))
        if owners:
            self._automaton.make_automaton()

    def _spans(self, text: str, counterpart_id: int | None) -> list[tuple[int, int, bool, frozenset[int]]]:
        """Accepted (start, end, is_kept, vendor_ids) spans: longest first, then leftmost; on a tie in length
        another vendor's name wins over a kept one (the counterpart's name, a brand), so a leak is never the
        tie-break."""
        if not self.pattern_count or not text:
            return []
        candidates = []
        for end, (length, vendor_ids) in self._automaton.iter(fold(text)):
            start = end - length + 1
            is_kept = not vendor_ids or counterpart_id in vendor_ids
            candidates.append((start, end + 1, is_kept, vendor_ids))
        if not candidates:
            return []
        candidates.sort(key=lambda c: (c[0] - c[1], c[2], c[0]))
        taken = bytearray(len(text))
        accepted = []
        for span in candidates:
            start, end = span[0], span[1]
            if any(taken[start:end]):
                continue
            taken[start:end] = b"\x01" * (end - start)
            accepted.append(span)
        accepted.sort()
        return accepted

    def mentions(self, text: str, *, counterpart) -> list[Mention]:
        """Other vendors' names in `text` (what `mask` would replace), in order. `counterpart` is the resolved
        Vendor; None treats every vendor as another one."""
        counterpart_id = counterpart.pk if counterpart is not None else None
        return [
            Mention(start, end, text[start:end], vendor_ids)
            for start, end, is_kept, vendor_ids in self._spans(text, counterpart_id)
            if not is_kept
        ]

    def mask(self, text: str, *, counterpart) -> tuple[str, int]:
        """`text` with every other vendor's name replaced by MASK, and how many were replaced."""
        found = self.mentions(text, counterpart=counterpart)
        if not found:
            return text, 0
        parts, cursor = [], 0
        for mention in found:
            parts.append(text[cursor : mention.start])
            parts.append(MASK)
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


# One masker per process, rebuilt when vendor or brand names change (the vendors app's names revision plus the
# brand table's count and latest change).
_masker_lock = threading.Lock()
_masker_cached: tuple[tuple, VendorMasker] | None = None


def _vendor_names() -> list[tuple[int, str]]:
    """(vendor id, name) for every name and alias of every vendor. Inactive vendors are included on purpose
    (unlike resolution's `vendor_names_all`): a former counterpart's name is still another vendor's name."""
    from vendors.models import Vendor

    rows = list(Vendor.objects.values_list("pk", "name", "aliases"))
    return [(pk, name) for pk, name, _ in rows] + [(pk, alias) for pk, _, aliases in rows for alias in aliases]


def _brand_names() -> list[str]:
    from vendors.models import Brand

    return [
        name for brand_name, aliases in Brand.objects.values_list("name", "aliases") for name in [brand_name, *aliases]
    ]


def _names_revision() -> tuple:
    from django.db.models import Count, Max

    from vendors.models import Brand
    from vendors.selectors import vendor_names_revision

    brands = Brand.objects.aggregate(count=Count("pk"), changed=Max("updated_at"))
    return (vendor_names_revision(), brands["count"], brands["changed"])


def vendor_masker() -> VendorMasker:
    """The process's masker for the current vendor and brand names; two cheap revision queries per call."""
    global _masker_cached
    # Read the revision before the names: a change in between makes the next call rebuild, never the reverse.
    revision = _names_revision()
    cached = _masker_cached
    if cached is not None and cached[0] == revision:
        return cached[1]
    with _masker_lock:
        if _masker_cached is not None and _masker_cached[0] == revision:
            return _masker_cached[1]
        masker = VendorMasker(_vendor_names(), kept_terms=_brand_names())
        _masker_cached = (revision, masker)
        return masker


def mask(text: str, *, counterpart, masker: VendorMasker | None = None) -> tuple[str, int]:
    """Mask other vendors' names in `text`; `counterpart` is the resolved Vendor. Pass `masker` to reuse one
    taken for a whole run instead of checking the names revision again."""
    return (masker or vendor_masker()).mask(text, counterpart=counterpart)


def mask_evidence(items: list[EvidenceItem], *, counterpart, masker: VendorMasker | None = None) -> list[EvidenceItem]:
    """Mask other vendors' names in every item; `counterpart` is the resolved Vendor (None masks every vendor)."""
    masker = masker or vendor_masker()
    return [masker.mask_item(item, counterpart=counterpart) for item in items]
