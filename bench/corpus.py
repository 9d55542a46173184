"""A seeded generator of a fictional enterprise corpus (Confluence pages + Slack threads).

``generate_corpus(target_chunks, seed)`` builds a small company (people, teams, projects,
systems, technologies, offices), states its facts in varied prose, tables, lists and chat,
and returns the documents as :class:`~knotwork.domain.models.RawDocument` together with
questions whose answers are known from the ground truth.

The same seed and target always give the same corpus (one ``random.Random``; no set
iteration anywhere).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from knotwork.domain.models import EpisodeSource, RawDocument, SourceSystem
from knotwork.ingestion.chunking import chunk_text

# --------------------------------------------------------------------------- word lists
# fmt: off
FEMALE = [
    "Alice", "Amanda", "Anna", "Carla", "Chloe", "Claire", "Diana", "Elena", "Emily", "Emma",
    "Fiona", "Grace", "Hannah", "Helen", "Irene", "Julia", "Laura", "Lucy", "Maria", "Maya",
    "Nadia", "Naomi", "Nina", "Olivia", "Priya", "Rachel", "Rosa", "Sara", "Sophia", "Tara",
    "Teresa", "Valentina", "Victoria", "Wendy", "Yuki", "Zoe", "Isabel", "Monica", "Natalie",
    "Sandra",
]
MALE = [
    "Aaron", "Adam", "Adrian", "Ahmed", "Alan", "Andrew", "Arjun", "Ben", "Carlos", "Daniel",
    "David", "Diego", "Dmitri", "Edward", "Eric", "Ethan", "Felix", "Gabriel", "George", "Hugo",
    "Ian", "Ivan", "Jacob", "James", "Javier", "Kenji", "Liam", "Lucas", "Marco", "Marcus",
    "Mohamed", "Nathan", "Omar", "Oscar", "Pablo", "Peter", "Rahul", "Samuel", "Victor", "William",
]
LAST = [
    "Novak", "Okafor", "Lindqvist", "Watanabe", "Schmidt", "Rossi", "Garcia", "Patel", "Nguyen",
    "Kowalski", "Fischer", "Moreau", "Dubois", "Costa", "Silva", "Santos", "Ferreira", "Jensen",
    "Hansen", "Larsen", "Nilsson", "Berg", "Virtanen", "Korhonen", "Horvat", "Kovacs", "Nagy",
    "Popescu", "Ionescu", "Petrov", "Ivanova", "Sokolov", "Yilmaz", "Demir", "Haddad", "Mansour",
    "Khalil", "Mensah", "Adeyemi", "Banda", "Mwangi", "Otieno", "Tanaka", "Suzuki", "Takahashi",
    "Yamamoto", "Sato", "Park", "Choi", "Kang", "Yoon", "Sharma", "Iyer", "Reddy", "Menon",
    "Kapoor", "Chowdhury", "Rahman", "Hossain", "Tran", "Pham", "Vu", "Santiago", "Reyes",
    "Morales", "Ortega", "Castillo", "Herrera", "Medina", "Alvarez", "Romero", "Torres", "Ramirez",
    "Flores", "Rivera", "Gomez", "Sullivan", "Gallagher", "Brennan", "Walsh", "Kennedy", "Murphy",
    "Fitzgerald", "Webb", "Harper", "Fletcher", "Whitaker",
]
TEAM_BASE = [
    "Payments", "Identity", "Search", "Checkout", "Growth", "Platform", "Infrastructure",
    "Data Engineering", "Analytics", "Mobile", "Web Experience", "Security", "Reliability",
    "Fulfillment", "Logistics", "Pricing", "Catalog", "Messaging", "Developer Experience",
    "Support Tools", "Risk", "Fraud", "Onboarding", "Partnerships", "Marketplace", "Observability",
    "Storage", "Networking", "Machine Learning", "Recommendations", "Accounts", "Compliance",
    "Localization", "Media", "Notifications", "Integrations", "Core Banking", "Trust and Safety",
    "Internal Tools", "Release Engineering", "Performance", "Edge", "Quality", "Privacy",
    "Finance Systems", "Procurement", "Sales Engineering", "Ads", "Content", "Experimentation",
]
CODENAMES = [
    "Phoenix", "Atlas", "Orion", "Nimbus", "Zephyr", "Falcon", "Condor", "Kestrel", "Osprey",
    "Heron", "Pelican", "Albatross", "Sparrow", "Raven", "Magpie", "Cardinal", "Starling", "Lynx",
    "Puma", "Jaguar", "Panther", "Cobalt", "Indigo", "Crimson", "Saffron", "Amber", "Onyx",
    "Quartz", "Topaz", "Garnet", "Opal", "Beryl", "Granite", "Basalt", "Obsidian", "Marble",
    "Cedar", "Maple", "Willow", "Aspen", "Sequoia", "Juniper", "Hemlock", "Birch", "Alder",
    "Rowan", "Hawthorn", "Tundra", "Glacier", "Summit", "Everest", "Kilimanjaro", "Andes",
    "Sahara", "Mistral", "Sirocco", "Monsoon", "Typhoon", "Cyclone", "Tempest", "Thunder",
    "Lightning", "Comet", "Meteor", "Nebula", "Quasar", "Vega", "Rigel", "Sirius", "Altair",
    "Deneb", "Polaris", "Cassini", "Hubble", "Kepler", "Galileo", "Apollo", "Gemini", "Voyager",
    "Pioneer", "Horizon", "Meridian", "Equinox", "Solstice", "Zenith", "Apex", "Vertex", "Prism",
    "Spectrum", "Helix", "Vortex", "Catalyst", "Keystone", "Lighthouse", "Beacon", "Compass",
    "Anchor", "Harbor", "Bastion", "Citadel", "Sentinel", "Trident", "Odyssey", "Evergreen",
    "Bluebird", "Firefly", "Dragonfly", "Mustang", "Stallion", "Bison", "Mammoth", "Narwhal",
    "Orca", "Dolphin", "Manta", "Coral", "Lagoon",
]
SYSTEM_BASE = [
    "Billing", "Ledger", "Invoice", "Refund", "Cart", "Order", "Inventory", "Shipping", "Tracking",
    "Quote", "Tax", "Currency", "Settlement", "Payout", "Subscription", "Entitlement", "Token",
    "Session", "Profile", "Permission", "Audit", "Consent", "Email", "SMS", "Webhook", "Scheduler",
    "Workflow", "Batch", "Export", "Import", "Reporting", "Metrics", "Telemetry", "Config",
    "Secrets", "Certificate", "Routing", "Quota", "Geocoding", "Address", "Dispatch", "Fleet",
    "Product", "Listing", "Review", "Rating", "Coupon", "Loyalty", "Rewards", "Referral", "Wallet",
    "Transfer", "Reconciliation", "Statement", "Chargeback", "Dispute", "Verification", "Document",
    "Upload", "Thumbnail", "Transcoding", "Asset", "Indexing", "Ranking", "Query", "Autocomplete",
    "Translation", "Calendar", "Booking", "Reservation", "Availability", "Forecast", "Demand",
    "Supply", "Vendor", "Contract", "Approval", "Expense", "Payroll", "Timesheet", "Offboarding",
    "Directory", "Badge", "Ticketing", "Chat", "Presence", "Feed", "Comment", "Moderation",
    "Sanctions", "Scoring", "Underwriting", "Collections", "Lending", "Deposit", "Exchange",
]
TECHNOLOGIES = [
    "Kafka", "PostgreSQL", "Redis", "Kubernetes", "Elasticsearch", "Cassandra", "MySQL",
    "RabbitMQ", "MongoDB", "Snowflake", "Airflow", "Spark", "Terraform", "Prometheus", "Grafana",
    "ClickHouse", "Flink", "DynamoDB", "Memcached", "Nginx", "Envoy", "Docker",
]
CITIES = [
    "Berlin", "London", "Dublin", "Amsterdam", "Lisbon", "Madrid", "Paris", "Stockholm", "Warsaw",
    "Toronto", "Austin", "Boston", "Singapore", "Tokyo", "Sydney", "Bangalore",
]
IC_ROLES = [
    "Software Engineer", "Senior Software Engineer", "Staff Engineer", "Site Reliability Engineer",
    "Data Engineer", "Product Manager", "Product Designer", "QA Engineer", "Backend Engineer",
    "Frontend Engineer",
]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]
TOPICS = [
    "retry budget", "alerting thresholds", "on-call handover", "release checklist",
    "load test plan", "error budget", "schema migration", "API versioning policy",
    "cloud cost report", "dashboard cleanup", "flaky test list", "capacity plan", "runbook review",
    "backlog grooming", "quarterly roadmap", "latency targets", "access review",
    "disaster recovery drill", "data retention policy", "hiring plan", "design review",
    "incident follow-ups", "deprecation timeline", "SLO definitions", "rollout plan",
    "feature flag cleanup", "security review", "documentation gaps",
]
VERBS = [
    "revisit", "finalise", "review", "simplify", "write down", "split up", "prioritise", "share",
    "update", "clean up", "discuss", "estimate",
]
WHEN = [
    "next sprint", "before the end of the month", "at the next sync", "after the release",
    "this quarter", "in two weeks", "once the freeze is over", "before the planning session",
]
FILLER = [
    "We agreed to {verb} the {topic} {when}.", "The {topic} is still open and needs an owner.",
    "Most of the discussion was about the {topic}.",
    "There was a short debate about the {topic}, but no decision yet.",
    "Nobody objected to the proposal for the {topic}.",
    "The group wants to {verb} the {topic} {when}.",
    "A draft of the {topic} is in the shared folder for comments.",
    "The {topic} slipped by a week because of the holidays.",
    "We should {verb} the {topic} {when} and report back.",
    "Feedback on the {topic} was mostly positive.",
    "It is worth noting that the {topic} affects several teams.",
    "The metrics from last week look stable, with no new regressions.",
    "Error rates stayed within the agreed budget for the whole period.",
    "Two tickets were closed and three new ones were opened.",
    "The last deploy went out without any rollbacks.",
    "We will keep an eye on the dashboards over the weekend.",
    "Please add comments directly to the page rather than in chat.",
    "The page will be updated after the next planning session.",
]
SLACK_FILLER = [
    "sounds good", "+1, thanks for the heads-up", "I can take a look after standup",
    "is there a ticket for this?", "deploy is green now",
    "let me check the logs and get back to you", "thanks, that helps a lot", "ack", "will do",
    "nice work everyone", "can we move this to the {topic} thread?",
    "I added a note about the {topic}", "do we need to {verb} the {topic} {when}?",
    "let's {verb} the {topic} {when}", "the {topic} doc is updated",
    "agreed, let's keep it simple", "ok, merging now", "quick question about the {topic}",
    "I'll share the numbers in a bit",
]
ACTIONS = [
    "follow up on the {topic}", "{verb} the {topic}", "send the notes around",
    "open a ticket for the {topic}", "book a review of the {topic}",
]
# fmt: on


# --------------------------------------------------------------------------- the world
@dataclass
class Person:
    name: str
    first: str
    gender: str  # "f" / "m": pronouns only
    role: str
    city: str
    team: str = ""
    manager: str | None = None

    @property
    def he(self) -> str:
        return "She" if self.gender == "f" else "He"

    @property
    def his(self) -> str:
        return "Her" if self.gender == "f" else "His"

    @property
    def him(self) -> str:
        return "her" if self.gender == "f" else "him"


@dataclass
class Team:
    name: str
    lead: str
    city: str
    director: str
    members: list[str] = field(default_factory=list)
    systems: list[str] = field(default_factory=list)


@dataclass
class Project:
    name: str
    lead: str
    members: list[str]
    depends_on: list[str]
    uses: list[str]
    goal: str


@dataclass
class System:
    name: str
    team: str
    uses: list[str]
    depends_on: list[str]


@dataclass
class World:
    people: dict[str, Person]
    teams: dict[str, Team]
    projects: dict[str, Project]
    systems: dict[str, System]
    cto: str
    directors: list[str]
    leadership: str

    def facts(self) -> list[tuple[str, str, str]]:
        """The ground truth as (subject, relation, object) triples."""
        out: list[tuple[str, str, str]] = []
        for p in self.people.values():
            out.append((p.name, "MEMBER_OF", p.team))
            out.append((p.name, "LOCATED_IN", p.city))
            if p.manager:
                out.append((p.name, "REPORTS_TO", p.manager))
        for t in self.teams.values():
            out.append((t.lead, "LEADS", t.name))
            out.append((t.name, "LOCATED_IN", t.city))
            out.extend((t.name, "MAINTAINS", s) for s in t.systems)
        for pr in self.projects.values():
            out.append((pr.lead, "LEADS", pr.name))
            out.extend((pr.name, "DEPENDS_ON", s) for s in pr.depends_on)
            out.extend((pr.name, "USES", x) for x in pr.uses)
        for s in self.systems.values():
            out.extend((s.name, "USES", x) for x in s.uses)
            out.extend((s.name, "DEPENDS_ON", d) for d in s.depends_on)
        return out


def build_world(rng: random.Random, target_chunks: int) -> World:
    n_people = min(3000, max(40, target_chunks // 6))
    n_teams = min(len(TEAM_BASE), max(4, n_people // 10))
    n_projects = min(len(CODENAMES), max(4, target_chunks // 30))
    n_systems = min(len(SYSTEM_BASE), max(6, target_chunks // 25))

    combos = [
        (f, g, last) for g, names in (("f", FEMALE), ("m", MALE)) for f in names for last in LAST
    ]
    rng.shuffle(combos)
    people: dict[str, Person] = {}
    for first, gender, last in combos[:n_people]:
        name = f"{first} {last}"
        people[name] = Person(name, first, gender, rng.choice(IC_ROLES), rng.choice(CITIES))
    names = list(people)

    leadership = "Engineering Leadership Team"
    n_directors = max(2, n_teams // 6)
    cto, directors = names[0], names[1 : 1 + n_directors]
    people[cto].role, people[cto].team = "CTO", leadership
    for d in directors:
        people[d].role, people[d].team, people[d].manager = (
            "Director of Engineering",
            leadership,
            cto,
        )
    leaders = names[1 + n_directors : 1 + n_directors + n_teams]
    rest = names[1 + n_directors + n_teams :]

    team_words = rng.sample(TEAM_BASE, n_teams)
    teams: dict[str, Team] = {}
    for i, (word, lead) in enumerate(zip(team_words, leaders, strict=True)):
        director = directors[i % len(directors)]
        team = Team(f"{word} Team", lead, rng.choice(CITIES), director, [lead])
        people[lead].role, people[lead].team, people[lead].manager = (
            "Engineering Manager",
            team.name,
            director,
        )
        people[lead].city = team.city
        teams[team.name] = team
    team_list = list(teams.values())
    for i, name in enumerate(rest):
        team = team_list[i % len(team_list)]
        team.members.append(name)
        people[name].team, people[name].manager = team.name, team.lead
        if rng.random() < 0.7:
            people[name].city = team.city

    system_words = rng.sample(SYSTEM_BASE, n_systems)
    systems: dict[str, System] = {}
    for i, word in enumerate(system_words):
        team = team_list[i % len(team_list)]
        earlier = list(systems)
        deps = rng.sample(earlier, min(len(earlier), rng.choice([0, 1, 1, 1, 2])))
        system = System(
            f"{word} Service", team.name, rng.sample(TECHNOLOGIES, rng.choice([1, 2, 2, 3])), deps
        )
        team.systems.append(system.name)
        systems[system.name] = system

    goals = [
        "cut checkout latency in half",
        "move the remaining workloads to the new cluster",
        "replace the legacy batch jobs with streaming",
        "launch the product in two new markets",
        "consolidate the customer data model",
        "reduce cloud spend by a fifth",
        "rebuild the mobile onboarding flow",
        "automate the quarterly compliance report",
        "introduce per-tenant rate limits",
        "retire the old monolith endpoints",
    ]
    projects: dict[str, Project] = {}
    candidates = names[1:]
    for word in rng.sample(CODENAMES, n_projects):
        lead = rng.choice(candidates)
        members = [lead] + rng.sample([n for n in candidates if n != lead], 4)
        projects[f"Project {word}"] = Project(
            f"Project {word}",
            lead,
            members,
            rng.sample(list(systems), rng.choice([1, 1, 2])),
            rng.sample(TECHNOLOGIES, rng.choice([1, 2])),
            rng.choice(goals),
        )
    return World(people, teams, projects, systems, cto, directors, leadership)


# --------------------------------------------------------------------------- sentences
REPORTS = [
    "{x} reports to {m}.",
    "{x} reports directly to {m}.",
    "{xs} manager is {m}.",
    "{x} has been reporting to {m} since {month}.",
    "{x} reports into {m} for day-to-day work.",
]
REPORTS_NAMED = ["{m} is the line manager of {x}.", "{m} manages {x}."]
MEMBER = [
    "{x} is a member of the {t}.",
    "{x} joined the {t} in {month}.",
    "{x} works on the {t}.",
    "{x} is part of the {t}.",
    "{x} belongs to the {t}.",
]
LOCATED = [
    "{x} is based in {c}.",
    "{x} works out of the {c} office.",
    "{x} lives in {c}.",
    "{x} sits in the {c} office.",
]
TEAM_LEAD = [
    "{x} leads the {t}.",
    "{x} runs the {t}.",
    "{x} is the engineering manager for the {t}.",
]
TEAM_LEAD_NAMED = ["The {t} is headed by {x}.", "The {t} is led by {x}."]
PROJECT_LEAD = [
    "{x} leads {p}.",
    "{x} is driving {p}.",
    "{x} is the project lead for {p}.",
    "{x} is in charge of {p}.",
]
PROJECT_LEAD_NAMED = ["{p} is led by {x}.", "{p}'s tech lead is {x}."]
MAINTAINS = [
    "The {s} is maintained by the {t}.",
    "The {t} maintains the {s}.",
    "The {t} is on call for the {s}.",
    "The {s} is operated by the {t}.",
    "The {t} owns the {s} end to end.",
    "Ownership of the {s} sits with the {t}.",
]
USES = [
    "{S} uses {x}.",
    "{S} runs on {x}.",
    "{S} is built on {x}.",
    "{S} stores its state in {x}.",
    "Under the hood, {s_lower} is powered by {x}.",
    "{S} was built with {x} from day one.",
]
DEPENDS = [
    "{S} depends on the {d}.",
    "{S} calls the {d} on every request.",
    "{S} relies on the {d}.",
    "{S} reads from the {d}.",
    "If the {d} is down, {s_lower} cannot serve traffic.",
    "{S} integrates with the {d}.",
]


class Writer:
    """Renders facts of the world as sentences, with varied templates and pronouns."""

    def __init__(self, world: World, rng: random.Random) -> None:
        self.w = world
        self.rng = rng

    def month(self) -> str:
        return f"{self.rng.choice(MONTHS)} {self.rng.choice([2023, 2024])}"

    def fill(self, template: str) -> str:
        r = self.rng
        return template.format(topic=r.choice(TOPICS), verb=r.choice(VERBS), when=r.choice(WHEN))

    def filler(self) -> str:
        return self.fill(self.rng.choice(FILLER))

    def person_facts(self, name: str, k: int = 3, pronouns: bool = True) -> str:
        """Up to k facts about one person: the first names them, later ones say he/she."""
        p = self.w.people[name]
        kinds = ["member", "located"] + (["reports"] if p.manager else [])
        team = self.w.teams.get(p.team)
        if team and team.lead == name:
            kinds.append("team_lead")
        kinds += ["project_lead" for pr in self.w.projects.values() if pr.lead == name][:1]
        self.rng.shuffle(kinds)
        out = []
        for i, kind in enumerate(kinds[:k]):
            named = i == 0 or not pronouns
            x = name if named else p.he
            xs = f"{name}'s" if named else p.his
            r = self.rng
            if kind == "member":
                s = r.choice(MEMBER).format(x=x, t=p.team, month=self.month())
            elif kind == "located":
                s = r.choice(LOCATED).format(x=x, c=p.city)
            elif kind == "reports":
                pool = REPORTS + (REPORTS_NAMED if named else [])
                s = r.choice(pool).format(x=x, xs=xs, m=p.manager, month=self.month())
            elif kind == "team_lead":
                pool = TEAM_LEAD + (TEAM_LEAD_NAMED if named else [])
                s = r.choice(pool).format(x=x, t=p.team)
            else:
                project = next(pr.name for pr in self.w.projects.values() if pr.lead == name)
                pool = PROJECT_LEAD + (PROJECT_LEAD_NAMED if named else [])
                s = r.choice(pool).format(x=x, p=project)
            out.append(s)
        return " ".join(out)

    def system_facts(self, name: str, k: int = 3) -> str:
        s = self.w.systems[name]
        items: list[tuple[str, str]] = [("maintains", s.team)]
        items += [("uses", x) for x in s.uses] + [("depends", d) for d in s.depends_on]
        self.rng.shuffle(items)
        out = []
        for i, (kind, obj) in enumerate(items[:k]):
            subject = f"The {name}" if i == 0 else self.rng.choice(["It", f"The {name}"])
            lower = f"the {name}"
            if kind == "maintains":
                out.append(self.rng.choice(MAINTAINS).format(s=name, t=obj))
            elif kind == "uses":
                out.append(self.rng.choice(USES).format(S=subject, s_lower=lower, x=obj))
            else:
                out.append(self.rng.choice(DEPENDS).format(S=subject, s_lower=lower, d=obj))
        return " ".join(out)

    def project_facts(self, name: str) -> str:
        pr = self.w.projects[name]
        r = self.rng
        lead = r.choice(PROJECT_LEAD + PROJECT_LEAD_NAMED).format(x=pr.lead, p=name)
        deps = " and the ".join(pr.depends_on)
        extra = [
            f"It depends on the {deps}.",
            f"{name} relies on the {deps}.",
            f"The project uses {' and '.join(pr.uses)}.",
            f"The goal is to {pr.goal}.",
        ]
        return " ".join([lead, *r.sample(extra, 2)])


# --------------------------------------------------------------------------- documents
@dataclass
class Corpus:
    documents: list[RawDocument]
    questions: list[tuple[str, str]]
    world: World
    chunks: int
    words: int


def _words(text: str) -> int:
    return len(text.split())


class _Builder:
    def __init__(self, world: World, rng: random.Random, start: datetime) -> None:
        self.w = world
        self.rng = rng
        self.wr = Writer(world, rng)
        self.start = start
        self.page = 700000
        self.docs: list[RawDocument] = []

    def when(self) -> datetime:
        return self.start + timedelta(
            days=self.rng.randint(0, 540),
            hours=self.rng.randint(8, 18),
            minutes=self.rng.randint(0, 59),
            seconds=self.rng.randint(0, 59),
        )

    def pad(self, parts: list[str], low: int = 160, high: int = 380) -> list[str]:
        """Filler paragraphs until the page has between low and high words."""
        goal = self.rng.randint(low, high)
        while _words("\n".join(parts)) < goal:
            para = " ".join(self.wr.filler() for _ in range(self.rng.randint(2, 4)))
            if _words("\n".join(parts)) + _words(para) > 400:
                break
            parts.append(para)
        return parts

    def confluence(self, title: str, parts: list[str], author: str) -> None:
        self.page += 1
        created = self.when()
        modified = created + timedelta(days=self.rng.randint(0, 60))
        self.docs.append(
            RawDocument(
                source_system=SourceSystem.CONFLUENCE,
                source_id=str(self.page),
                title=title,
                content="\n\n".join(parts),
                url=f"https://wiki.example.com/pages/{self.page}",
                author=author,
                created_at=created,
                modified_at=modified,
                metadata={"space": "ENG"},
            )
        )

    def slack(self, channel: str, lines: list[tuple[str, str]]) -> None:
        first = self.when()
        times = [
            first + timedelta(minutes=3 * i + self.rng.randint(0, 2)) for i in range(len(lines))
        ]
        ts = f"{int(first.timestamp())}.{self.rng.randint(0, 999999):06d}"
        speaker = lines[0][0]
        self.docs.append(
            RawDocument(
                source_system=SourceSystem.SLACK,
                source_id=f"{channel}/{ts}",
                title=f"#{channel} — {speaker}, {first:%Y-%m-%d %H:%M} UTC",
                content="\n".join(f"{who}: {text}" for who, text in lines),
                author=speaker,
                created_at=first,
                modified_at=times[-1],
                episode_source=EpisodeSource.MESSAGE,
                metadata={"channel": channel},
            )
        )

    # ------------------------------------------------------------------ fixed pages
    def directory_pages(self) -> None:
        names = list(self.w.people)
        for k in range(0, len(names), 14):
            group = names[k : k + 14]
            rows = []
            for n in group:
                p = self.w.people[n]
                row = f"Name: {n}; Role: {p.role}; Team: {p.team}"
                if self.rng.random() < 0.5:
                    row += f"; Location: {p.city}"
                rows.append(row)
            lines = [
                self.rng.choice(REPORTS).format(
                    x=n, xs=f"{n}'s", m=self.w.people[n].manager, month=self.wr.month()
                )
                for n in group
                if self.w.people[n].manager
            ]
            parts = [
                f"# Engineering directory ({k // 14 + 1})",
                "This page lists engineering staff with their role and team.",
                "\n".join(rows),
                "## Reporting lines",
                " ".join(lines),
            ]
            self.confluence(f"Engineering directory ({k // 14 + 1})", parts, self.w.cto)

    def team_page(self, team: Team) -> None:
        wr, r = self.wr, self.rng
        lead = r.choice(TEAM_LEAD_NAMED + TEAM_LEAD).format(x=team.lead, t=team.name)
        parts = [
            f"# {team.name}",
            f"{lead} The team sits in {team.city}. {team.lead} reports to {team.director}.",
        ]
        members = [m for m in team.members if m != team.lead][:12]
        parts.append(
            "## Members\n" + "\n".join(f"- {m} ({self.w.people[m].role})" for m in members)
        )
        if team.systems:
            resp = [r.choice(MAINTAINS).format(s=s, t=team.name) for s in team.systems]
            parts.append("## Responsibilities\n" + "\n".join(f"- {x}" for x in resp))
        parts.append(
            " ".join(wr.person_facts(m, k=2) for m in r.sample(members, min(3, len(members))))
        )
        self.confluence(f"{team.name} — Team Page", self.pad(parts), team.lead)

    def leadership_page(self) -> None:
        w = self.w
        lines = [f"{w.cto} is the CTO."]
        for d in w.directors:
            owned = [t.name for t in w.teams.values() if t.director == d]
            lines.append(f"{d} reports to {w.cto} and oversees the {', the '.join(owned)}.")
        rows = [
            f"Name: {n}; Role: {w.people[n].role}; Team: {w.leadership}"
            for n in [w.cto, *w.directors]
        ]
        self.confluence(
            w.leadership, self.pad([f"# {w.leadership}", " ".join(lines), "\n".join(rows)]), w.cto
        )

    def system_page(self, system: System) -> None:
        team = self.w.teams[system.team]
        parts = [
            f"# {system.name}",
            self.wr.system_facts(system.name, k=6),
            f"Owner: {team.name}",
            f"Escalation: page {team.lead} if the on-call engineer is unavailable.",
        ]
        self.confluence(f"{system.name} — Overview", self.pad(parts), team.lead)

    def charter(self, project: Project) -> None:
        wr = self.wr
        parts = [
            f"# {project.name} — Charter",
            f"Lead: {project.lead}",
            wr.project_facts(project.name),
            "## Team\n" + "\n".join(f"- {m} ({self.w.people[m].team})" for m in project.members),
            "## Dependencies\n" + "\n".join(f"- {d}" for d in project.depends_on),
            wr.person_facts(project.lead, k=2),
        ]
        self.confluence(f"{project.name} — Charter", self.pad(parts), project.lead)

    # ------------------------------------------------------------------ repeated pages
    def meeting_notes(self) -> None:
        w, wr, r = self.w, self.wr, self.rng
        if r.random() < 0.5:
            team = r.choice(list(w.teams.values()))
            subject, people = team.name, team.members
            title = f"{team.name} weekly sync — {self.when():%Y-%m-%d}"
            systems = team.systems
        else:
            project = r.choice(list(w.projects.values()))
            subject, people = project.name, project.members
            title = f"{project.name} sync — {self.when():%Y-%m-%d}"
            systems = project.depends_on
        attendees = r.sample(people, min(len(people), r.randint(3, 6)))
        parts = [f"# {title}", f"Attendees: {', '.join(attendees)}", "## Updates"]
        bullets = [wr.person_facts(a, k=r.randint(1, 3)) for a in attendees[:3]]
        parts.append("\n".join(f"- {b}" for b in bullets))
        if subject in w.projects:
            parts.append(wr.project_facts(subject))
        if systems:
            parts.append(wr.system_facts(r.choice(systems), k=2))
        parts.append("## Discussion\n" + " ".join(wr.filler() for _ in range(3)))
        parts.append(
            "## Action items\n"
            + "\n".join(
                f"- {a} to {wr.fill(r.choice(ACTIONS))}." for a in attendees[: r.randint(2, 4)]
            )
        )
        self.confluence(title, self.pad(parts, 150, 360), attendees[0])

    def status_update(self) -> None:
        w, wr, r = self.w, self.wr, self.rng
        project = r.choice(list(w.projects.values()))
        title = f"{project.name} status update — {r.choice(MONTHS)} {r.choice([2024, 2025])}"
        parts = [
            f"# {title}",
            wr.project_facts(project.name),
            f"Status: {r.choice(['on track', 'at risk', 'slightly behind'])}.",
            wr.system_facts(r.choice(project.depends_on), k=3),
            "## Risks\n" + "\n".join(f"- {wr.filler()}" for _ in range(2)),
            wr.person_facts(r.choice(project.members), k=2),
        ]
        self.confluence(title, self.pad(parts), project.lead)

    def postmortem(self) -> None:
        w, wr, r = self.w, self.wr, self.rng
        system = r.choice(list(w.systems.values()))
        team = w.teams[system.team]
        day = self.when()
        title = f"Incident review: {system.name} degradation on {day:%Y-%m-%d}"
        cause = (
            f"The root cause was a failure in the {system.depends_on[0]}, "
            f"which the {system.name} depends on."
            if system.depends_on
            else f"The root cause was a saturated {system.uses[0]} cluster."
        )
        parts = [
            f"# {title}",
            f"The {system.name} was degraded for {r.randint(5, 180)} minutes. {cause}",
            wr.system_facts(system.name, k=3),
            f"{team.lead} was the incident commander. " + wr.person_facts(team.lead, k=2),
            "## Follow-ups\n"
            + "\n".join(f"- {wr.fill(r.choice(ACTIONS)).capitalize()}." for _ in range(3)),
        ]
        self.confluence(title, self.pad(parts), team.lead)

    def thread(self) -> None:
        w, r = self.w, self.rng
        kind = r.random()
        if kind < 0.45:
            team = r.choice(list(w.teams.values()))
            channel = "team-" + team.name.lower().removesuffix(" team").replace(" ", "-")
            people, systems = team.members, team.systems
        elif kind < 0.8:
            project = r.choice(list(w.projects.values()))
            channel = "proj-" + project.name.split()[-1].lower()
            people, systems = project.members, project.depends_on
        else:
            channel = "eng-general"
            people = r.sample(list(w.people), 6)
            systems = r.sample(list(w.systems), 2)
        speakers = r.sample(people, min(len(people), r.randint(2, 5)))
        lines: list[tuple[str, str]] = []
        goal = r.randint(150, 360)
        while sum(_words(f"{a}: {b}") for a, b in lines) < goal:
            who = r.choice(speakers)
            lines.append((who, self.message(who, systems, people)))
        self.slack(channel, lines)

    def message(self, who: str, systems: list[str], people: list[str]) -> str:
        w, wr, r = self.w, self.wr, self.rng
        p = w.people[who]
        roll = r.random()
        if roll < 0.45:
            return wr.fill(r.choice(SLACK_FILLER))
        if roll < 0.6:
            options = [
                f"I'm on the {p.team}, happy to help.",
                f"I joined the {p.team} in {wr.month()}.",
                f"I'm based in {p.city}, so mornings work best for me.",
                f"I work out of the {p.city} office.",
            ]
            if p.manager:
                options += [
                    f"I report to {p.manager}, so I'll loop {w.people[p.manager].him} in.",
                    f"my manager is {p.manager}, I'll check with {w.people[p.manager].him}.",
                ]
            led = [pr.name for pr in w.projects.values() if pr.lead == who]
            if led:
                options.append(f"I'm leading {led[0]}, ping me with questions.")
            return r.choice(options)
        if roll < 0.8 and systems:
            return wr.system_facts(r.choice(systems), k=r.randint(1, 2))
        other = r.choice([x for x in people if x != who] or people)
        return wr.person_facts(other, k=r.randint(1, 2))


def _questions(world: World, rng: random.Random, n: int) -> list[tuple[str, str]]:
    """Round-robin over question kinds; each kind's pool is used up before any repeats."""
    w = world
    staff = [p for p in w.people.values() if p.manager]
    pools: list[list[tuple[str, str]]] = [
        [(f"Who leads {pr.name}?", pr.lead) for pr in w.projects.values()],
        [(f"Who does {p.name} report to?", p.manager or "") for p in staff],
        [(f"Which team maintains the {s.name}?", s.team) for s in w.systems.values()],
        [(f"Which team is {p.name} a member of?", p.team) for p in staff],
        [(f"Where is {p.name} based?", p.city) for p in staff],
        [(f"Who leads the {t.name}?", t.lead) for t in w.teams.values()],
        [
            (f"What does the {s.name} depend on?", s.depends_on[0])
            for s in w.systems.values()
            if len(s.depends_on) == 1
        ],
    ]
    pools = [p for p in pools if p]
    for pool in pools:
        rng.shuffle(pool)
    out: list[tuple[str, str]] = []
    queues = [list(pool) for pool in pools]
    while len(out) < n:
        if not any(queues):  # every pool used up: start over (questions repeat)
            queues = [list(pool) for pool in pools]
        for queue in queues:
            if queue and len(out) < n:
                out.append(queue.pop(0))
    return out


def generate_corpus(
    target_chunks: int = 3000,
    seed: int = 7,
    questions: int = 100,
    chunk_tokens: int = 800,
    chunk_overlap: int = 100,
) -> Corpus:
    """Documents whose chunk count (with the given chunk settings) reaches ``target_chunks``."""
    rng = random.Random(seed)
    world = build_world(rng, target_chunks)
    b = _Builder(world, rng, datetime(2024, 1, 8, tzinfo=UTC))
    b.leadership_page()
    b.directory_pages()
    for team in world.teams.values():
        b.team_page(team)
    for system in world.systems.values():
        b.system_page(system)
    for project in world.projects.values():
        b.charter(project)

    def count(docs: list[RawDocument]) -> int:
        return sum(len(chunk_text(d.content, chunk_tokens, chunk_overlap)) for d in docs)

    chunks = count(b.docs)
    makers = [b.meeting_notes] * 3 + [b.thread] * 4 + [b.status_update, b.postmortem]
    while chunks < target_chunks:
        before = len(b.docs)
        rng.choice(makers)()
        chunks += count(b.docs[before:])
    rng.shuffle(b.docs)
    words = sum(_words(d.content) for d in b.docs)
    return Corpus(b.docs, _questions(world, rng, questions), world, chunks, words)


if __name__ == "__main__":  # pragma: no cover - a quick look at the corpus
    import sys

    corpus = generate_corpus(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
    print(
        f"{len(corpus.documents)} documents, {corpus.chunks} chunks, {corpus.words} words, "
        f"{len(corpus.world.people)} people, {len(corpus.world.facts())} facts"
    )
    for doc in corpus.documents[:3]:
        print(f"--- {doc.source_system} {doc.source_id} {doc.title}\n{doc.content}\n")
    for q, a in corpus.questions[:10]:
        print(f"Q: {q}  → {a}")
