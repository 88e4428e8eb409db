"""Counterpart resolution: which vendor a KakaoTalk room name points at (PRODUCT.md 3.1, issue 2 section 4).

Pure: no database, no settings. `vendors.selectors` builds a `VendorIndex` from the active vendors and passes the
configured threshold and candidate limit; `conversations.room_services` stores the outcome on the room.

Rules, exactly:
- Both sides are normalised (`normalize_name`): `가온 상사`, `가온-상사`, `ㄱㅏ온상사` and `가온\u200b상사` are
  `가온상사`.
- Jamo similarity of a room's name part P and a vendor name N is `fuzz.partial_ratio(nfd(P), nfd(N)) / 100`;
  a vendor's score is the best over its names.
- With an ID (a leading `(digits)`): unknown ID -> blocked `unknown_id`; empty name part -> matched `empty_name`;
  another vendor scoring >= threshold and strictly more than the ID's vendor -> blocked `id_typo`; else matched
  `id`.
- Without an ID: exactly one vendor with a name equal to the room name -> matched `exact`; else containment in
  either direction with the contained string >= 2 characters: one vendor -> matched `containment`, none ->
  unresolved `no_match`, several -> unresolved `ambiguous`. No fuzzy matching, no preference for the longest.

Speed: scoring every vendor name with `partial_ratio` costs ~25 ms at 10,000 vendors, so scores are computed
best-first. `2*L / (m + L)`, with L the longest common subsequence of the two jamo strings and m the shorter
length, bounds `partial_ratio` from above (every window it compares is at most m long and shares at most L
characters with the shorter string). The bounds come from one bit-parallel `cdist` pass; exact scores are taken
in descending bound order until no unscored name can change the answer. Jamo are remapped to a small private
alphabet first: rapidfuzz compares characters below 256 much faster, and scores depend only on which
characters are equal, so they are unchanged.
"""

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import ahocorasick
import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import LCSseq

from vendors.name_folding import fold_name

MATCHED = "matched"
BLOCKED = "blocked"
UNRESOLVED = "unresolved"

REASON_ID = "id"
REASON_EMPTY_NAME = "empty_name"
REASON_UNKNOWN_ID = "unknown_id"
REASON_ID_TYPO = "id_typo"
REASON_EXACT = "exact"
REASON_CONTAINMENT = "containment"
REASON_NO_MATCH = "no_match"
REASON_AMBIGUOUS = "ambiguous"
# Not an outcome of `resolve`: staff chose the vendor, which holds until the room's name changes.
REASON_STAFF_ASSIGNED = "staff_assigned"

# What each reason means, for staff.
REASON_LABELS = {
    REASON_ID: "방 이름의 (코드)로 매칭",
    REASON_EMPTY_NAME: "(코드)만 있는 방 이름으로 매칭",
    REASON_UNKNOWN_ID: "방 이름의 (코드)가 없는 벤더 코드입니다",
    REASON_ID_TYPO: "방 이름의 (코드)와 이름이 서로 다른 벤더를 가리킵니다 (코드 오타 의심)",
    REASON_EXACT: "방 이름이 벤더 이름과 같아 매칭",
    REASON_CONTAINMENT: "방 이름에 벤더 이름이 들어 있어 매칭",
    REASON_NO_MATCH: "방 이름에 맞는 벤더가 없습니다",
    REASON_AMBIGUOUS: "방 이름이 여러 벤더에 맞습니다",
    REASON_STAFF_ASSIGNED: "직원이 벤더를 지정함",
}

# NFKC turns `㈜` into `(주)`, so these two cover all three corporate marks.
_CORPORATE_MARKS = ("(주)", "주식회사")
_ROOM_ID = re.compile(r"\s*\(\s*([0-9]+)\s*\)(.*)", re.DOTALL)
_MIN_CONTAINED_LENGTH = 2
# Added to the upper bounds so float rounding in partial_ratio can never put an exact score above its bound.
_BOUND_SLACK = 1e-9
_FIRST_SCORE_BATCH = 64
_POOL_SIZE = 512


def normalize_name(s: str) -> str:
    """The folded form (`vendors.name_folding`: NFKC, case, invisible characters, jamo composed, spaces and
    hyphens left out) without `(주)` / `㈜` / `주식회사`.

    Separators go first, so that spaced marks such as `( 주 )` are dropped too.
    """
    text = fold_name(s)
    for mark in _CORPORATE_MARKS:
        text = text.replace(mark, "")
    return text


def split_room_name(room_name: str) -> tuple[str | None, str]:
    """`(1234) 대한물산` -> ("1234", "대한물산"); no leading `(digits)` -> (None, the name).

    The room name is NFKC-normalised first, so full-width `（１２３４）` is an ID too. The name part is returned
    NFKC-normalised and stripped, not fully normalised.
    """
    text = unicodedata.normalize("NFKC", room_name)
    found = _ROOM_ID.fullmatch(text)
    if found is None:
        return None, text.strip()
    return found.group(1), found.group(2).strip()


def jamo_similarity(name_part: str, vendor_name: str) -> float:
    """The issue's similarity of two (normalised) names, in [0, 1]."""
    return fuzz.partial_ratio(unicodedata.normalize("NFD", name_part), unicodedata.normalize("NFD", vendor_name)) / 100


@dataclass(frozen=True)
class Resolution:
    status: str
    vendor_code: str | None
    vendor_name: str | None
    reason: str
    candidates: list[dict]  # [{"code", "name", "score"}], best first

    def as_dict(self) -> dict:
        return asdict(self)


class _Alphabet(dict):
    """str.translate table onto a private alphabet; characters no vendor name has map to one unused character."""

    def __init__(self, characters: Iterable[str]):
        super().__init__({ord(ch): chr(i) for i, ch in enumerate(sorted(set(characters)), start=1)})
        self.unknown = chr(len(self) + 1)

    def __missing__(self, codepoint: int) -> str:
        return self.unknown


class VendorIndex:
    """Every active vendor's normalised names, prepared for `resolve`. Immutable once built; thread-safe."""

    def __init__(self, vendors: list[tuple[str, str]], names: list[tuple[int, str]]):
        # vendors: (code, display name) by position; names: (vendor position, normalised name), deduplicated.
        self._codes = [code for code, _ in vendors]
        self._display_names = [name for _, name in vendors]
        self._position_by_code = {code: position for position, code in enumerate(self._codes)}

        self._name_vendor = [position for position, _ in names]
        self._name_vendor_array = np.array(self._name_vendor, dtype=np.intp)
        normalised = [name for _, name in names]
        jamo = [unicodedata.normalize("NFD", name) for name in normalised]
        self._alphabet = _Alphabet("".join(jamo))
        self._name_jamo = [text.translate(self._alphabet) for text in jamo]
        self._name_jamo_length = np.array([len(text) for text in jamo], dtype=np.int32)
        self._names_of_vendor: list[list[int]] = [[] for _ in vendors]
        for i, position in enumerate(self._name_vendor):
            self._names_of_vendor[position].append(i)

        exact: dict[str, set[int]] = {}
        for position, name in names:
            exact.setdefault(name, set()).add(position)
        self._vendors_by_exact_name = {name: frozenset(positions) for name, positions in exact.items()}

        self._automaton = ahocorasick.Automaton()
        for name, positions in self._vendors_by_exact_name.items():
            if len(name) >= _MIN_CONTAINED_LENGTH:
                self._automaton.add_word(name, positions)
        self._automaton.make_automaton()

        # Room name inside a vendor name: only names holding the room name's rarest character pair can match.
        self._normalised_names = normalised
        self._names_by_pair: dict[str, list[int]] = {}
        for i, name in enumerate(normalised):
            for pair in {name[j : j + 2] for j in range(len(name) - 1)}:
                self._names_by_pair.setdefault(pair, []).append(i)

        # Upper bound of a score by (shorter length, common subsequence length), looked up instead of computed.
        longest = int(self._name_jamo_length.max()) if names else 0
        shorter, common = np.ogrid[: longest + 1, : longest + 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            table = np.where(common > 0, 2 * common / (shorter + common) + _BOUND_SLACK, 0.0)
        # Flat, indexed by shorter * width + common: np.take is several times faster than 2-D fancy indexing.
        self._bound_table = table.ravel()
        self._bound_table_width = longest + 1

    @classmethod
    def build(cls, rows: Iterable[tuple[str, str, Sequence[str]]]) -> "VendorIndex":
        """From (code, name, aliases) rows. Names that normalise to nothing are left out."""
        vendors: list[tuple[str, str]] = []
        names: list[tuple[int, str]] = []
        # Positions in code order: the candidates' tie-break by code relies on it.
        for code, name, aliases in sorted(rows, key=lambda row: str(row[0])):
            position = len(vendors)
            vendors.append((str(code), name))
            seen = set()
            for raw in (name, *aliases):
                normalised = normalize_name(raw)
                if normalised and normalised not in seen:
                    seen.add(normalised)
                    names.append((position, normalised))
        return cls(vendors, names)

    def __len__(self) -> int:
        return len(self._codes)

    def resolve(self, room_name: str, *, typo_threshold: float, candidate_limit: int) -> Resolution:
        code, name_part = split_room_name(room_name)
        query = normalize_name(name_part)
        scorer = _BestFirstScorer(self, query)

        if code is not None:
            position = self._position_by_code.get(code)
            if position is None:
                return self._outcome(BLOCKED, REASON_UNKNOWN_ID, None, scorer, candidate_limit)
            if not query:
                return self._outcome(MATCHED, REASON_EMPTY_NAME, position, scorer, candidate_limit)
            id_score = scorer.vendor_score(position)
            if scorer.has_rival(position, at_least=typo_threshold, above=id_score):
                return self._outcome(BLOCKED, REASON_ID_TYPO, None, scorer, candidate_limit)
            return self._outcome(MATCHED, REASON_ID, position, scorer, candidate_limit)

        exact = self._vendors_by_exact_name.get(query, frozenset())
        if len(exact) == 1:
            return self._outcome(MATCHED, REASON_EXACT, next(iter(exact)), scorer, candidate_limit)
        contained = self._vendors_by_containment(query)
        if len(contained) == 1:
            return self._outcome(MATCHED, REASON_CONTAINMENT, next(iter(contained)), scorer, candidate_limit)
        reason = REASON_NO_MATCH if not contained else REASON_AMBIGUOUS
        return self._outcome(UNRESOLVED, reason, None, scorer, candidate_limit)

    def _outcome(self, status, reason, position, scorer: "_BestFirstScorer", candidate_limit: int) -> Resolution:
        candidates = [
            {"code": self._codes[p], "name": self._display_names[p], "score": score}
            for p, score in scorer.top(candidate_limit)
        ]
        if position is None:
            return Resolution(status, None, None, reason, candidates)
        return Resolution(status, self._codes[position], self._display_names[position], reason, candidates)

    def _vendors_by_containment(self, query: str) -> set[int]:
        """Vendors with a name inside the room name or containing it; stops at two (that is already ambiguous)."""
        found: set[int] = set()
        if len(query) < _MIN_CONTAINED_LENGTH:
            return found
        if len(self._automaton):
            for _end, positions in self._automaton.iter(query):
                found.update(positions)
                if len(found) > 1:
                    return found
        pairs = [self._names_by_pair.get(query[j : j + 2], ()) for j in range(len(query) - 1)]
        for i in min(pairs, key=len):
            if query in self._normalised_names[i]:
                found.add(self._name_vendor[i])
                if len(found) > 1:
                    return found
        return found


class _BestFirstScorer:
    """Exact vendor scores for one query, computed only as far as a question about them needs.

    Unscored names wait in `_unpooled` (their bounds; 0 once taken or when nothing is shared). The best ones
    are moved, sorted, into a pool that batches are taken from in order, so the next unscored bound is the
    pool's next entry.
    """

    def __init__(self, index: VendorIndex, query: str):
        self._index = index
        self._query = unicodedata.normalize("NFD", query).translate(index._alphabet)
        # Best exact score per vendor position so far; -1 until one of its names is scored.
        self._vendor_best = np.full(len(index), -1.0)
        self._batch_size = _FIRST_SCORE_BATCH
        self._pool = np.zeros(0, dtype=np.intp)
        self._cursor = 0
        if not query or not index._name_jamo:
            self._bounds = self._unpooled = np.zeros(0)
            self._unpooled_count = 0
            return
        lcs = process.cdist([self._query], index._name_jamo, scorer=LCSseq.similarity, dtype=np.int32, workers=1)
        shorter = np.minimum(index._name_jamo_length, len(self._query))
        self._bounds = np.take(index._bound_table, shorter * index._bound_table_width + lcs[0])
        self._unpooled = self._bounds.copy()
        self._unpooled_count = int(np.count_nonzero(self._unpooled))

    def _next_bound(self) -> float:
        """No unscored name can score above this (0 when none can score at all)."""
        if self._cursor == self._pool.size:
            if not self._unpooled_count:
                return 0.0
            size = min(_POOL_SIZE, self._unpooled_count)
            taken = np.argpartition(-self._unpooled, size - 1)[:size]
            self._pool = taken[np.argsort(-self._unpooled[taken], kind="stable")]
            self._cursor = 0
            self._unpooled[taken] = 0.0
            self._unpooled_count -= size
        return float(self._bounds[self._pool[self._cursor]])

    def _score_next_batch(self) -> None:
        """Score the next names in bound order; batches double, so long tails take few rounds."""
        batch = self._pool[self._cursor : self._cursor + self._batch_size]
        self._cursor += batch.size
        self._batch_size *= 2
        texts = [self._index._name_jamo[i] for i in batch.tolist()]
        scores = process.cdist([self._query], texts, scorer=fuzz.partial_ratio, dtype=np.float64, workers=1)[0] / 100
        np.maximum.at(self._vendor_best, self._index._name_vendor_array[batch], scores)

    def vendor_score(self, position: int) -> float:
        """A vendor's exact score (best over its names); also counts towards the candidates."""
        best = 0.0
        if self._bounds.size:
            for i in self._index._names_of_vendor[position]:
                best = max(best, fuzz.partial_ratio(self._query, self._index._name_jamo[i]) / 100)
        self._vendor_best[position] = best
        return best

    def has_rival(self, position: int, *, at_least: float, above: float) -> bool:
        """Does a vendor other than `position` score >= `at_least` and strictly more than `above`?"""
        while True:
            rivals = np.flatnonzero((self._vendor_best >= at_least) & (self._vendor_best > above))
            if rivals.size > 1 or (rivals.size == 1 and rivals[0] != position):
                return True
            bound = self._next_bound()
            if bound < at_least or bound <= above:
                return False
            self._score_next_batch()

    def top(self, limit: int) -> list[tuple[int, float]]:
        """The `limit` best vendors with a score above 0, best first, ties by code."""
        if limit <= 0:
            return []
        # Done once `limit` vendors score above every unscored name's bound (their order is then final).
        while True:
            bound = self._next_bound()
            if bound <= 0 or np.count_nonzero(self._vendor_best > bound) >= limit:
                break
            self._score_next_batch()
        scored = np.flatnonzero(self._vendor_best > 0)
        # Positions follow code order, so the secondary key breaks ties by code.
        ranked = scored[np.lexsort((scored, -self._vendor_best[scored]))][:limit]
        return [(position, float(self._vendor_best[position])) for position in ranked.tolist()]
