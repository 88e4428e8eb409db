"""The one shape every knowledge source returns, so the agent treats records, hub and FAQ alike."""

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class EvidenceItem:
    source_kind: str  # "record" | "hub" | "faq"
    reference: str  # stable id of the source object, e.g. "record:42", "faq:17", "hub:policies:chunk-ab12"
    text: str  # what the model sees (already masked)
    score: float
    workspace: str = ""  # hub workspace slug; "" for other sources
    title: str = ""
    url: str = ""  # FAQ source URL when there is one
    mask_count: int = 0  # other vendors' names replaced by [다른 벤더] in this item
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)
