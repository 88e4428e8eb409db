"""Words this domain uses for one subject: a question about 물건값 is about the 대금 a record or a policy names.

Shared by the records search (a question finds the vendor's record that writes the subject another way) and the
local answerer (a statement naming the subject another way still answers).
"""

SUBJECT_SYNONYMS = (
    frozenset({"대금", "물건값", "물품대금", "결제", "지급", "정산", "돈", "입금", "송금"}),
    frozenset({"행사", "프로모션", "기획전", "특가"}),
    frozenset({"반품", "회수"}),
    frozenset({"발주", "주문"}),
    frozenset({"납품", "공급", "매입"}),  # one delivery, seen from the vendor and from us
    frozenset({"물류센터", "센터"}),
    frozenset({"업데이트", "갱신"}),
    frozenset({"본사", "당사"}),  # the vendor's word for us, and ours
)


def subject_variants(word: str) -> frozenset[str]:
    """The word and the other words this domain uses for the same subject, lower case (statements are compared
    in lower case: `POS`, `EDI`)."""
    for group in SUBJECT_SYNONYMS:
        if word in group:
            return group
    return frozenset({word.lower()})
