"""Build a seeded fictional company: org chart, projects, systems, offices, vendors and the
dated changes between January 2023 and June 2025."""

from __future__ import annotations

import random
from datetime import date, timedelta

from bench.world.model import END, START, Entity, Event, World
from bench.world.names import (
    CONFUSABLE,
    FEMININE,
    NICKNAMES,
    NamePool,
    handle_for,
    syllable_name,
)

# fmt: off
COMPANIES = ["Halcyon Freight", "Norrbridge Systems", "Quillmark Health", "Ostara Logistics",
             "Brambleway Retail", "Tessellate Labs", "Corvid Payments", "Larkspur Mobility"]
DIVISION_BASE = ["Commerce", "Platform", "Data", "Consumer", "Infrastructure", "Growth",
                 "Operations", "Security", "Finance Technology", "Enterprise", "Marketplace",
                 "Developer Productivity", "Trust", "Media", "Research"]
TEAM_BASE = [
    "Payments", "Identity", "Search", "Checkout", "Onboarding", "Ledger", "Pricing", "Catalog",
    "Messaging", "Fraud", "Risk", "Observability", "Storage", "Networking", "Recommendations",
    "Accounts", "Compliance", "Localization", "Notifications", "Integrations", "Billing",
    "Fulfillment", "Routing", "Experimentation", "Ads", "Content", "Privacy", "Edge", "Mobile",
    "Web", "Reliability", "Release", "Tooling", "Analytics", "Ingestion", "Forecasting",
    "Partnerships", "Support Tools", "Procurement", "Payroll", "Loyalty", "Maps", "Scheduling",
    "Inventory", "Dispatch", "Reporting", "Audit", "Access", "Telemetry", "Quality",
]
TEAM_QUALIFIER = ["", "Core", "Platform", "Data", "Experience", "Services", "Apps", "Infra",
                  "Insights", "Automation", "Operations", "Tools", "API", "Quality", "Growth"]
CODENAMES = [
    "Phoenix", "Atlas", "Orion", "Nimbus", "Zephyr", "Falcon", "Condor", "Kestrel", "Osprey",
    "Heron", "Pelican", "Sparrow", "Raven", "Magpie", "Cardinal", "Starling", "Lynx", "Puma",
    "Cobalt", "Indigo", "Saffron", "Onyx", "Quartz", "Topaz", "Garnet", "Opal", "Granite",
    "Basalt", "Cedar", "Maple", "Willow", "Aspen", "Juniper", "Birch", "Rowan", "Tundra",
    "Glacier", "Summit", "Mistral", "Monsoon", "Typhoon", "Tempest", "Comet", "Meteor", "Nebula",
    "Quasar", "Vega", "Rigel", "Sirius", "Altair", "Polaris", "Kepler", "Galileo", "Voyager",
    "Meridian", "Equinox", "Zenith", "Prism", "Helix", "Vortex", "Keystone", "Lighthouse",
    "Beacon", "Compass", "Anchor", "Harbor", "Citadel", "Sentinel", "Trident", "Odyssey",
    "Bluebird", "Firefly", "Mustang", "Bison", "Narwhal", "Orca", "Manta", "Coral", "Lagoon",
]
SYSTEM_BASE = [
    "Billing", "Ledger", "Invoice", "Refund", "Cart", "Order", "Inventory", "Shipping", "Tracking",
    "Quote", "Tax", "Currency", "Settlement", "Payout", "Subscription", "Entitlement", "Token",
    "Session", "Profile", "Permission", "Consent", "Webhook", "Scheduler", "Workflow", "Export",
    "Metrics", "Config", "Secrets", "Certificate", "Quota", "Geocoding", "Address", "Fleet",
    "Listing", "Review", "Coupon", "Rewards", "Referral", "Wallet", "Transfer", "Statement",
    "Chargeback", "Dispute", "Verification", "Upload", "Thumbnail", "Transcoding", "Indexing",
    "Ranking", "Autocomplete", "Translation", "Calendar", "Booking", "Availability", "Demand",
    "Contract", "Approval", "Expense", "Timesheet", "Badge", "Ticketing", "Presence", "Feed",
    "Moderation", "Sanctions", "Scoring", "Underwriting", "Collections", "Lending", "Deposit",
]
SYSTEM_KIND = ["Service", "Gateway", "API", "Worker", "Engine", "Store", "Pipeline"]
TECHNOLOGIES = [
    ("Kafka", "Apache Kafka"), ("PostgreSQL", "Postgres"), ("Redis", ""), ("Kubernetes", "k8s"),
    ("Elasticsearch", "Elastic"), ("Cassandra", ""), ("MySQL", ""), ("RabbitMQ", "Rabbit"),
    ("MongoDB", "Mongo"), ("Snowflake", ""), ("Airflow", "Apache Airflow"), ("Spark", ""),
    ("Terraform", ""), ("Prometheus", ""), ("ClickHouse", ""), ("Flink", "Apache Flink"),
    ("DynamoDB", "Dynamo"), ("Nginx", ""), ("Envoy", ""), ("gRPC", ""), ("GraphQL", ""),
]
CITIES = ["Berlin", "Lisbon", "Toronto", "Singapore", "Austin", "Dublin", "Warsaw", "Nairobi",
          "Bangalore", "Sao Paulo", "Melbourne", "Stockholm", "Seoul", "Madrid", "Montreal"]
VENDOR_CATEGORIES = {
    "observability": ["Lumenwatch", "Tracehound", "Signalpeak"],
    "payment processing": ["Paydrift", "Clearmint", "Settleworks"],
    "cloud hosting": ["Stratohost", "Nimbuscale", "Cumulus Grid"],
    "HR software": ["Peoplewise", "Staffloom", "Hirewell"],
    "incident paging": ["Pagerlark", "Alarmbell", "Wakeops"],
    "CI/CD": ["Buildkite Cloud", "Shipyard CI", "Forgeflow"],
}
IC_ROLES = ["Software Engineer", "Senior Software Engineer", "Staff Engineer",
            "Site Reliability Engineer", "Data Engineer", "Product Manager", "Product Designer",
            "QA Engineer", "Backend Engineer", "Frontend Engineer", "Data Scientist"]
GOALS = ["cut checkout latency in half", "move the remaining workloads to the new cluster",
         "replace the legacy batch jobs with streaming", "launch in two new markets",
         "consolidate the customer data model", "reduce cloud spend by a fifth",
         "rebuild the onboarding flow", "automate the quarterly compliance report",
         "introduce per-tenant rate limits", "retire the old monolith endpoints"]
# fmt: on


def _day(rng: random.Random, lo: date = date(2023, 3, 1), hi: date = date(2025, 5, 31)) -> date:
    return lo + timedelta(days=rng.randint(0, (hi - lo).days))


class _Builder:
    def __init__(self, people: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.n = max(12, people)
        self.names = NamePool(self.rng)
        company = Entity("company", "company", self.rng.choice(COMPANIES))
        company.short = company.name.split()[0]
        self.w = World(seed=seed, company=company)
        self.w.add(company)
        self.roster: dict[str, list[str]] = {}  # team id -> current members (lead first)
        self.counter: dict[str, int] = {}
        self.heads: dict[str, str] = {}  # division id -> head person id
        self.crew: dict[str, list[str]] = {}  # project id -> members (current lead first)

    def _id(self, kind: str) -> str:
        self.counter[kind] = self.counter.get(kind, 0) + 1
        return f"{kind}:{self.counter[kind]:06d}"

    # ------------------------------------------------------------------ people
    def person(self, given: str = "", family: str = "", fem: bool | None = None) -> Entity:
        if not given:
            given, family, fem = self.names.person()
        nick = NICKNAMES.get(given, "")
        e = Entity(self._id("person"), "person", f"{given} {family}", given=given, family=family,
                   nickname=nick, feminine=bool(fem), role=self.rng.choice(IC_ROLES))
        e.handle = handle_for(given, family, self.rng)
        e.slack_id = "U" + f"{int(e.id.split(':')[1]):07d}" + "X"
        return self.w.add(e)

    def people(self) -> list[Entity]:
        out: list[Entity] = []
        pairs = max(2, self.n // 25)
        confusable = list(CONFUSABLE)
        self.rng.shuffle(confusable)
        while len(out) < self.n:
            if pairs and len(out) + 2 <= self.n and confusable:
                a, b = confusable.pop()
                family = self.rng.choice(self.names.family)
                if self.names.reserve(a, family) and self.names.reserve(b, family):
                    pa = self.person(a, family, a in FEMININE)
                    pb = self.person(b, family, b in FEMININE)
                    self.w.confusables.append((pa.id, pb.id))
                    out += [pa, pb]
                    pairs -= 1
                continue
            out.append(self.person())
        self.rng.shuffle(out)
        return out

    # ------------------------------------------------------------------ org chart
    def build(self) -> World:
        w, rng = self.w, self.rng
        staff = self.people()
        n_teams = max(3, self.n // 8)
        n_div = max(2, n_teams // 6)
        ceo, heads = staff[0], staff[1 : 1 + n_div]
        leads = staff[1 + n_div : 1 + n_div + n_teams]
        rest = staff[1 + n_div + n_teams :]
        w.ceo = ceo.id
        ceo.role = "Chief Executive Officer"
        w.relate("works_at", "WORKS_AT", ceo.id, w.company.id, functional=False)

        cities = rng.sample(CITIES, min(len(CITIES), max(3, 2 + self.n // 400)))
        offices = []
        for city in cities:
            o = w.add(Entity(self._id("office"), "office", city, short=f"{city} office"))
            offices.append(o)
        for p in staff:
            w.relate("based_in", "LOCATED_IN", p.id, rng.choice(offices).id, functional=False)

        divisions = []
        for i, head in enumerate(heads):
            base = DIVISION_BASE[i] if i < len(DIVISION_BASE) else f"{DIVISION_BASE[i % 15]} {i}"
            d = w.add(Entity(self._id("division"), "division", f"{base} Division", short=base))
            divisions.append(d)
            head.role = f"VP of {base}"
            w.relate("division_head", "LEADS", head.id, d.id)
            self.heads[d.id] = head.id
            w.relate("reports_to", "REPORTS_TO", head.id, ceo.id)

        team_names = self._team_names(n_teams)
        teams = []
        for i, lead in enumerate(leads):
            name = team_names[i]
            t = w.add(Entity(self._id("team"), "team", f"{name} Team", short=name))
            teams.append(t)
            div = divisions[i % len(divisions)]
            w.relate("team_division", "MEMBER_OF", t.id, div.id)
            w.relate("team_office", "LOCATED_IN", t.id, rng.choice(offices).id)
            lead.role = "Engineering Manager"
            w.relate("team_lead", "LEADS", lead.id, t.id)
            w.relate("member_of", "MEMBER_OF", lead.id, t.id)
            w.relate("reports_to", "REPORTS_TO", lead.id, self._head(div.id))
            self.roster[t.id] = [lead.id]
        for i, p in enumerate(rest):
            t = teams[i % len(teams)] if i < len(teams) else rng.choice(teams)
            w.relate("member_of", "MEMBER_OF", p.id, t.id)
            w.relate("reports_to", "REPORTS_TO", p.id, self.roster[t.id][0])
            self.roster[t.id].append(p.id)
        self._systems(teams)
        self._projects(staff[1:])
        self._vendors()
        self._events(teams, divisions, offices)
        return w

    def _team_names(self, n: int) -> list[str]:
        combos = [f"{q} {b}".strip() if q in ("Data", "Web") else f"{b} {q}".strip()
                  for q in TEAM_QUALIFIER for b in TEAM_BASE]
        first = list(TEAM_BASE)
        self.rng.shuffle(first)
        others = [c for c in combos if c not in TEAM_BASE]
        self.rng.shuffle(others)
        names = (first + others)[:n]
        k = 2
        while len(names) < n:  # beyond 750 teams: numbered squads
            names += [f"{c} {k}" for c in first + others][: n - len(names)]
            k += 1
        return names

    def _head(self, division: str) -> str:
        return self.heads[division]

    def _systems(self, teams: list[Entity]) -> None:
        w, rng = self.w, self.rng
        techs = []
        for name, alias in TECHNOLOGIES:
            techs.append(w.add(Entity(self._id("technology"), "technology", name, short=alias)))
        n_sys = max(4, len(teams) * 3 // 2)
        bases = list(SYSTEM_BASE)
        rng.shuffle(bases)
        names = [f"{b} {k}" for k in SYSTEM_KIND for b in bases][:n_sys]
        k = 2
        while len(names) < n_sys:
            names += [f"{b} {s} {k}" for s in SYSTEM_KIND for b in bases][: n_sys - len(names)]
            k += 1
        systems: list[Entity] = []
        for i, name in enumerate(names):
            s = w.add(Entity(self._id("system"), "system", name, short=name.split()[0].lower()))
            owner = teams[i % len(teams)]
            w.relate("maintains", "MAINTAINS", owner.id, s.id, functional=False)
            for t in rng.sample(techs, rng.choice([1, 1, 2])):
                w.relate("uses", "USES", s.id, t.id, functional=False)
            window = systems[-30:]
            for dep in rng.sample(window, min(len(window), rng.choice([0, 1, 1, 2]))):
                w.relate("depends_on", "DEPENDS_ON", s.id, dep.id, functional=False)
            systems.append(s)
        self.systems, self.techs = systems, techs

    def _projects(self, people: list[Entity]) -> None:
        w, rng = self.w, self.rng
        n = max(3, self.n // 10)
        names = list(CODENAMES)
        rng.shuffle(names)
        seen = set(names)
        while len(names) < n:  # beyond the list: generated codenames
            word = syllable_name(rng, rng.choice([2, 3]))
            if word not in seen:
                seen.add(word)
                names.append(word)
        for word in names[:n]:
            pr = w.add(Entity(self._id("project"), "project", f"Project {word}", short=word))
            pr.started = _day(rng, date(2022, 6, 1), date(2024, 12, 1))
            pr.category = rng.choice(GOALS)
            crew = rng.sample(people, min(len(people), rng.randint(3, 6)))
            start = pr.started if pr.started > START else None
            w.relate("project_lead", "LEADS", crew[0].id, pr.id, start=start)
            self.crew[pr.id] = [m.id for m in crew]
            for m in crew:
                w.relate("project_member", "MEMBER_OF", m.id, pr.id, functional=False)
            for s in rng.sample(self.systems, min(len(self.systems), rng.choice([1, 2]))):
                w.relate("project_depends", "DEPENDS_ON", pr.id, s.id, functional=False)
            for t in rng.sample(self.techs, rng.choice([1, 2])):
                w.relate("project_uses", "USES", pr.id, t.id, functional=False)

    def _vendors(self) -> None:
        w, rng = self.w, self.rng
        cats = sorted(VENDOR_CATEGORIES)
        chosen = rng.sample(cats, min(len(cats), 3 + self.n // 2000))
        self.vendor_options: dict[str, list[Entity]] = {}
        for cat in chosen:
            opts = []
            for name in VENDOR_CATEGORIES[cat]:
                v = w.add(Entity(self._id("vendor"), "vendor", name, short=name.split()[0],
                                 category=cat))
                opts.append(v)
            self.vendor_options[cat] = opts
            # one functional timeline per category: label "vendor:<category>"
            w.relate("vendor:" + cat, "USES", w.company.id, opts[0].id)

    # ------------------------------------------------------------------ changes over time
    def _events(self, teams: list[Entity], divisions: list[Entity],
                offices: list[Entity]) -> None:
        w, rng = self.w, self.rng
        plan: list[tuple[date, str]] = []
        counts = {"lead_change": max(1, len(teams) // 3), "transfer": max(2, self.n // 10),
                  "reorg": max(1, len(teams) // 8), "office_move": max(1, len(teams) // 6),
                  "project_lead_change": max(1, len(self.w.of_kind("project")) // 3),
                  "vendor_swap": len(self.vendor_options)}
        for kind, k in counts.items():
            plan += [(_day(rng), kind) for _ in range(k)]
        plan.sort()
        vendor_cats = sorted(self.vendor_options)
        projects = w.of_kind("project")
        for day, kind in plan:
            if kind == "lead_change":
                self._lead_change(rng.choice(teams), day)
            elif kind == "transfer":
                self._transfer(teams, day)
            elif kind == "reorg" and len(divisions) > 1:
                t = rng.choice(teams)
                old = w.value("team_division", t.id, day)
                new = rng.choice([d for d in divisions if d.id != old])
                ended, started = w.change("team_division", t.id, new.id, day)
                ev = Event("reorg", day, t.id, old or "", new.id, [ended], [started])
                lead = self.roster[t.id][0]
                e2, s2 = w.change("reports_to", lead, self._head(new.id), day)
                ev.ended.append(e2)
                ev.started.append(s2)
                w.events.append(ev)
            elif kind == "office_move" and len(offices) > 1:
                t = rng.choice(teams)
                old = w.value("team_office", t.id, day)
                new = rng.choice([o for o in offices if o.id != old])
                ended, started = w.change("team_office", t.id, new.id, day)
                w.events.append(Event("office_move", day, t.id, old or "", new.id, [ended],
                                      [started]))
            elif kind == "project_lead_change":
                pr = rng.choice(projects)
                if pr.started and pr.started >= day:
                    continue
                crew = self.crew[pr.id]
                old, new = crew[0], rng.choice(crew[1:])
                ended, started = self._swap_subject("project_lead", old, new, pr.id, day)
                crew.remove(new)
                crew.insert(0, new)
                w.events.append(Event("project_lead_change", day, pr.id, old, new, [ended],
                                      [started]))
            elif kind == "vendor_swap":
                cat = vendor_cats.pop() if vendor_cats else None
                if cat is None:
                    continue
                old = w.value("vendor:" + cat, w.company.id, day)
                new = rng.choice([v for v in self.vendor_options[cat] if v.id != old])
                ended, started = w.change("vendor:" + cat, w.company.id, new.id, day)
                w.events.append(Event("vendor_swap", day, "vendor:" + cat, old or "", new.id,
                                      [ended], [started]))

    def _swap_subject(self, label: str, old: str, new: str, obj: str,
                      day: date) -> tuple[str, str]:
        """Relations keyed by the person (leads): close old's, open new's."""
        cur = next(self.w.relations[r] for r in self.w.timeline[(label, old)]
                   if self.w.relations[r].object == obj and self.w.relations[r].holds(day))
        cur.end = day
        rel = self.w.relate(label, cur.type, new, obj, start=day)
        return cur.id, rel.id

    def _lead_change(self, team: Entity, day: date) -> None:
        w = self.w
        roster = self.roster[team.id]
        if len(roster) < 3:
            return
        old, new = roster[0], self.rng.choice(roster[1:])
        ended, started = self._swap_subject("team_lead", old, new, team.id, day)
        ev = Event("lead_change", day, team.id, old, new, [ended], [started])
        div = w.value("team_division", team.id, day)
        e2, s2 = w.change("reports_to", new, self._head(div or ""), day)
        ev.ended.append(e2)
        ev.started.append(s2)
        for m in roster:
            if m != new:
                e3, s3 = w.change("reports_to", m, new, day)
                ev.ended.append(e3)
                ev.started.append(s3)
        roster.remove(new)
        roster.insert(0, new)
        w.entities[new].role, w.entities[old].role = "Engineering Manager", "Staff Engineer"
        w.events.append(ev)

    def _transfer(self, teams: list[Entity], day: date) -> None:
        w, rng = self.w, self.rng
        src = rng.choice(teams)
        for _ in range(20):  # a team with people to spare (no scan: 25k teams at 200k people)
            if len(self.roster[src.id]) > 3:
                break
            src = rng.choice(teams)
        if len(self.roster[src.id]) < 2 or len(teams) < 2:
            return
        person = rng.choice(self.roster[src.id][1:])
        dst = rng.choice(teams)
        while dst.id == src.id:
            dst = rng.choice(teams)
        ended, started = w.change("member_of", person, dst.id, day)
        e2, s2 = w.change("reports_to", person, self.roster[dst.id][0], day)
        self.roster[src.id].remove(person)
        self.roster[dst.id].append(person)
        w.events.append(Event("transfer", day, person, src.id, dst.id, [ended, e2],
                              [started, s2]))


def build_world(people: int = 50, seed: int = 7) -> World:
    """The world of ``people`` employees for ``seed`` (same inputs, same world)."""
    return _Builder(people, seed).build()


__all__ = ["END", "START", "build_world"]
