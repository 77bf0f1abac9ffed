"""Schema names as the words people use: `StuID` → "student ID", `cars_data` → "cars",
`dept_store_chain_name` → "department store chain name", `LName` → "last name".

Synthetic questions are embedded and matched against real questions, so their vocabulary should
be the vocabulary of people asking about these tables. Names are split on underscores, spaces,
dashes and camelCase boundaries (keeping acronyms such as "MPG" or "ID" whole), common
abbreviations are expanded, and nouns are inflected with a small rule set (`plural`,
`singular`) that knows the irregular and uncountable nouns schema names tend to use.
"""

from __future__ import annotations

from functools import lru_cache

from schemagraph.name_words import name_parts

ABBREVIATIONS: dict[str, str] = {
    "id": "ID",
    "ids": "IDs",
    "uid": "ID",
    "num": "number",
    "nbr": "number",
    "no": "number",
    "qty": "quantity",
    "dept": "department",
    "depts": "departments",
    "amt": "amount",
    "dob": "date of birth",
    "fname": "first name",
    "lname": "last name",
    "mname": "middle name",
    "stuid": "student ID",
    "stu": "student",
    "desc": "description",
    "descr": "description",
    "addr": "address",
    "yr": "year",
    "yrs": "years",
    "avg": "average",
    "pct": "percent",
    "perc": "percentage",
    "tel": "telephone",
    "mgr": "manager",
    "emp": "employee",
    "cust": "customer",
    "prod": "product",
    "info": "information",
    "dest": "destination",
    "src": "source",
    "abbrev": "abbreviation",
    "govt": "government",
    "intl": "international",
    "natl": "national",
    "max": "maximum",
    "min": "minimum",
    "lat": "latitude",
    "lng": "longitude",
    "lon": "longitude",
    "ht": "height",
    "wt": "weight",
    "dt": "date",
    "tz": "time zone",
    "st": "street",
    "acct": "account",
    "dir": "director",
    "ref": "reference",
    "loc": "location",
    "org": "organization",
    "approx": "approximate",
    "cnt": "count",
    "cd": "code",
    "cds": "codes",
    "sgmt": "segment",
    "seg": "segment",
    "nm": "name",
    "typ": "type",
    "flg": "flag",
    "sq": "square",
    "km": "kilometers",
    "yn": "",
}
"""Lower-case abbreviations and what they stand for; "" drops the word (the `_yn` of a yes/no
flag)."""

_INITIALS = {"f": "first", "l": "last", "m": "middle"}
"""`LName`, `FName`, `MName`: a single initial before "name"."""

_GENERIC_TAILS = {"data", "list", "info", "information", "details", "detail", "records", "tbl"}
"""Words that say a table holds rows, not what the rows are: `cars_data` is about cars."""

UNCOUNTABLE = frozenset(
    {
        "staff",
        "data",
        "information",
        "equipment",
        "series",
        "species",
        "news",
        "music",
        "furniture",
        "evidence",
        "money",
        "police",
        "aircraft",
        "sheep",
        "fish",
        "deer",
        "personnel",
        "software",
        "hardware",
        "feedback",
        "research",
        "weather",
        "cast",
        "faculty",
        "headquarters",
        "chassis",
        "mail",
    }
)

_IRREGULAR = {
    "person": "people",
    "child": "children",
    "man": "men",
    "woman": "women",
    "foot": "feet",
    "tooth": "teeth",
    "mouse": "mice",
    "goose": "geese",
    "datum": "data",
    "criterion": "criteria",
    "phenomenon": "phenomena",
    "analysis": "analyses",
    "thesis": "theses",
    "crisis": "crises",
    "index": "indices",
    "matrix": "matrices",
    "vertex": "vertices",
    "alumnus": "alumni",
    "cactus": "cacti",
    "medium": "media",
}
_IRREGULAR_SINGULAR = {v: k for k, v in _IRREGULAR.items()}
_ES_SINGULAR = {
    "statuses",
    "buses",
    "campuses",
    "viruses",
    "bonuses",
    "censuses",
    "heroes",
    "potatoes",
    "tomatoes",
    "echoes",
    "vetoes",
    "aliases",
    "gases",
    "lenses",
    "canvases",
    "circuses",
}
_IES_SINGULAR_S = {"movies", "cookies", "ties", "pies", "lies", "calories", "zombies", "rookies"}
_PREPOSITIONS = {"in", "of", "for", "on", "at", "by", "to", "per", "with", "from"}
_VERB_STARTS = {"has", "have", "is", "are", "was", "does", "did", "can"}


def split_words(name: str) -> list[str]:
    """The words of a schema name, split at separators and camelCase boundaries."""
    return name_parts(name, other_letters=True)


@lru_cache(maxsize=65536)
def humanize(name: str) -> str:
    """`name` as lower-case words with abbreviations expanded and acronyms kept (ID, MPG)."""
    raw = split_words(name)
    out: list[str] = []
    i = 0
    while i < len(raw):
        word = raw[i]
        low = word.lower()
        nxt = raw[i + 1].lower() if i + 1 < len(raw) else ""
        if low in _INITIALS and nxt == "name":
            out.extend((_INITIALS[low], "name"))
            i += 2
            continue
        if low in ABBREVIATIONS:
            expansion = ABBREVIATIONS[low]
            if expansion:
                out.append(expansion)
        elif _is_acronym(word):
            out.append(word)  # an acronym: MPG, GNP, SSN
        else:
            out.append(low)
        i += 1
    text = " ".join(w for w in out if w)
    return text or name


def _is_acronym(word: str) -> bool:
    """Upper-case words of up to three letters, or without vowels, are acronyms (MPG, GNP, TV);
    longer shouted words ("GEOGRAPHIC") are just upper case."""
    if len(word) < 2 or not word.isupper() or word.isdigit():
        return False
    return len(word) <= 3 or not any(c in "AEIOU" for c in word)


def _inflect_last(phrase: str, change: str) -> str:
    """Apply `plural` or `singular` to the head noun: the word before the first preposition
    ("singer in concert" → "singers in concert") or before a trailing participle ("product
    booked" → "products booked"), else the last word."""
    words = phrase.split(" ")
    head = len(words) - 1
    for i, word in enumerate(words[1:], start=1):
        if word in _PREPOSITIONS:
            head = i - 1
            break
    if head > 0 and words[head].lower().endswith("ed"):
        head -= 1  # "products booked": the noun comes before the participle
    word = words[head]
    words[head] = _plural_word(word) if change == "plural" else _singular_word(word)
    return " ".join(words)


def plural(phrase: str) -> str:
    """The plural of a noun phrase, inflecting its head noun."""
    return _inflect_last(phrase, "plural") if phrase else phrase


def singular(phrase: str) -> str:
    """The singular of a noun phrase, inflecting its head noun."""
    return _inflect_last(phrase, "singular") if phrase else phrase


def _plural_word(word: str) -> str:
    low = word.lower()
    if not low.isalpha() or low in UNCOUNTABLE or word.isupper() or len(word) < 2:
        return word if not word.isupper() or len(word) < 2 else word + "s"
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _IRREGULAR_SINGULAR or is_plural(low):
        return word
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return word[:-1] + "ies"
    if low.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def _singular_word(word: str) -> str:
    low = word.lower()
    if not low.isalpha() or low in UNCOUNTABLE or word.isupper():
        return word
    if low in _IRREGULAR_SINGULAR:
        return _IRREGULAR_SINGULAR[low]
    if low in _ES_SINGULAR:
        return word[:-2]
    if low in _IES_SINGULAR_S:
        return word[:-1]
    if not is_plural(low):
        return word
    if low.endswith("ies") and len(low) > 4:
        return word[:-3] + "y"
    if low.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1]


def is_plural(word: str) -> bool:
    """Whether a lower-case word looks plural (ends in s but not ss, us, is)."""
    low = word.lower()
    if low in _IRREGULAR_SINGULAR:
        return True
    if low in _IRREGULAR or low in UNCOUNTABLE:
        return False
    return len(low) > 2 and low.endswith("s") and not low.endswith(("ss", "us", "is"))


@lru_cache(maxsize=16384)
def entity(table_name: str) -> tuple[str, str]:
    """(singular, plural) noun phrases for the rows of a table: `Dogs` → ("dog", "dogs"),
    `cars_data` → ("car", "cars"), `Has_Pet` → ("pet", "pets")."""
    words = humanize(table_name).split(" ")
    while len(words) > 1 and words[-1].lower() in _GENERIC_TAILS:
        words.pop()
    if words[0].lower() in _VERB_STARTS and len(words) > 1:
        words = words[1:]  # a `Has_Pet` row is a pet someone has
    phrase = " ".join(words)
    return singular(phrase), plural(phrase)


def article(phrase: str) -> str:
    """ "a" or "an" for a phrase (by its first letter; acronyms by their spelling)."""
    first = phrase.split(" ", 1)[0] if phrase else ""
    if not first:
        return "a"
    if first.isupper() and len(first) > 1:
        return "an" if first[0] in "AEFHILMNORSX" else "a"
    if first.lower().startswith(("uni", "use", "usu", "eu", "one")):
        return "a"
    if first.lower().startswith(("hour", "honest", "honor", "heir")):
        return "an"
    return "an" if first[0].lower() in "aeiou" else "a"


def with_article(phrase: str) -> str:
    return f"{article(phrase)} {phrase}"


def possessive(phrase: str) -> str:
    """ "singer's", "students'"."""
    return phrase + ("'" if phrase.endswith("s") and is_plural(phrase.split(" ")[-1]) else "'s")


def join_words(items: list[str], conjunction: str = "and") -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"
