"""A cheap bound for the one-edit look-ups of brands and vendor names (symmetric-deletion indexes): a word with two
characters that no name holds is more than one edit from every name, since each of them must be substituted or
deleted. Numbers, codes and words in other syllables are settled by one ``str.translate`` instead of a dictionary
probe per deletion key."""

from collections.abc import Iterable


class Alphabet:
    """The characters of a set of names."""

    __slots__ = ("_without_names_characters",)

    def __init__(self, names: Iterable[str]):
        self._without_names_characters = str.maketrans("", "", "".join(set("".join(names))))

    def is_beyond_one_edit(self, word: str) -> bool:
        """Whether ``word`` holds two characters (or more) that no name holds: then no name is one edit from it."""
        return len(word.translate(self._without_names_characters)) >= 2
