"""Name pools for the synthetic world: real-world-like lists plus syllable-generated names.

Pools are large enough for 200k unique person names: ~260 given names and ~260 family
names from the lists, extended by syllable combinations drawn from a seeded generator.
Confusable pairs (Sam/Samir, Dan/Dani, ...) and nicknames are listed explicitly.
"""

from __future__ import annotations

import random

# fmt: off
GIVEN_F = [
    "Alice", "Amanda", "Anna", "Ayesha", "Beatriz", "Carla", "Chloe", "Claire", "Diana", "Elena",
    "Emily", "Emma", "Fatima", "Fiona", "Grace", "Hannah", "Helen", "Ingrid", "Irene", "Julia",
    "Keiko", "Laura", "Leila", "Lucy", "Maria", "Maya", "Mei", "Nadia", "Naomi", "Nina", "Olivia",
    "Priya", "Rachel", "Rosa", "Sara", "Sofia", "Tara", "Teresa", "Valentina", "Victoria", "Wendy",
    "Yuki", "Zoe", "Isabel", "Monica", "Natalie", "Sandra", "Aisha", "Amara", "Bianca", "Camila",
    "Dalia", "Eva", "Freya", "Gabriela", "Hana", "Ines", "Jasmine", "Kira", "Lena", "Lina",
    "Marta", "Noor", "Oksana", "Paula", "Rania", "Selin", "Tamar", "Ursula", "Vera", "Ximena",
    "Yara", "Zainab", "Adaeze", "Chiara", "Daria", "Esther", "Giulia", "Ivana", "Jana", "Katarina",
    "Lucia", "Mariam", "Nora", "Petra", "Rebecca", "Sakura", "Thandi", "Uma", "Wanjiru", "Ying",
]
GIVEN_M = [
    "Aaron", "Adam", "Adrian", "Ahmed", "Alan", "Andrew", "Arjun", "Ben", "Carlos", "David",
    "Diego", "Dmitri", "Edward", "Eric", "Ethan", "Felix", "Gabriel", "George", "Hugo", "Ian",
    "Ivan", "Jacob", "James", "Javier", "Kenji", "Liam", "Lucas", "Marco", "Marcus", "Mohamed",
    "Nathan", "Omar", "Oscar", "Pablo", "Peter", "Rahul", "Victor", "William", "Amir", "Bruno",
    "Chen", "Dario", "Emeka", "Farid", "Goran", "Hassan", "Idris", "Jonas", "Kofi", "Lars",
    "Mateo", "Nikolai", "Olu", "Pedro", "Quentin", "Rafael", "Stefan", "Tomas", "Umar", "Vikram",
    "Wei", "Xavier", "Yusuf", "Zoran", "Anders", "Bilal", "Cyrus", "Dev", "Elias", "Florian",
    "Hamza", "Ibrahim", "Joaquin", "Kwame", "Leon", "Mikhail", "Niko", "Orlando", "Reza", "Sven",
    "Tariq", "Viktor", "Yosef", "Andrei", "Callum", "Declan", "Emil", "Henrik", "Joel", "Kai",
]
FAMILY = [
    "Novak", "Okafor", "Lindqvist", "Watanabe", "Schmidt", "Rossi", "Garcia", "Patel", "Nguyen",
    "Kowalski", "Fischer", "Moreau", "Dubois", "Costa", "Silva", "Santos", "Ferreira", "Jensen",
    "Hansen", "Larsen", "Nilsson", "Berg", "Virtanen", "Korhonen", "Horvat", "Kovacs", "Nagy",
    "Popescu", "Ionescu", "Petrov", "Ivanova", "Sokolov", "Yilmaz", "Demir", "Haddad", "Mansour",
    "Khalil", "Mensah", "Adeyemi", "Banda", "Mwangi", "Otieno", "Tanaka", "Suzuki", "Takahashi",
    "Yamamoto", "Sato", "Park", "Choi", "Kang", "Yoon", "Sharma", "Iyer", "Reddy", "Menon",
    "Kapoor", "Chowdhury", "Rahman", "Hossain", "Tran", "Pham", "Vu", "Santiago", "Reyes",
    "Morales", "Ortega", "Castillo", "Herrera", "Medina", "Alvarez", "Romero", "Torres", "Ramirez",
    "Flores", "Rivera", "Gomez", "Sullivan", "Gallagher", "Brennan", "Walsh", "Kennedy", "Murphy",
    "Fitzgerald", "Webb", "Harper", "Fletcher", "Whitaker", "Abbott", "Baker", "Carver", "Dalton",
    "Ellison", "Fairchild", "Gregory", "Holloway", "Ingram", "Jarvis", "Keller", "Lambert",
    "Maddox", "Norris", "Osborne", "Pritchard", "Quinlan", "Rowe", "Sinclair", "Thornton",
    "Underwood", "Vance", "Winslow", "Yates", "Zimmerman", "Achebe", "Balogun", "Chukwu", "Diallo",
    "Eze", "Fofana", "Gueye", "Kamau", "Lungu", "Moyo", "Ndlovu", "Okonkwo", "Sesay", "Toure",
    "Aziz", "Bakr", "Darwish", "Farouk", "Hamdan", "Jaber", "Nasser", "Saleh", "Zaki", "Bose",
    "Chatterjee", "Desai", "Ghosh", "Joshi", "Kulkarni", "Mehta", "Nair", "Pillai", "Rao",
    "Agarwal", "Lim", "Tan", "Wong", "Ong", "Goh", "Chua", "Teo", "Lau", "Ho", "Kim", "Han",
    "Jung", "Shin", "Ito", "Kato", "Kobayashi", "Nakamura", "Ogawa", "Mori", "Hayashi", "Wagner",
    "Becker", "Hoffmann", "Koch", "Richter", "Klein", "Wolf", "Neumann", "Braun", "Kruger",
    "Lehmann", "Bernard", "Lefebvre", "Girard", "Bonnet", "Mercier", "Blanc", "Guerin", "Faure",
    "Andersson", "Johansson", "Karlsson", "Eriksson", "Olsen", "Dahl", "Holm", "Lund", "Strand",
    "Bianchi", "Romano", "Colombo", "Ricci", "Marino", "Greco", "Bruno", "Gallo", "Conti",
    "De Luca", "Mancini", "Lombardi", "Moretti", "Barbieri", "Fontana", "Esposito", "Russo",
]
# fmt: on

# Nicknames used in chat and meeting notes. Each maps a given name to its short form.
NICKNAMES = {
    "Samuel": "Sam", "Daniel": "Dan", "Danielle": "Dani", "Alexander": "Alex",
    "Alexandra": "Sasha", "Robert": "Rob", "Roberta": "Bobbie", "Katherine": "Kate",
    "Katarina": "Kat", "Michael": "Mike", "Michaela": "Micki", "Christopher": "Chris",
    "Christina": "Tina", "Jonathan": "Jon", "Joanna": "Jo", "Nicholas": "Nick", "Nicola": "Nicky",
    "Benjamin": "Ben", "Elizabeth": "Liz", "Matthew": "Matt", "Patricia": "Pat",
    "Patrick": "Paddy", "Anthony": "Tony", "Antonia": "Toni", "Margaret": "Maggie",
    "Frederick": "Fred", "Frederica": "Freddie", "Gabriel": "Gabe", "Gabriela": "Gabi",
    "Nikolai": "Kolya", "Mikhail": "Misha", "Dmitri": "Dima", "Jacob": "Jake", "William": "Will",
    "Andrew": "Andy", "Edward": "Ed", "Rebecca": "Becky", "Victoria": "Vicky", "Natalie": "Nat",
    "Stefan": "Stef", "Florian": "Flo", "Valentina": "Vale", "Isabel": "Izzy",
}
# Confusable pairs: (given A, given B) that share a family name in the world; the short
# forms of A collide with, or are a prefix of, B.
CONFUSABLE = [
    ("Samuel", "Samir"), ("Daniel", "Danielle"), ("Alexander", "Alexandra"),
    ("Christopher", "Christina"), ("Nicholas", "Nicola"), ("Michael", "Michaela"),
    ("Robert", "Roberta"), ("Patrick", "Patricia"), ("Frederick", "Frederica"),
    ("Anthony", "Antonia"), ("Jonathan", "Joanna"), ("Gabriel", "Gabriela"),
]
FEMININE = {
    "Danielle", "Alexandra", "Christina", "Nicola", "Michaela", "Roberta", "Patricia",
    "Frederica", "Antonia", "Joanna", "Gabriela", "Katherine", "Elizabeth", "Margaret",
    "Rebecca", "Victoria", "Natalie", "Valentina", "Isabel", "Katarina",
}

_ONSET = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr",
          "kr", "st", "th", "sh", "ch", "j", "h", "y"]
_VOWEL = ["a", "e", "i", "o", "u", "ai", "ei", "ia", "ou", "ae"]
_CODA = ["", "", "n", "r", "l", "s", "th", "nd", "rk", "v", "x", "m"]


def syllable_name(rng: random.Random, syllables: int) -> str:
    parts = [rng.choice(_ONSET) + rng.choice(_VOWEL) for _ in range(syllables)]
    return ("".join(parts) + rng.choice(_CODA)).capitalize()


class NamePool:
    """Unique full names drawn from the lists first, then from syllable-generated names."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()
        self.given_f = list(GIVEN_F)
        self.given_m = list(GIVEN_M)
        self.family = list(FAMILY)

    def _grow(self) -> None:
        """Add generated names so that the combination space keeps ahead of demand."""
        for _ in range(60):
            self.given_f.append(syllable_name(self.rng, 2) + "a")
            self.given_m.append(syllable_name(self.rng, 2))
            self.family.append(syllable_name(self.rng, self.rng.choice([2, 3])))

    def person(self) -> tuple[str, str, bool]:
        """(given, family, feminine) of a fresh, unused full name."""
        for attempt in range(200):
            if attempt and attempt % 20 == 0:
                self._grow()
            fem = self.rng.random() < 0.5
            given = self.rng.choice(self.given_f if fem else self.given_m)
            family = self.rng.choice(self.family)
            if f"{given} {family}" not in self.used:
                self.used.add(f"{given} {family}")
                return given, family, fem
        raise RuntimeError("name pool exhausted")  # pragma: no cover - grows every 20 tries

    def reserve(self, given: str, family: str) -> bool:
        name = f"{given} {family}"
        if name in self.used:
            return False
        self.used.add(name)
        return True


def handle_for(given: str, family: str, rng: random.Random) -> str:
    """A Slack-style handle: sam.patel, spatel, sam_p, ..."""
    g, f = given.lower(), family.lower().replace(" ", "")
    return rng.choice([f"{g}.{f}", f"{g[0]}{f}", f"{g}_{f[0]}", f"{g}{f[:3]}", g + f])
