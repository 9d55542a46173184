"""Person-name knowledge for resolution: nicknames, initials, handles, "Last, First", and the
name differences that are identity-bearing (Sam/Samir, Dan/Dani) rather than typos.

Pure functions over normalised names (see :func:`knotwork.resolution.normalize.normalize_name`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import DamerauLevenshtein, JaroWinkler

from knotwork.resolution.normalize import normalize_name, strip_accents

# Each group: the formal given name first, then its common short forms. A short form may sit in
# several groups (Sam: Samuel, Samantha); two given names are compatible when a group holds both.
NICKNAME_GROUPS: tuple[tuple[str, ...], ...] = (
    ("robert", "bob", "bobby", "rob", "robbie", "bert"),
    ("margaret", "maggie", "meg", "peggy", "marge", "greta", "margo"),
    ("william", "bill", "billy", "will", "willy", "liam"),
    ("richard", "rick", "ricky", "dick", "rich", "richie"),
    ("james", "jim", "jimmy", "jamie"),
    ("john", "jack", "johnny", "jon"),
    ("jonathan", "jon", "jonny", "nathan"),
    ("elizabeth", "liz", "lizzie", "beth", "betty", "eliza", "libby"),
    ("katherine", "kate", "katie", "kathy", "kat", "kathryn", "catherine", "cathy", "kay"),
    ("michael", "mike", "mikey", "mick", "mickey"),
    ("thomas", "tom", "tommy"),
    ("joseph", "joe", "joey"),
    ("christopher", "chris", "kit"),
    ("christine", "chris", "chrissy", "christina", "tina"),
    ("daniel", "dan", "danny"),
    ("danielle", "dani", "daniela", "daniella"),
    ("samuel", "sam", "sammy"),
    ("samantha", "sam", "sammy"),
    ("alexander", "alex", "al", "sasha", "xander"),
    ("alexandra", "alex", "sasha", "lexi"),
    ("andrew", "andy", "drew"),
    ("anthony", "tony"),
    ("benjamin", "ben", "benny"),
    ("charles", "charlie", "chuck", "chas"),
    ("charlotte", "charlie", "lottie"),
    ("david", "dave", "davey"),
    ("edward", "ed", "eddie", "ted", "ned"),
    ("frederick", "fred", "freddie"),
    ("gregory", "greg"),
    ("henry", "hank", "harry"),
    ("joshua", "josh"),
    ("kenneth", "ken", "kenny"),
    ("lawrence", "larry"),
    ("matthew", "matt"),
    ("nicholas", "nick", "nicky"),
    ("patrick", "pat", "paddy"),
    ("patricia", "pat", "patty", "trish", "tricia"),
    ("peter", "pete"),
    ("philip", "phil", "phillip"),
    ("raymond", "ray"),
    ("ronald", "ron", "ronnie"),
    ("stephen", "steve", "steven", "stevie"),
    ("timothy", "tim", "timmy"),
    ("victoria", "vicky", "tori"),
    ("jennifer", "jen", "jenny"),
    ("jessica", "jess", "jessie"),
    ("rebecca", "becky", "becca"),
    ("susan", "sue", "susie", "suzanne"),
    ("deborah", "deb", "debbie"),
    ("barbara", "barb", "barbie"),
    ("abigail", "abby", "gail"),
    ("nathaniel", "nate", "nat"),
    ("nathan", "nate"),
    ("zachary", "zach", "zack"),
    ("gabriel", "gabe"),
    ("isabella", "bella", "izzy", "isabel"),
    ("olivia", "liv"),
    ("theodore", "theo", "ted", "teddy"),
    ("vincent", "vince"),
    ("douglas", "doug"),
    ("jeffrey", "jeff", "geoffrey"),
    ("gerald", "gerry", "jerry"),
    ("jacob", "jake"),
    ("eugene", "gene"),
    ("leonard", "len", "lenny", "leo"),
    ("donald", "don", "donny"),
    ("albert", "al", "bert"),
    ("mohammed", "mohamed", "muhammad", "mo"),
    ("priyanka", "priya"),
    ("francis", "frank", "fran"),
    ("frances", "fran", "frankie"),
    ("cynthia", "cindy"),
    ("amanda", "mandy"),
    ("emily", "em", "emmy"),
    ("eleanor", "ellie", "nora"),
    ("ashley", "ash"),
    ("kimberly", "kim"),
    ("melissa", "mel", "missy"),
    ("natalie", "nat", "natty"),
    ("pamela", "pam"),
    ("sandra", "sandy"),
    ("valerie", "val"),
    ("walter", "walt", "wally"),
    ("harold", "harry", "hal"),
    ("terence", "terry"),
    ("teresa", "terry", "tess", "tessa"),
    ("jose", "pepe"),
    ("rebecca", "becky", "becca", "becks"),
    ("alexandra", "alex", "sasha", "sandra", "lexi", "sandy"),
    ("alexander", "alex", "sasha", "xander", "sandy", "lex"),
    ("isabel", "izzy", "bella", "isa", "belle"),
    ("isabella", "izzy", "bella", "isa"),
    ("christopher", "chris", "kit", "topher"),
    ("christina", "chris", "tina", "chrissy"),
    ("daniel", "dan", "danny"),
    ("nicholas", "nick", "nicky"),
    ("anthony", "tony"),
    ("joseph", "joe", "joey"),
    ("benjamin", "ben", "benji", "benny"),
    ("samuel", "sam", "sammy"),
    ("samantha", "sam", "sammy"),
    ("jennifer", "jen", "jenny"),
    ("jessica", "jess", "jessie"),
    ("patricia", "pat", "patty", "trish"),
    ("patrick", "pat", "paddy"),
    ("victoria", "vicky", "tori"),
    ("stephanie", "steph"),
    ("stephen", "steve", "stevie"),
    ("steven", "steve", "stevie"),
    ("edward", "ed", "eddie", "ted", "ned"),
    ("andrew", "andy", "drew"),
    ("matthew", "matt", "matty"),
    ("timothy", "tim", "timmy"),
    ("gregory", "greg"),
    ("jacob", "jake"),
    ("zachary", "zach", "zack"),
    ("abigail", "abby", "gail"),
    ("deborah", "deb", "debbie"),
    ("susan", "sue", "susie"),
    ("elena", "lena"),
    ("eleanor", "ellie", "nora", "elle"),
    ("natalia", "natasha", "tasha", "nat"),
    ("natalie", "nat"),
    ("dmitri", "dima"),
    ("mikhail", "misha"),
    ("yekaterina", "katya"),
    ("francesca", "fran", "frankie"),
    ("francisco", "paco", "pancho"),
    ("giuseppe", "beppe"),
    ("alejandro", "alex", "alejo"),
    ("guillermo", "memo"),
    ("frederick", "fred", "freddie"),
    ("theodore", "theo", "ted", "teddy"),
    ("oliver", "ollie"),
    ("josephine", "jo", "josie"),
    ("charlotte", "charlie", "lottie"),
    ("charles", "charlie", "chuck"),
)

_GROUPS_OF: dict[str, frozenset[int]] = {}
for _i, _group in enumerate(NICKNAME_GROUPS):
    for _name in _group:
        _GROUPS_OF[_name] = _GROUPS_OF.get(_name, frozenset()) | {_i}

_HANDLE_SPLIT = re.compile(r"[._\-]+")


def formal_names(given: str) -> list[str]:
    """The formal given names a (possibly short) given name stands for, itself included."""
    groups = _GROUPS_OF.get(given, frozenset())
    return sorted({given, *(NICKNAME_GROUPS[g][0] for g in groups)})


def nickname_linked(a: str, b: str) -> bool:
    return bool(_GROUPS_OF.get(a, frozenset()) & _GROUPS_OF.get(b, frozenset()))


@dataclass(frozen=True, slots=True)
class PersonName:
    tokens: tuple[str, ...]  # normalised, in given-name-first order
    handle: str | None = None  # "@msmith" / "m.smith" as written in chat: "msmith"

    @property
    def given(self) -> str:
        return self.tokens[0] if self.tokens else ""

    @property
    def surname(self) -> str:
        return self.tokens[-1] if len(self.tokens) >= 2 else ""


def _is_initial(token: str) -> bool:
    return len(token) == 1


@lru_cache(maxsize=65536)
def parse_person(text: str) -> PersonName:
    """'Last, First' is reordered; '@m.smith' / 'maria_smith' become a handle plus tokens."""
    raw = strip_accents(text).strip()
    handle: str | None = None
    if raw.startswith("@") or (" " not in raw and _HANDLE_SPLIT.search(raw.strip("."))
                                and raw == raw.lower()):
        handle_text = raw.lstrip("@").lower()
        handle = re.sub(r"[^a-z0-9]", "", handle_text)
        parts = [p for p in _HANDLE_SPLIT.split(handle_text) if p]
        tokens = tuple(re.sub(r"[^a-z0-9]", "", p) for p in parts) if len(parts) >= 2 else ()
        return PersonName(tuple(t for t in tokens if t), handle or None)
    if raw.count(",") == 1:
        last, first = (s.strip() for s in raw.split(","))
        if last and first and " " not in last.strip():
            raw = f"{first} {last}"
    key = normalize_name(raw.replace("'", "").replace("\u2019", "")).replace(".", " ")
    tokens = tuple(t for t in key.replace("'", "").replace("-", " ").split() if t)
    return PersonName(tokens)


def handle_forms(name: PersonName) -> set[str]:
    """Chat handles a person with this name commonly has (msmith, mariasmith, maria, marias)."""
    if len(name.tokens) < 2 or _is_initial(name.given):
        return set()
    g, s = name.given, name.surname
    return {g[0] + s, g + s, g + s[0], s + g[0], g, s + g}


# endings that turn one given name into another (Sam/Samir, Dan/Dani, Paul/Paula, Maria/Mario)
_NAME_ENDINGS = frozenset({"", "a", "e", "i", "o", "y", "ie", "ir", "el", "le", "ne", "na", "ra",
                           "ia", "in", "ina", "ine", "an", "en", "on", "n", "er", "elle", "ella",
                           "ette", "ey", "ah", "ta", "us", "ius", "ica", "ic", "lle"})
UNCERTAIN = 0.6  # a difference that may be a typo or another person: context must decide


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


# a doubled letter written once ("Isabelle"/"Isabele") is a typo in a name this long; in a
# shorter one the spelling is often the name (Ana/Anna)
MIN_DOUBLED_LETTER_TYPO = 5


def doubled_letter(a: str, b: str) -> bool:
    """One name is the other with one letter doubled or undoubled (Emanuel/Emmanuel)."""
    x, y = sorted((a, b), key=len)
    if len(y) != len(x) + 1:
        return False
    return any(y[:i] + y[i + 1:] == x and y[i] == y[i - 1] for i in range(1, len(y)))


def given_similarity(a: str, b: str) -> float | None:
    """Compatibility of two given names; ``None`` when they name different people.

    Identity-bearing (``None``): the same stem with two name endings (Sam/Samir, Dan/Dani,
    Maria/Mario, Ana/Anna, Alexander/Alexandra) unless a nickname group links them, or more
    than two edits apart. A transposition, or one edit in a long name, is a typo. Anything
    else (Yuri/Yuki, Tylet/Tyler) is :data:`UNCERTAIN`: only other evidence can merge it.
    """
    if a == b:
        return 1.0
    if not a or not b:
        return 0.85
    if _is_initial(a) or _is_initial(b):
        return 0.92 if a[0] == b[0] else None
    if nickname_linked(a, b):
        return 0.95
    edits = DamerauLevenshtein.distance(a, b)
    if edits == 1 and min(len(a), len(b)) >= MIN_DOUBLED_LETTER_TYPO and a[-1] == b[-1] \
            and doubled_letter(a[:-1], b[:-1]):  # one letter of a pair left out, inside the name
        return max(0.88, JaroWinkler.similarity(a, b))
    stem = _common_prefix(a, b)
    ra, rb = a[stem:], b[stem:]
    if stem >= 2 and ra in _NAME_ENDINGS and rb in _NAME_ENDINGS and (
            not ra or not rb or len(ra) == len(rb) == 1):
        return None  # Gabriel/Gabriela, Maria/Mario: a name ending, not a typo
    if edits == 1 and min(len(a), len(b)) >= 7:
        return max(0.88, JaroWinkler.similarity(a, b))  # Jonathon/Jonathan
    stem = _common_prefix(a, b)
    if stem >= 2 and a[stem:] in _NAME_ENDINGS and b[stem:] in _NAME_ENDINGS:
        return None
    if edits > 2:
        return None
    transposed = edits == 1 and sorted(a) == sorted(b)
    if transposed or (edits == 1 and min(len(a), len(b)) >= 6):
        return max(0.88, JaroWinkler.similarity(a, b))
    return UNCERTAIN


def surname_similarity(a: str, b: str) -> float:
    """One edit (Smith/Smyth, O'Neil/O'Neill) is a typo; more is mostly another family."""
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    jw = JaroWinkler.similarity(a, b)
    edits = DamerauLevenshtein.distance(a, b)
    if edits <= 1 and min(len(a), len(b)) >= 4:
        return max(jw, 0.9)
    if edits == 2 and min(len(a), len(b)) >= 7:
        return jw
    return 0.5 * jw


def person_similarity(a: PersonName, b: PersonName) -> float:
    """0..1; a name pair with an identity-bearing difference scores at most 0.5."""
    if a.handle and b.tokens:
        if a.tokens and len(b.tokens) >= 2:
            return person_similarity(PersonName(a.tokens), b)
        return 0.96 if a.handle in handle_forms(b) else 0.3
    if b.handle and a.tokens:
        return person_similarity(b, a)
    if a.handle and b.handle:
        return 1.0 if a.handle == b.handle else 0.3
    if not a.tokens or not b.tokens:
        return 0.0
    if len(a.tokens) == 1 or len(b.tokens) == 1:
        lone, full = (a, b) if len(a.tokens) == 1 else (b, a)
        token = lone.tokens[0]
        if len(full.tokens) == 1:
            g = given_similarity(token, full.tokens[0])
            return 0.5 if g is None else g
        if token == full.surname:
            return 0.75
        g = given_similarity(token, full.given)
        if g is None or _is_initial(token):
            return 0.5 if g is None else 0.3
        return 0.9 * g
    g = given_similarity(a.given, b.given)
    s = surname_similarity(a.surname, b.surname)
    if len(a.tokens) == 2 and a.tokens[0] == b.surname and a.tokens[1] == b.given:
        return 0.95  # "Smith John": surname first, no comma
    if a.tokens != b.tokens and sorted(a.tokens) == sorted(b.tokens):
        return 0.95  # "Lee Min-seo" / "Min-seo Lee": family name first or last
    if g is None:
        return min(0.5, 0.5 * s)
    if g == UNCERTAIN:
        return min(0.7, 0.4 * g + 0.6 * s)
    middle_penalty = 0.0
    if len(a.tokens) > 2 and len(b.tokens) > 2:
        ma, mb = a.tokens[1], b.tokens[1]
        if ma[0] != mb[0]:
            middle_penalty = 0.1
    return max(0.0, 0.4 * g + 0.6 * s - middle_penalty) if s < 0.999 else \
        max(0.0, min(1.0, 0.5 * g + 0.5) - middle_penalty)


def token_similarity(a: str, b: str, cutoff: float = 0.85) -> float:
    """Symmetric token alignment: each token's best word similarity in the other name (below
    ``cutoff`` counts 0; more than one edit is another word), averaged over all tokens. 'payments team' / 'payments service': 0.5."""
    ta, tb = a.split(), b.split()
    if not ta or not tb:
        return 0.0

    def best(token: str, others: list[str]) -> float:
        score = max(surname_similarity(token, o) for o in others)
        return score if score >= cutoff else 0.0

    total = sum(best(t, tb) for t in ta) + sum(best(t, ta) for t in tb)
    return total / (len(ta) + len(tb))


def generic_similarity(a: str, b: str) -> float:
    """Non-person names: whole-string Jaro-Winkler, capped by token alignment."""
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    return min(JaroWinkler.similarity(a, b), token_similarity(a, b))
