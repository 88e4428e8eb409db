"""Reads of the vendors app: vendor lookups, the names revision other caches key on, the resolution index, the
brand names of the catalogue, the names and table revisions other apps build their name caches from, the SQL
passes of the records search (`vendor_rows_match`; the agent's `agent.knowledge.records` decides what to search for
and turns the rows into evidence), and the company-wide figures of the agent's company tools (`agent.tools.company`
turns them into tables)."""

import datetime
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import BigIntegerField, Case, Count, ExpressionWrapper, F, IntegerField, Max, Q, Sum, Value, When
from django.db.models.fields.json import KT

from vendors.models import Brand, Product, Vendor, VendorRecord
from vendors.resolution import Resolution, VendorIndex, normalize_name

# Bumped (on commit) by every vendor write in vendors.services. It closes the gap the table aggregate alone
# leaves: a transaction that saved earlier but commits later does not raise Max(updated_at).
VENDOR_NAMES_GENERATION_KEY = "vendors:names:generation"


def vendor_get_by_code(code: str, *, active_only: bool = False) -> Vendor | None:
    vendors = Vendor.objects.filter(code=code)
    return (vendors.filter(is_active=True) if active_only else vendors).first()


def vendor_names_revision() -> str:
    """A cheap token that changes whenever any vendor's name, aliases or active flag may have changed.

    One aggregate query (count and latest `updated_at`; every vendor save goes through the ORM, which sets
    `updated_at`) plus the write generation from the shared cache. Caches of vendor names key on it.
    """
    row = Vendor.objects.aggregate(count=Count("id"), last_updated=Max("updated_at"))
    last_updated = row["last_updated"].isoformat() if row["last_updated"] else "-"
    generation = cache.get(VENDOR_NAMES_GENERATION_KEY, 0)
    return f"{row['count']}:{last_updated}:{generation}"


def vendor_names_all() -> list[tuple[str, list[str]]]:
    """Every active vendor as (code, [name, *aliases]), ordered by code. Names are as stored, not normalised."""
    return [
        (code, [name, *aliases])
        for code, name, aliases in Vendor.objects.filter(is_active=True)
        .order_by("code")
        .values_list("code", "name", "aliases")
    ]


def vendor_ids_by_alias(term: str) -> list[int]:
    """Ids of vendors with an alias containing `term`, compared normalised (`대한 물산` finds `대한물산`).

    Aliases are a JSON list, and SQLite stores non-ASCII JSON escaped, so the match runs here rather than in SQL.
    """
    needle = normalize_name(term)
    if not needle:
        return []
    return [
        pk
        for pk, aliases in Vendor.objects.exclude(aliases=[]).values_list("pk", "aliases")
        if any(needle in normalize_name(alias) for alias in aliases)
    ]


def vendor_id_names(vendor_ids, *, limit: int) -> list[tuple[int, str]]:
    """(id, name) of the vendors among `vendor_ids` (ids, or a subquery of them), by name, at most `limit`."""
    return list(Vendor.objects.filter(pk__in=vendor_ids).order_by("name").values_list("pk", "name")[:limit])


@dataclass(frozen=True)
class _CachedIndex:
    revision: str
    index: VendorIndex


_cached_index: _CachedIndex | None = None
_index_build_lock = threading.Lock()


def vendor_index_get() -> VendorIndex:
    """The resolution index of active vendors, built once per process and rebuilt when the revision changes.

    The revision is checked on every call rather than every few seconds: resolution runs only when a room
    is new, renamed or re-resolved by staff, so one aggregate query is cheap there, and a vendor change is
    never missed by a stale index (a wrong vendor is the worst outcome).
    """
    global _cached_index
    # Read the revision before the rows: a change in between makes the next call rebuild, never the reverse.
    revision = vendor_names_revision()
    cached = _cached_index
    if cached is not None and cached.revision == revision:
        return cached.index
    with _index_build_lock:
        cached = _cached_index
        if cached is not None and cached.revision == revision:
            return cached.index
        index = VendorIndex.build((code, names[0], names[1:]) for code, names in vendor_names_all())
        _cached_index = _CachedIndex(revision=revision, index=index)
        return index


def room_name_resolve(room_name: str) -> Resolution:
    """Resolve a room name against the current vendors with the configured threshold and candidate limit."""
    return vendor_index_get().resolve(
        room_name,
        typo_threshold=settings.RESOLUTION_TYPO_THRESHOLD,
        candidate_limit=settings.RESOLUTION_CANDIDATE_LIMIT,
    )


# ---------------------------------------------------------------------------------------------------------------
# Brand names of the catalogue
# ---------------------------------------------------------------------------------------------------------------


def brand_names_all() -> list[str]:
    """Every known brand name and alias (for brand checks that must know brands beyond one answer's evidence)."""
    names: list[str] = []
    for name, aliases in Brand.objects.values_list("name", "aliases"):
        names.append(name)
        names.extend(aliases)
    return names


def brand_names_of_vendor(vendor) -> list[str]:
    """Names and aliases of the brands `vendor`'s current products carry: its own catalogue's brands."""
    brands = Brand.objects.filter(
        pk__in=Product.objects.current().filter(vendor_id=vendor.pk, brand__isnull=False).values("brand_id")
    )
    names: list[str] = []
    for name, aliases in brands.order_by("name").values_list("name", "aliases"):
        names.append(name)
        names.extend(aliases)
    return names


def brand_names_of_other_vendors(vendor) -> list[str]:
    """Names and aliases of the brands another vendor's current products carry and none of `vendor`'s do: in
    `vendor`'s room they are another vendor's data."""
    carried = Product.objects.current().filter(brand__isnull=False)
    own = carried.filter(vendor_id=vendor.pk).values("brand_id")
    brands = Brand.objects.filter(pk__in=carried.exclude(vendor_id=vendor.pk).values("brand_id")).exclude(pk__in=own)
    names: list[str] = []
    for name, aliases in brands.order_by("name").values_list("name", "aliases"):
        names.append(name)
        names.extend(aliases)
    return names


# ---------------------------------------------------------------------------------------------------------------
# Every name, and table revisions: what other apps build their name caches from (the agent's masker, the
# knowledge hub's lexicon, the catalogue's terms)
# ---------------------------------------------------------------------------------------------------------------

TableRevision = tuple[int, datetime.datetime | None]


def _table_revision(model) -> TableRevision:
    row = model.objects.aggregate(count=Count("pk"), latest=Max("updated_at"))
    return row["count"], row["latest"]


def vendor_table_revision() -> TableRevision:
    """(count, latest `updated_at`) of the vendors: moves when one is added, saved or deleted. One aggregate query,
    without the write generation `vendor_names_revision` reads from the shared cache."""
    return _table_revision(Vendor)


def brand_table_revision() -> TableRevision:
    """(count, latest `updated_at`) of the brands."""
    return _table_revision(Brand)


def product_table_revision() -> TableRevision:
    """(count, latest `updated_at`) of the products, retired ones included (retiring one saves it)."""
    return _table_revision(Product)


def vendor_name_rows() -> list[tuple[int, str, list[str]]]:
    """(id, name, aliases) of every vendor, inactive ones included, by code."""
    return list(Vendor.objects.values_list("pk", "name", "aliases"))


def brand_name_rows() -> list[tuple[int, str, list[str]]]:
    """(id, name, aliases) of every brand, by name."""
    return list(Brand.objects.values_list("pk", "name", "aliases"))


def brand_carriers() -> dict[int, set[int]]:
    """The ids of the vendors whose current products carry each brand, by brand id (a brand no current product
    carries is not a key)."""
    carriers: dict[int, set[int]] = {}
    for brand_id, vendor_id in (
        Product.objects.current().filter(brand__isnull=False).values_list("brand_id", "vendor_id").distinct()
    ):
        carriers.setdefault(brand_id, set()).add(vendor_id)
    return carriers


def product_names() -> Iterator[str]:
    """Every product name (retired products' too) once, in no particular order, streamed from the database."""
    # Unordered: the model's ordering would join the vendors and make DISTINCT run over (name, code, SKU).
    return Product.objects.order_by().values_list("name", flat=True).distinct().iterator()


# ---------------------------------------------------------------------------------------------------------------
# Records search: the SQL passes over one vendor's records and products
# ---------------------------------------------------------------------------------------------------------------

# Search runs on `search_text`, the derived column (NFKC, lower case) every writer in `vendors.records` keeps in
# sync, and filters by the vendor in the same SQL as the match:
# 1. exact pass (`vendor_rows_match`) — rows of the vendor in which a query token is a substring, scored by the
#    share of tokens found; another word for the token's subject (given by the caller: 대금 → 결제) counts 0.85 of
#    one, so "대금은 매달 며칠에 들어와요?" finds the contract whose terms read "결제 조건은 …".
#    Two-syllable Korean words (`단가`, `정산`) have no trigram to look up, so this pass reads the vendor's rows
#    through the vendor index and tests them with LIKE (cheap per row); PostgreSQL may use the pg_trgm GIN index
#    for tokens of three or more characters when that is cheaper.
# 2. similar pass (`vendor_rows_match_similar`, PostgreSQL only), for the tokens the caller names (those of three
#    or more characters that no exact hit contains) — pg_trgm word similarity (`%>`) through its GIN index
#    (`단말기들` still finds `단말기`). It runs only then, because word similarity costs far more per row than LIKE.
#
# A token scores 1 when it is a substring of the row's search text; in the similar pass a token no exact hit
# contains scores its pg_trgm word similarity instead (when it clears RECORDS_TRGM_WORD_SIMILARITY). A row's
# score is the mean over the query's tokens. A record with an effective period is a candidate only when that period
# overlaps the days the question is about (the window the caller gives): an ended promotion or a superseded
# contract is no evidence for a question about now, and one that starts later only for a question about what is
# coming.
# The SQL is written out (parameters only, never interpolated values): it is the hot path, and the ORM spent more
# time compiling these CASE expressions than PostgreSQL spent running them.
_LIKE = "t.search_text LIKE %s ESCAPE '\\'"
_SIMILAR = "t.search_text %%> %s"  # %% is a literal % for the DB-API parameter style
_SYNONYM_SCORE = 0.85
_MIN_LIKE_TOKEN_LENGTH = 2  # a one-syllable word for the subject (돈) is inside too many others


def _like_pattern(token: str) -> str:
    return "%" + token.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


@dataclass(frozen=True)
class VendorRowsQuery:
    """What one vendor's rows are matched against: tokens normalised as the search text is
    (`vendors.records.search_normalize`), the other words for each token's subject (the caller's: 대금 → 결제), the
    days a record's effective period must overlap (None: open on that side), and how many rows of each model."""

    vendor_id: int
    tokens: tuple[str, ...]
    synonyms: dict[str, list[str]]
    window_start: datetime.date | None
    window_end: datetime.date | None
    limit: int


@dataclass(frozen=True)
class VendorRowsMatched:
    """One vendor's records and products that a search matched, best first, at most `limit` of each. Each row
    carries its `score` (0–1); a product also its brand's name as `brand_name` (None without a brand)."""

    records: list[VendorRecord]
    products: list[Product]


def _search_pass(model, query: VendorRowsQuery, similar_tokens: list[str]) -> list:
    """One model's rows of one vendor, scored and ordered in SQL. With `similar_tokens` this is the similar pass
    (candidates by pg_trgm `%>`), without it the exact pass (candidates by LIKE)."""
    tokens, synonyms = query.tokens, query.synonyms
    scores, score_params, candidates, candidate_params = [], [], [], []
    for token in tokens:
        pattern = _like_pattern(token)
        token_synonyms = synonyms.get(token, [])
        if len(token) < _MIN_LIKE_TOKEN_LENGTH:
            if similar_tokens or not token_synonyms:
                scores.append("0.0")
                continue
            # A one-syllable word (돈) is inside too many others: only its longer words for the subject count.
            synonym_patterns = [_like_pattern(synonym) for synonym in token_synonyms]
            scores.append(
                f"CASE WHEN ({' OR '.join([_LIKE] * len(token_synonyms))}) THEN {_SYNONYM_SCORE} ELSE 0.0 END"
            )
            score_params += synonym_patterns
            candidates += [_LIKE] * len(token_synonyms)
            candidate_params += synonym_patterns
        elif token_synonyms and not similar_tokens:
            # The record may write the subject another way (대금 → "결제 조건은 …"): found, but worth a little less.
            other = " OR ".join([_LIKE] * len(token_synonyms))
            scores.append(f"CASE WHEN {_LIKE} THEN 1.0 WHEN ({other}) THEN {_SYNONYM_SCORE} ELSE 0.0 END")
            synonym_patterns = [_like_pattern(synonym) for synonym in token_synonyms]
            score_params += [pattern, *synonym_patterns]
            candidates += [_LIKE] * (1 + len(token_synonyms))
            candidate_params += [pattern, *synonym_patterns]
        elif token in similar_tokens:
            scores.append(
                f"CASE WHEN {_LIKE} THEN 1.0 WHEN {_SIMILAR} THEN word_similarity(%s, t.search_text) ELSE 0.0 END"
            )
            score_params += [pattern, token, token]
            candidates.append(_SIMILAR)
            candidate_params.append(token)
        else:
            scores.append(f"CASE WHEN {_LIKE} THEN 1.0 ELSE 0.0 END")
            score_params.append(pattern)
            if not similar_tokens:
                candidates.append(_LIKE)
                candidate_params.append(pattern)
    if not candidates:
        return []  # no token can match (a one-syllable word without longer words for its subject)
    score = f"({' + '.join(scores)}) / {float(len(tokens))}"
    in_force, in_force_params = "", []
    if model is VendorRecord:
        columns, join = "t.*", ""
        if query.window_start is not None:
            in_force = "AND (t.effective_to IS NULL OR t.effective_to >= %s) "
            in_force_params = [query.window_start.isoformat()]
        if query.window_end is not None:
            in_force += "AND (t.effective_from IS NULL OR t.effective_from <= %s) "
            in_force_params.append(query.window_end.isoformat())
    else:
        columns, join = "t.*, b.name AS brand_name", f"LEFT JOIN {Brand._meta.db_table} b ON b.id = t.brand_id"
    sql = (
        f"SELECT {columns}, CAST({score} AS double precision) AS score FROM {model._meta.db_table} t {join} "
        f"WHERE t.vendor_id = %s AND ({' OR '.join(candidates)}) {in_force}"
        "ORDER BY score DESC, t.updated_at DESC, t.id DESC LIMIT %s"
    )
    params = [*score_params, query.vendor_id, *candidate_params, *in_force_params, query.limit]
    return list(model.objects.raw(sql, params))


def _merged(exact: list, similar: list, limit: int) -> list:
    best = {row.pk: row for row in exact}
    for row in similar:
        if row.pk not in best or row.score > best[row.pk].score:
            best[row.pk] = row
    return sorted(best.values(), key=lambda row: (-row.score, -row.updated_at.timestamp(), -row.pk))[:limit]


def vendor_rows_match(query: VendorRowsQuery) -> VendorRowsMatched:
    """The exact pass: vendor `query.vendor_id`'s current records and products holding a token (or one of its
    synonyms, for 0.85 of a token; a token shorter than two characters counts by its synonyms only), best first.

    A record with an effective period is a candidate only when it overlaps the query's window. The vendor condition
    is in the SQL that reads the rows, so another vendor's row is never read, let alone returned.
    """
    if not query.tokens or query.limit <= 0:
        return VendorRowsMatched(records=[], products=[])
    return VendorRowsMatched(records=_search_pass(VendorRecord, query, []), products=_search_pass(Product, query, []))


def vendor_rows_match_similar(
    found: VendorRowsMatched, query: VendorRowsQuery, similar_tokens: list[str]
) -> VendorRowsMatched:
    """`found` (the exact pass of the same query) with the similar pass merged in: rows whose search text is
    word-similar (pg_trgm `%>`) to one of `similar_tokens`, each row at its better score of the two passes.

    PostgreSQL only; elsewhere, or without `similar_tokens`, `found` as it is.
    """
    if not similar_tokens or not query.tokens or query.limit <= 0 or connection.vendor != "postgresql":
        return found
    with transaction.atomic(), connection.cursor() as cursor:
        # `%>` reads its threshold from this transaction-local setting.
        cursor.execute(
            "SELECT set_config('pg_trgm.word_similarity_threshold', %s, true)",
            [str(settings.RECORDS_TRGM_WORD_SIMILARITY)],
        )
        records = _merged(found.records, _search_pass(VendorRecord, query, similar_tokens), query.limit)
        products = _merged(found.products, _search_pass(Product, query, similar_tokens), query.limit)
    return VendorRowsMatched(records=records, products=products)


# ---------------------------------------------------------------------------------------------------------------
# One record
# ---------------------------------------------------------------------------------------------------------------


def vendor_record_current_get(*, vendor, record_id: int) -> VendorRecord | None:
    """`vendor`'s current record `record_id`, or None: another vendor's record is answered like a missing one."""
    return VendorRecord.objects.current().filter(pk=record_id, vendor=vendor).first()


def vendor_record_get(record_id: int) -> VendorRecord:
    """The record `record_id`; raises VendorRecord.DoesNotExist."""
    return VendorRecord.objects.get(pk=record_id)


# ---------------------------------------------------------------------------------------------------------------
# Company-wide figures: what the agent's company tools read across every vendor
# ---------------------------------------------------------------------------------------------------------------


def vendor_codes_and_names(vendor_ids: Iterable[int]) -> dict[int, tuple[str, str, bool]]:
    """(code, name, is_active) of each of the vendors `vendor_ids`, by id."""
    rows = Vendor.objects.filter(pk__in=set(vendor_ids)).values_list("pk", "code", "name", "is_active")
    return {pk: (code, name, is_active) for pk, code, name, is_active in rows}


def order_record_values(
    *, ordered_from: datetime.date, ordered_to: datetime.date, keys: tuple[str, ...]
) -> list[tuple]:
    """(id, vendor id, `ordered_at`, *the values at `keys`) of the current order records dated `ordered_from` to
    `ordered_to`, and of those without an `ordered_at` (missing or empty); values unparsed, as the database gives
    JSON scalars (PostgreSQL as text).

    The dates are compared as ISO text in SQL (which sorts like the date it spells), so the caller parses them
    again. Only these keys are fetched, not whole `values` objects: decoding those cost more than the query itself
    on long periods."""
    in_period = Q(
        value_ordered_at__gte=ordered_from.isoformat(),
        value_ordered_at__lt=(ordered_to + datetime.timedelta(days=1)).isoformat(),
    )
    values = {f"value_{key}": KT(f"values__{key}") for key in ("ordered_at", *keys)}
    return list(
        VendorRecord.objects.current()
        .filter(kind=VendorRecord.Kind.ORDER)
        .annotate(**values)
        .filter(in_period | Q(value_ordered_at__isnull=True) | Q(value_ordered_at=""))
        .order_by()
        .values_list("pk", "vendor_id", *values)
    )


def vendor_record_titles(record_ids: Iterable[int]) -> dict[int, str]:
    """Titles of the records `record_ids`, by id."""
    return dict(VendorRecord.objects.filter(pk__in=list(record_ids)).values_list("pk", "title"))


def settlement_record_values(*, due_month: str = "") -> list[tuple]:
    """(vendor id, `amount_due`, `amount_paid`, `due_date`) of every current settlement record, values unparsed;
    only those whose `due_date` starts with `due_month` (YYYY-MM) when it is given."""
    settlements = (
        VendorRecord.objects.current()
        .filter(kind=VendorRecord.Kind.SETTLEMENT)
        .annotate(
            amount_due=KT("values__amount_due"), amount_paid=KT("values__amount_paid"), due_on=KT("values__due_date")
        )
    )
    if due_month:
        settlements = settlements.filter(due_on__startswith=due_month)
    return list(settlements.order_by().values_list("vendor_id", "amount_due", "amount_paid", "due_on"))


@dataclass(frozen=True)
class PromotionsRunning:
    """The current promotions running on one day: how many, of how many vendors, and the first `limit` of them
    (ending soonest first, open-ended last) with their vendor loaded; and how many promotions have no period at
    all (`undated`), which run on no day in particular."""

    total: int
    vendor_count: int
    records: list[VendorRecord]
    undated: int


def promotions_running_on(day: datetime.date, *, limit: int) -> PromotionsRunning:
    promotions = VendorRecord.objects.current().filter(kind=VendorRecord.Kind.PROMOTION)
    undated = promotions.filter(effective_from__isnull=True, effective_to__isnull=True).count()
    running = (
        promotions.exclude(effective_from__isnull=True, effective_to__isnull=True)
        .filter(Q(effective_from__isnull=True) | Q(effective_from__lte=day))
        .filter(Q(effective_to__isnull=True) | Q(effective_to__gte=day))
    )
    total = running.count()
    records = list(
        running.select_related("vendor").order_by(F("effective_to").asc(nulls_last=True), "vendor__code", "pk")[:limit]
    )
    vendor_count = running.aggregate(n=Count("vendor_id", distinct=True))["n"]
    return PromotionsRunning(total=total, vendor_count=vendor_count, records=records, undated=undated)


def product_categories(*, vendor_ids: Iterable[int], skus: Iterable[str]) -> dict[tuple[int, str], str]:
    """Categories of the products (retired ones included) of `vendor_ids` with one of `skus`, by (vendor id, SKU)."""
    rows = Product.objects.filter(vendor_id__in=set(vendor_ids), sku__in=set(skus)).values_list(
        "vendor_id", "sku", "category"
    )
    return {(vendor_id, sku): category for vendor_id, sku, category in rows}


def _whole_numbers(groups) -> list[dict]:
    """Aggregate rows with their sums as int: PostgreSQL sums bigint columns as numeric (Decimal in Python)."""
    return [{name: int(v) if isinstance(v, Decimal) else v for name, v in group.items()} for group in groups]


def product_stock_by_group(*, group_by: str, category: str = "") -> list[dict]:
    """The current products' stock per `group_by` (`vendor_id` or `category`), of `category` only when it is given,
    largest stock value first: each group's key, `products`, `stock`, `stock_value` (stock × unit price, in won)
    and `low` (products at or below their safety stock)."""
    products = Product.objects.current()
    if category:
        products = products.filter(category=category)
    stock_value = ExpressionWrapper(F("stock_quantity") * F("unit_price"), output_field=BigIntegerField())
    return _whole_numbers(
        products.values(group_by)
        .annotate(
            products=Count("pk"),
            stock=Sum("stock_quantity"),
            stock_value=Sum(stock_value),
            low=Count("pk", filter=Q(stock_quantity__lte=F("safety_stock"))),
        )
        .order_by("-stock_value", "-stock", group_by)
    )


@dataclass(frozen=True)
class ProductStockAlerts:
    """The current products at or below their safety stock: how many, how many sold out, and the first `limit` by
    shortfall (largest first), each with its `shortfall` and its vendor loaded."""

    total: int
    sold_out: int
    products: list[Product]


def product_stock_alerts(*, category: str = "", limit: int) -> ProductStockAlerts:
    alerts = Product.objects.current().filter(stock_quantity__lte=F("safety_stock"))
    if category:
        alerts = alerts.filter(category=category)
    counts = alerts.aggregate(total=Count("pk"), sold_out=Count("pk", filter=Q(stock_quantity=0)))
    shortfall = ExpressionWrapper(F("safety_stock") - F("stock_quantity"), output_field=IntegerField())
    products = list(
        alerts.annotate(shortfall=shortfall)
        .select_related("vendor")
        .order_by("-shortfall", "stock_quantity", "vendor__code", "sku")[:limit]
    )
    return ProductStockAlerts(total=counts["total"], sold_out=counts["sold_out"], products=products)


@dataclass(frozen=True)
class ProductMargins:
    """The current products with a cost and a price above 0, summed per group, by key: each group's key,
    `products`, `price`, `cost` and `below_cost` (products priced under their cost); and how many current products
    that leaves out, for having no cost (`no_cost`) or a price of 0 (`zero_price`)."""

    groups: list[dict]
    no_cost: int
    zero_price: int


def product_margins_by_group(*, group_by: str) -> ProductMargins:
    """`ProductMargins` per `group_by` (`vendor_id` or `category`)."""
    priced = Product.objects.current().filter(cost_price__isnull=False, unit_price__gt=0)
    groups = _whole_numbers(
        priced.values(group_by)
        .annotate(
            products=Count("pk"),
            price=Sum("unit_price"),
            cost=Sum("cost_price"),
            below_cost=Count("pk", filter=Q(cost_price__gt=F("unit_price"))),
        )
        .order_by(group_by)
    )
    excluded = Product.objects.current().aggregate(
        no_cost=Count("pk", filter=Q(cost_price__isnull=True)),
        zero_price=Count("pk", filter=Q(cost_price__isnull=False, unit_price=0)),
    )
    return ProductMargins(groups=groups, no_cost=excluded["no_cost"], zero_price=excluded["zero_price"])


def _token_hits(tokens: list[str]):
    """How many of the tokens a product's search text (brand names, name, SKU) or category contains."""
    hits = [
        Case(When(Q(search_text__contains=token) | Q(category__icontains=token), then=Value(1)), default=Value(0))
        for token in tokens
    ]
    return sum(hits[1:], start=hits[0])


@dataclass(frozen=True)
class ProductMatches:
    """The current products holding the most of a query's tokens (`hits` of them): how many, of how many vendors,
    and the first `limit`, cheapest first, with their vendor and brand loaded."""

    hits: int
    total: int
    vendor_count: int
    products: list[Product]


def products_matching_most_tokens(tokens: list[str], *, limit: int) -> ProductMatches | None:
    """The products whose search text (brand names, name, SKU) or category holds the most of `tokens` (normalised
    as the search text is; at least one), or None when no current product holds any."""
    candidates = Product.objects.current().annotate(hits=_token_hits(tokens)).filter(hits__gte=1)
    best = candidates.order_by("-hits").values_list("hits", flat=True).first()
    if best is None:
        return None
    matches = candidates.filter(hits=best)
    total = matches.count()
    products = list(matches.select_related("vendor", "brand").order_by("unit_price", "vendor__code", "sku")[:limit])
    vendor_count = matches.aggregate(n=Count("vendor_id", distinct=True))["n"]
    return ProductMatches(hits=best, total=total, vendor_count=vendor_count, products=products)


@dataclass(frozen=True)
class VendorDirectory:
    """The vendors a directory search found: how many, how many of them active, and the first `limit` by code, each
    with its `room_count`."""

    total: int
    active: int
    vendors: list[Vendor]


def vendor_directory(*, query: str = "", is_active: bool | None = None, limit: int) -> VendorDirectory:
    """The vendors whose code contains `query` or whose name (ignoring case) or an alias does (every vendor without
    a query), only the active or the inactive ones when `is_active` says which."""
    vendors = Vendor.objects.all()
    if is_active is not None:
        vendors = vendors.filter(is_active=is_active)
    if query:
        vendors = vendors.filter(
            Q(code__contains=query) | Q(name__icontains=query) | Q(pk__in=vendor_ids_by_alias(query))
        )
    counts = vendors.aggregate(total=Count("pk"), active=Count("pk", filter=Q(is_active=True)))
    rows = list(vendors.annotate(room_count=Count("rooms")).order_by("code")[:limit])
    return VendorDirectory(total=counts["total"], active=counts["active"], vendors=rows)
