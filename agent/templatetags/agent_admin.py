"""Presentation helpers for the staff pages of the agent: highlighted violations and masks, sentence diffs between
draft rounds, labels, and charts drawn as inline SVG on the server (no JavaScript, nothing from a CDN)."""

import difflib
import json
import re
from collections.abc import Sequence

from django import template
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from agent import selectors
from agent.knowledge.masking import BRAND_MASK, MASK
from agent.verification import GROUP_COLOURS, kind_group, kind_label
from conversations.models import Question, Room
from conversations.selectors import question_reason_label
from delivery.models import SendJob
from vendors.resolution import REASON_LABELS as RESOLUTION_REASON_LABELS

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
# The answer pipeline's stages (AnswerRun.stage_ms keys).
STAGE_LABELS = {
    "rewrite": "검색어 재작성",
    "tool_loop": "도구 호출과 초안",
    "forced_retrieval": "강제 검색",
    "finalize_if_empty": "빈 답변 마무리",
    "verification": "검증",
    "total": "전체",
}
# How the FAQ search found a candidate, and how sure it is (agent.knowledge.faq).
FAQ_STAGE_LABELS = {
    "dense": "밀집 검색",
    "passage": "답변 포함 밀집 검색",
    "relaxed": "완화 재검색",
    "sparse": "희소 검색",
    "keyword": "키워드 검색",
    "named": "드문 낱말 검색",
}
CONFIDENCE_LABELS = {"high": "높음", "medium": "중간", "low": "낮음"}
# Reasons the agent writes as codes (a question in a blocked room, attempts used up), read by staff in words.
_ATTEMPTS_EXHAUSTED = re.compile(
    r"(?P<lease>lease lapsed, )?attempts exhausted(?: \((?P<count>\d+)\)|: (?P<error>\w+))?"
)
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|\n+")
_COUNT_LABELS = (("texts", "글"), ("photos", "사진"), ("files", "파일"))


# --- labels ------------------------------------------------------------------------------------------------


@register.filter
def violation_kind_label(kind: str) -> str:
    return kind_label(kind)


@register.simple_tag
def staff_counts() -> dict[str, int]:
    return selectors.staff_counts()


@register.filter
def faq_stage_label(stage: str) -> str:
    return FAQ_STAGE_LABELS.get(stage, stage or "-")


@register.filter
def confidence_label(level: str) -> str:
    return CONFIDENCE_LABELS.get(level, level or "-")


@register.filter
def stage_label(stage: str) -> str:
    return STAGE_LABELS.get(stage, stage)


@register.filter
def resolution_reason_label(reason: str) -> str:
    return RESOLUTION_REASON_LABELS.get(reason, reason or "-")


@register.filter
def reason_label(reason: str) -> str:
    """A stored outcome reason in words: a blocked room's (`room_blocked:id_typo`) as the conversations app
    words it, the agent's "attempts exhausted" ones here; any other reason (already Korean) as it is."""
    if not reason:
        return ""
    if match := _ATTEMPTS_EXHAUSTED.fullmatch(reason):
        words = "작업자가 멈춘 뒤 " if match["lease"] else ""
        words += f"시도 {match['count']}회를 모두 썼습니다" if match["count"] else "시도를 모두 썼습니다"
        return words + (f" (오류 {match['error']})" if match["error"] else "")
    return question_reason_label(reason)


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
    """`mapping[key]`, also for an id given as a number to a mapping keyed by text (audit rows name ids as text)."""
    if key in mapping:
        return mapping[key]
    return mapping.get(str(key))


@register.filter
def counts_text(counts: dict) -> str:
    """A send job's `{"texts", "photos", "files"}` counts in words, or "-" before the device reported any."""
    if not counts:
        return "-"
    return " · ".join(f"{label} {counts.get(key, 0)}" for key, label in _COUNT_LABELS)


_SEND_EVENT_FIELDS = (
    ("attempt", "시도"),
    ("note", "메모"),
    ("reason", "사유"),
    ("resolution", "처리"),
    ("previous_reason", "이전 사유"),
)


@register.simple_tag
def send_event_summary(event, device_names: dict) -> SafeString:
    """A send job audit row in words: the device by name, the counts in words, notes and reasons as written."""
    data = event.data or {}
    parts = []
    if data.get("device"):
        device = str(data["device"])
        parts.append(("기기", device_names.get(device, device)))
    for key, label in _SEND_EVENT_FIELDS:
        if data.get(key) not in (None, ""):
            parts.append((label, data[key]))
    for key, label in (("expected", "보낼 것"), ("observed", "도착 확인"), ("resent", "재발송")):
        if isinstance(data.get(key), dict):
            parts.append((label, counts_text(data[key])))
    return format_html_join(" · ", "{}: {}", parts) if parts else mark_safe("")


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


def sentences(text: str) -> list[str]:
    """The text cut after each sentence end (., !, ?) and at line breaks; blank pieces dropped."""
    return [piece.strip() for piece in _SENTENCE_END.split(text or "") if piece.strip()]


@register.simple_tag
def sentence_diff(before: str, after: str) -> SafeString:
    """A sentence-level diff: each removed sentence struck through whole, each added one underlined, unchanged
    sentences as they were — staff read which sentence changed, not which characters."""
    old, new = sentences(before), sentences(after)
    parts = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            parts.extend(format_html('<span class="diff-same">{}</span>', sentence) for sentence in old[i1:i2])
            continue
        parts.extend(format_html('<del class="diff-del">{}</del>', sentence) for sentence in old[i1:i2])
        parts.extend(format_html('<ins class="diff-ins">{}</ins>', sentence) for sentence in new[j1:j2])
    return mark_safe(" ".join(str(part) for part in parts))  # each part from format_html


# --- charts (inline SVG) -----------------------------------------------------------------------------------


def horizontal_bar_chart(
    items: Sequence[tuple[str, float]],
    *,
    title: str,
    unit: str = "",
    colour: str = "#417690",
    width: int = 640,
    links: Sequence[str] | None = None,
) -> SafeString:
    """One bar per (label, value), longest bar = largest value, the value written after each bar, a value axis
    below; with `links` (one URL per item) each bar opens what it counts."""
    if not items:
        return format_html('<p class="chart-empty">{}: 자료 없음</p>', title)
    label_width, row_height, value_room, axis_height = 220, 24, 90, 22
    bar_room = width - label_width - value_room
    peak = max(value for _, value in items) or 1
    plot_height = row_height * len(items) + 8
    height = plot_height + axis_height
    rows = [_value_axis_horizontal(label_width, bar_room, plot_height, peak, unit)]
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
        if links and links[index]:
            rows[-1] = format_html('<a href="{}" class="chart-link">{}</a>', links[index], rows[-1])
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


def _value_axis_horizontal(left: int, length: int, y: int, peak: float, unit: str) -> SafeString:
    """The value axis under horizontal bars: a line with 0, half and the peak marked."""
    ticks = [
        format_html(
            '<line x1="{x}" y1="{y}" x2="{x}" y2="{y2}" class="chart-axis"/>'
            '<text x="{x}" y="{ty}" text-anchor="middle" class="chart-value">{label}</text>',
            x=f"{left + length * fraction:.1f}",
            y=y,
            y2=y + 4,
            ty=y + 16,
            label=_number(peak * fraction) + (unit if fraction == 1 else ""),
        )
        for fraction in (0, 0.5, 1)
    ]
    return format_html(
        '<line x1="{}" y1="{}" x2="{}" y2="{}" class="chart-axis"/>{}',
        left,
        y,
        left + length,
        y,
        mark_safe("".join(str(tick) for tick in ticks)),  # from format_html
    )


def stacked_bar_chart(
    categories: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[float]]],
    *,
    title: str,
    width: int = 720,
    height: int = 240,
    links: Sequence[dict[str, str]] | None = None,
    y_label: str = "",
) -> SafeString:
    """Vertical columns, one per category, stacked by series `(name, colour, values per category)`, a legend
    below, the column total above each column and a value axis (0, half, peak) on the left. With `links` (per
    category, a URL per series name) each segment opens the questions it counts."""
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
            '<line x1="{}" y1="{}" x2="{}" y2="{}" class="chart-axis"/>'
            '<text x="4" y="{}" class="chart-label">{}</text>',
            left,
            top + plot_height,
            width,
            top + plot_height,
            left,
            top,
            left,
            top + plot_height,
            top - 6,
            y_label,
        )
    ]
    for fraction in (0, 0.5, 1):
        tick_y = top + plot_height * (1 - fraction)
        shapes.append(
            format_html(
                '<line x1="{}" y1="{y}" x2="{}" y2="{y}" class="chart-axis"/>'
                '<text x="{}" y="{}" text-anchor="end" class="chart-value">{}</text>',
                left - 3,
                left,
                left - 5,
                f"{tick_y + 4:.1f}",
                _number(peak * fraction),
                y=f"{tick_y:.1f}",
            )
        )
    for index, category in enumerate(categories):
        x = left + slot * index + (slot - bar_width) / 2
        y = top + plot_height
        for name, colour, values in series:
            value = values[index]
            if not value:
                continue
            segment = plot_height * value / peak
            y -= segment
            segment_shape = format_html(
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
            link = links[index].get(name) if links else None
            if link:
                segment_shape = format_html('<a href="{}" class="chart-link">{}</a>', link, segment_shape)
            shapes.append(segment_shape)
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
    """Stacked columns per day of `statistics_daily` rows; `statuses` are (value, label) pairs. A row's `links`
    (status value → URL), when present, make each segment a link to its questions."""
    labels = dict(statuses)
    links = [{labels[value]: url for value, url in row.get("links", {}).items()} for row in daily]
    return stacked_bar_chart(
        [row["day"].strftime("%m/%d") for row in daily],
        [(label, STATUS_COLOURS.get(value, "#888"), [row[value] for row in daily]) for value, label in statuses],
        title="일별 처리 결과",
        links=links if any(links) else None,
        y_label="질문 수",
    )


@register.simple_tag
def bar_chart(rows: Sequence[dict], label_key: str, value_key: str, title: str, unit: str = "", label_filter=""):
    """Horizontal bars of `rows[label_key]` against `rows[value_key]`; `label_filter` names a label filter of this
    library (`violation_kind_label`, `source_kind_label`) to apply to the labels. A row's `link`, when present,
    makes its bar a link."""
    labeller = {"violation_kind_label": violation_kind_label, "source_kind_label": source_kind_label}.get(
        label_filter, str
    )
    items = [(labeller(row[label_key]), row[value_key] or 0) for row in rows]
    links = [row.get("link", "") for row in rows]
    return horizontal_bar_chart(items, title=title, unit=unit, links=links if any(links) else None)


@register.simple_tag
def stage_chart(stage_ms: dict) -> SafeString:
    """The run's stage timings (ms) as bars, the total left out (it is the sum)."""
    items = [(stage_label(name), value) for name, value in (stage_ms or {}).items() if name != "total"]
    return horizontal_bar_chart(items, title="단계별 소요", unit="ms", colour="#79aec8")


@register.filter
def percent(rate) -> str:
    """A fraction as a percentage to one decimal, "-" when there is nothing to divide by."""
    return "-" if rate is None else f"{rate * 100:.1f}%"


@register.simple_tag
def status_badges(statuses) -> SafeString:
    """Coloured legend chips for (value, label) status pairs."""
    return format_html_join(
        " ",
        '<span class="status-chip" style="background:{}">{}</span>',
        ((STATUS_COLOURS.get(value, "#888"), label) for value, label in statuses),
    )
