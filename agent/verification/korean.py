"""Korean text helpers: character classes, folding, particles. Pure Python, shared by the verification modules
and the knowledge layer (the records search among them)."""


def is_hangul_syllable(char: str) -> bool:
    return "가" <= char <= "힣"


def is_latin_or_digit(char: str) -> bool:
    return char.isascii() and char.isalnum()


# Full-width ASCII to half-width lower case, one character for one character.
_FULL_WIDTH_TABLE = {code: chr(code - 0xFEE0).lower() for code in range(0xFF01, 0xFF5F)}
# U+FF00–U+FF7F encode in UTF-8 as EF BC xx or EF BD xx; Hangul never starts with EF.
_FULL_WIDTH_LEAD_BYTE = b"\xef"


def fold(text: str) -> str:
    """Latin lower case and full-width ASCII as half-width, without changing the text's length, so that
    an offset in folded text is the same offset in the original text.

    Lower-casing the UTF-8 bytes touches ASCII letters only and is many times faster than
    ``str.translate`` on Korean text; the translate path runs only when a character from U+F000 up
    (full-width forms among them) is present — a one-byte search, where a two-byte one would keep
    stumbling on Hangul's continuation bytes.
    """
    encoded = text.encode("utf-8", "surrogatepass")
    lowered = encoded.lower().decode("utf-8", "surrogatepass")
    if _FULL_WIDTH_LEAD_BYTE in encoded:
        return lowered.translate(_FULL_WIDTH_TABLE)
    return lowered


# Particles and copula endings that attach to a noun without a space. Compound forms are listed whole
# (에서는, 으로도) so that one strip removes them.
PARTICLES = frozenset(
    (
        "은",
        "는",
        "이",
        "가",
        "을",
        "를",
        "의",
        "에",
        "도",
        "만",
        "와",
        "과",
        "로",
        "랑",
        "께",
        "나",
        "요",
        "야",
        "고",
        "며",
        "라",
        "에서",
        "에게",
        "한테",
        "께서",
        "으로",
        "로서",
        "로써",
        "이랑",
        "하고",
        "까지",
        "부터",
        "조차",
        "마저",
        "밖에",
        "처럼",
        "보다",
        "이나",
        "이든",
        "라도",
        "이며",
        "이고",
        "이요",
        "이야",
        "이다",
        "인데",
        "이라",
        "라는",
        "라고",
        "예요",
        "이면",
        "하며",
        "에선",
        "에겐",
        "으론",
        "로는",
        "로도",
        "에는",
        "에도",
        "와는",
        "과는",
        "와의",
        "과의",
        "에의",
        "만의",
        "만은",
        "만을",
        "만이",
        "도는",
        "이란",
        "란",
        "께는",
        "에서는",
        "에서도",
        "에서의",
        "에게는",
        "에게도",
        "에게서",
        "한테서",
        "으로는",
        "으로도",
        "으로서",
        "으로써",
        "으로의",
        "까지는",
        "까지도",
        "부터는",
        "부터도",
        "께서는",
        "께서도",
        "이라는",
        "이라고",
        "이라도",
        "입니다",
        "이에요",
        "이예요",
        "이었고",
        "이었던",
        "처럼은",
        "보다는",
        "이지만",
        "이므로",
        "이니까",
    )
)
MAX_PARTICLE_LENGTH = max(map(len, PARTICLES))

# Words that may follow a count or a unit in the same word, for both parsers ("3만 개씩", "100박스씩", "30롤짜리"):
# the amount parser's count units and the quantity parser's units each add their own few.
UNIT_FOLLOWERS = ("씩", "당", "짜리", "이상", "이하", "미만", "초과", "정도", "가량", "쯤")


def is_particle(text: str) -> bool:
    return text in PARTICLES


def strip_particle_variants(word: str) -> list[str]:
    """The word itself, then the word without each particle that ends it (shortest particle first).

    A stem of at least one character always remains.
    """
    variants = [word]
    for length in range(1, min(MAX_PARTICLE_LENGTH, len(word) - 1) + 1):
        if word[-length:] in PARTICLES:
            variants.append(word[:-length])
    return variants


def hangul_run_end(text: str, start: int) -> int:
    """Index just past the run of Hangul syllables that begins at ``start``."""
    end = start
    while end < len(text) and is_hangul_syllable(text[end]):
        end += 1
    return end


class EndingStripper:
    """Strips trailing endings (particles, copulas, verb endings) from a word: each time, the longest listed
    ending that leaves at least `min_stem` characters, up to `times` times (`할인은요` → `할인`).

    Each module keeps its own list, tuned against its own quality test; this is the one algorithm. Endings are
    looked up by length in sets, a handful of lookups per word instead of one `endswith` per ending — the FAQ
    reranker strips every word of 20 passages per question.
    """

    def __init__(self, endings, *, times: int = 1, min_stem: int = 2):
        by_length: dict[int, set[str]] = {}
        for ending in endings:
            by_length.setdefault(len(ending), set()).add(ending)
        self._by_length = [(length, frozenset(found)) for length, found in sorted(by_length.items(), reverse=True)]
        self._times = times
        self._min_stem = min_stem

    def __call__(self, word: str) -> str:
        for _ in range(self._times):
            longest = len(word) - self._min_stem
            ending = next(
                (length for length, found in self._by_length if length <= longest and word[-length:] in found), 0
            )
            if not ending:
                break
            word = word[:-ending]
        return word
