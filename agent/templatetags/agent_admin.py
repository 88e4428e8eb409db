"""Presentation helpers for the staff pages of the agent: highlighted violations and masks, word diffs between
draft rounds, labels, and charts drawn as inline SVG on the server (no JavaScript, nothing from a CDN)."""

import difflib
import json
import re
from collections.abc import Sequence

from django import template
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from agent.knowledge.masking import BRAND_MASK, MASK
from agent.verification import GROUP_COLOURS, kind_group, kind_label
from conversations.models import Question, Room
from delivery.models import SendJob

register = template.Library()

SOURCE_KIND_LABELS = {"record": "벤더 자료", "hub": "지식 허브", "faq": "FAQ"}
# Question statuses in charts: label colours also used by the page styles.
STATUS_COLOURS = {
    "answered": "#2e7d32",
    "held": "#f9a825",
    "blocked": "#6d4c41",
    "no_evidence": "#1e88e5",
    "failed": "#c62828",
}
_TOKENS = re.compile(r"\S+|\s+")
_COUNT_LABELS = (("texts", "글"), ("photos", "사진"), ("files", "파일"))


# --- labels ------------------------------------------------------------------------------------------------


@register.filter
def violation_kind_label(kind: str) -> str:
    return kind_label(kind)


@register.filter
def violation_group(kind: str) -> str:
    """Kinds share a colour by what went wrong (numbers, brands, other vendors ...): the group in the kinds table."""
    return kind_group(kind)


@register.simple_tag
def violation_group_styles() -> SafeString:
    """The highlight and chip colours of every violation group, from the kinds table (a new group needs no CSS)."""
    rules = []
    for group, (background, border) in GROUP_COLOURS.items():
        rules.append(
            f"  mark.violation-{group} {{ background: {background}; border-color: {border}; color: #000; }}\n"
            f"  .kind-chip.violation-{group} {{ background: {background}; }}"
        )
    return mark_safe("\n".join(rules))  # built from the constant table of kinds, no user input


@register.filter
def source_kind_label(kind: str) -> str:
    return SOURCE_KIND_LABELS.get(kind, kind)


@register.filter
def pretty_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True, default=str)


@register.filter
def question_status_label(value: str) -> str:
    return _choice_label(Question.Status, value)


@register.filter
def send_state_label(value: str) -> str:
    return _choice_label(SendJob.State, value)


@register.filter
def room_kind_label(value: str) -> str:
    return _choice_label(Room.Kind, value)


def _choice_label(choices, value) -> str:
    return choices(value).label if value in choices.values else (value or "-")


@register.filter
def get_item(mapping: dict, key):
    return mapping.get(key)


@register.filter
def counts_text(counts: dict) -> str:
    """A send job's `{"texts", "photos", "files"}` counts in words, or "-" before the device reported any."""
    if not counts:
        return "-"
    return " · ".join(f"{label} {counts.get(key, 0)}" for key, label in _COUNT_LABELS)


# --- highlighting ------------------------------------------------------------------------------------------


@register.filter
def masks_highlighted(text: str) -> SafeString:
    """The text with every `[다른 벤더]` / `[다른 벤더 상품]` replacement marked, so staff see where another vendor or
    its brand was masked."""
    escaped = str(escape(text or ""))
    for mask, title in ((BRAND_MASK, "다른 벤더 상품의 브랜드를 가렸습니다"), (MASK, "다른 벤더 이름을 가렸습니다")):
        escaped = escaped.replace(mask, str(format_html('<mark class="masked" title="{}">{}</mark>', title, mask)))
    return mark_safe(escaped)  # escaped above


def violation_span(text: str, violation: dict) -> tuple[int, int] | None:
    """Where a violation sits in `text`: its recorded span when that still points at its text, else the first
    occurrence of its text (staff re-verification of removed sentences records no span)."""
    span, needle = violation.get("span"), violation.get("text") or ""
    if isinstance(span, list | tuple) and len(span) == 2 and all(isinstance(n, int) for n in span):
        start, end = span
        if 0 <= start < end <= len(text) and (not needle or text[start:end] == needle):
            return start, end
    if needle and (start := text.find(needle)) >= 0:
        return start, start + len(needle)
    return None


@register.filter
def violations_highlighted(text: str, violations: Sequence[dict]) -> SafeString:
    """The draft with each violation marked and numbered like the list beside it; on overlap the first wins."""
    text = text or ""
    spans = []
    for number, violation in enumerate(violations or [], start=1):
        span = violation_span(text, violation)
        if span:
            spans.append((*span, number, violation))
    spans.sort(key=lambda item: (item[0], -item[1]))
    parts, cursor = [], 0
    for start, end, number, violation in spans:
        if start < cursor:
            continue
        kind = str(violation.get("kind", ""))
        parts.append(escape(text[cursor:start]))
        parts.append(
            format_html(
                '<mark class="violation violation-{}" title="{}">{}<sup>{}</sup></mark>',
                violation_group(kind),
                violation.get("reason") or violation_kind_label(kind),
                text[start:end],
                number,
            )
        )
        cursor = end
    parts.append(escape(text[cursor:]))
    return mark_safe("".join(str(part) for part in parts))  # each part escaped or from format_html


@register.simple_tag
def word_diff(before: str, after: str) -> SafeString:
    """A word-level diff: removed words struck through, added words underlined."""
    old, new = _TOKENS.findall(before or ""), _TOKENS.findall(after or "")
    parts = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            parts.append(escape("".join(old[i1:i2])))
            continue
        if i2 > i1:
            parts.append(format_html('<del class="diff-del">{}</del>', "".join(old[i1:i2])))
        if j2 > j1:
            parts.append(format_html('<ins class="diff-ins">{}</ins>', "".join(new[j1:j2])))
    return mark_safe("".join(str(part) for part in parts))  # each part escaped or from format_html


# --- charts (inline SVG) -----------------------------------------------------------------------------------


def horizontal_bar_chart(
    items: Sequence[tuple[str, float]], *, title: str, unit: str = "", colour: str = "#417690", width: int = 640
) -> SafeString:
    """One bar per (label, value), longest bar = largest value, the value written after each bar."""
    if not items:
        return format_html('<p class="chart-empty">{}: 자료 없음</p>', title)
    label_width, row_height, value_room = 220, 24, 90
    bar_room = width - label_width - value_room
    peak = max(value for _, value in items) or 1
    height = row_height * len(items) + 8
    rows = []
    for index, (label, value) in enumerate(items):
        y = 4 + index * row_height
        bar = max(1, round(bar_room * value / peak)) if value else 0
        shown = label if len(label) <= 24 else label[:23] + "…"
        rows.append(
            format_html(
                '<text x="{}" y="{}" text-anchor="end" class="chart-label">{}</text>'
                '<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}: {}{}</title></rect>'
                '<text x="{}" y="{}" class="chart-value">{}{}</text>',
                label_width - 6,
                y + 15,
                shown,
                label_width,
                y + 3,
                bar,
                row_height - 6,
                colour,
                label,
                _number(value),
                unit,
                label_width + bar + 6,
                y + 15,
                _number(value),
                unit,
            )
        )
    return format_html(
        '<svg class="chart" role="img" aria-label="{}" width="{}" height="{}" viewBox="0 0 {} {}" '
        'xmlns="http://www.w3.org/2000/svg"><title>{}</title>{}</svg>',
        title,
        width,
        height,
        width,
        height,
        title,
        mark_safe("".join(rows)),  # from format_html
    )


def stacked_bar_chart(
    categories: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[float]]],
    *,
    title: str,
    width: int = 720,
    height: int = 240,
) -> SafeString:
    """Vertical columns, one per category, stacked by series `(name, colour, values per category)`, a legend
    below and the column total above each column."""
    if not categories:
        return format_html('<p class="chart-empty">{}: 자료 없음</p>', title)
    left, top, bottom, legend_height = 36, 18, 30, 22
    plot_height = height - top - bottom - legend_height
    slot = (width - left) / len(categories)
    bar_width = max(4, slot * 0.6)
    totals = [sum(values[index] for _, _, values in series) for index in range(len(categories))]
    peak = max(totals) or 1
    shapes = [
        format_html(
            '<line x1="{}" y1="{}" x2="{}" y2="{}" class="chart-axis"/>'
            '<text x="{}" y="{}" text-anchor="end" class="chart-value">{}</text>',
            left,
            top + plot_height,
            width,
            top + plot_height,
            left - 4,
            top + 4,
            _number(peak),
        )
    ]
    for index, category in enumerate(categories):
        x = left + slot * index + (slot - bar_width) / 2
        y = top + plot_height
        for name, colour, values in series:
            value = values[index]
            if not value:
                continue
            segment = plot_height * value / peak
            y -= segment
            shapes.append(
                format_html(
                    '<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{} {}: {}</title></rect>',
                    f"{x:.1f}",
                    f"{y:.1f}",
                    f"{bar_width:.1f}",
                    f"{segment:.1f}",
                    colour,
                    category,
                    name,
                    _number(value),
                )
            )
        shapes.append(
            format_html(
                '<text x="{}" y="{}" text-anchor="middle" class="chart-value">{}</text>'
                '<text x="{}" y="{}" text-anchor="middle" class="chart-label">{}</text>',
                f"{x + bar_width / 2:.1f}",
                f"{y - 3:.1f}",
                _number(totals[index]) if totals[index] else "",
                f"{x + bar_width / 2:.1f}",
                top + plot_height + 16,
                category,
            )
        )
    legend_y = height - 8
    legend_x = left
    for name, colour, _ in series:
        shapes.append(
            format_html(
                '<rect x="{}" y="{}" width="12" height="12" fill="{}"/>'
                '<text x="{}" y="{}" class="chart-label">{}</text>',
                legend_x,
                legend_y - 11,
                colour,
                legend_x + 16,
                legend_y,
                name,
            )
        )
        legend_x += 16 + 14 * len(name) + 18
    return format_html(
        '<svg class="chart" role="img" aria-label="{}" width="{}" height="{}" viewBox="0 0 {} {}" '
        'xmlns="http://www.w3.org/2000/svg"><title>{}</title>{}</svg>',
        title,
        width,
        height,
        width,
        height,
        title,
        mark_safe("".join(str(shape) for shape in shapes)),  # from format_html
    )


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


@register.simple_tag
def daily_outcomes_chart(daily: Sequence[dict], statuses: Sequence[tuple[str, str]]) -> SafeString:
    """Stacked columns per day of `statistics_daily` rows; `statuses` are (value, label) pairs."""
    return stacked_bar_chart(
        [row["day"].strftime("%m/%d") for row in daily],
        [(label, STATUS_COLOURS.get(value, "#888"), [row[value] for row in daily]) for value, label in statuses],
        title="일별 처리 결과",
    )


@register.simple_tag
def bar_chart(rows: Sequence[dict], label_key: str, value_key: str, title: str, unit: str = "", label_filter=""):
    """Horizontal bars of `rows[label_key]` against `rows[value_key]`; `label_filter` names a label filter of this
    library (`violation_kind_label`, `source_kind_label`) to apply to the labels."""
    labeller = {"violation_kind_label": violation_kind_label, "source_kind_label": source_kind_label}.get(
        label_filter, str
    )
    items = [(labeller(row[label_key]), row[value_key] or 0) for row in rows]
    return horizontal_bar_chart(items, title=title, unit=unit)


@register.simple_tag
def stage_chart(stage_ms: dict) -> SafeString:
    """The run's stage timings (ms) as bars, the total left out (it is the sum)."""
    items = [(name, value) for name, value in (stage_ms or {}).items() if name != "total"]
    return horizontal_bar_chart(items, title="단계별 소요", unit="ms", colour="#79aec8")


@register.simple_tag
def status_badges(statuses) -> SafeString:
    """Coloured legend chips for (value, label) status pairs."""
    return format_html_join(
        " ",
        '<span class="status-chip" style="background:{}">{}</span>',
        ((STATUS_COLOURS.get(value, "#888"), label) for value, label in statuses),
    )
