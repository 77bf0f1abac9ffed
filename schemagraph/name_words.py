"""The words of a schema name: `StuID` → stu, id; `cars_data` → cars, data; `HomeTeam` →
home, team; `FTHG` stays one word.

One module for every signal that reads names as words (the table documents the index embeds,
the template synthesizer's phrasing, the readable names of a Spider catalog, the prompt's
column vocabulary), so that they split names the same way and a change is made once. The
splits differ where their readers need it, and each is named:

- `spaced_words` (table documents): a name as lower-case words joined by spaces; breaks at `_`,
  `-`, white space and camelCase boundaries, an acronym kept whole (`HTMLParser` → "html
  parser"), a digit run stays with the letters before it (`Address2Line` → "address2 line");
- `name_parts` (Spider's readable names, the synthesizer's words): the parts of a name as
  written (case kept): camelCase and acronyms split, digits apart (`HomeTeam2` → Home, Team,
  2); `other_letters` keeps runs of letters outside A-Z (`Größe`, `名前`) as parts too;
- `plain_words` (the prompt's columns): runs of ASCII letters and digits, split at a lower-case
  letter followed by an upper-case one only (`FTHG2` and `HTMLParser` stay whole).

The hashing embedder (`providers.hashing_embedder.tokenize`) splits at the same camelCase
boundaries as `spaced_words`; it keeps its own pattern because providers import no other
package of the project.
"""

from __future__ import annotations

import re

#: where a camelCase name breaks: before an upper-case letter that follows a lower-case letter
#: or a digit, and before the last capital of an acronym followed by a lower-case letter
CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_PART = r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+"
_PARTS = re.compile(_PART)
_PARTS_ANY_LETTERS = re.compile(_PART + r"|[^\W\d_]+")
_PLAIN = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])")


def spaced_words(name: str) -> str:
    """`StuID` → "stu id", `cars_data` → "cars data": a name as words, lower case."""
    spaced = CAMEL_BOUNDARY.sub(" ", name).replace("_", " ").replace("-", " ")
    return " ".join(spaced.lower().split())


def name_parts(name: str, *, other_letters: bool = False) -> list[str]:
    """The parts of `name` in order, case kept: `HomeTeam2` → ["Home", "Team", "2"],
    `FTHGames` → ["FTH", "Games"]. Characters other than ASCII letters and digits separate
    parts; with `other_letters`, runs of other letters are parts too."""
    return (_PARTS_ANY_LETTERS if other_letters else _PARTS).findall(name)


def plain_words(text: str) -> list[str]:
    """Runs of ASCII letters and digits, split where a lower-case letter meets an upper-case
    one (`HomeTeam` → ["Home", "Team"], `FTHG2` → ["FTHG2"]); empty strings at the ends kept,
    as `re.split` gives them."""
    return _PLAIN.split(text)
