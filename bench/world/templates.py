"""Phrasings per fact type: active, passive, reordered, possessive, clipped and chatty forms.

``{s}`` is the subject's surface form, ``{o}`` the object's; a template starting with
``{s}`` may have it replaced by a pronoun when the subject was named just before.
Chat templates are used in Slack only. Every fact type has at least six phrasings.
"""

from __future__ import annotations

# fmt: off
PROSE: dict[str, list[str]] = {
    "team_lead": [
        "{s} leads the {o}.", "The {o} is led by {s}.", "{s} is the engineering manager of the {o}.",
        "{s} runs the {o}.", "The manager of the {o} is {s}.", "{s} heads up the {o}.",
        "Questions about the {o} go to its lead, {s}.", "{s} has been in charge of the {o} for a while now.",
    ],
    "member_of": [
        "{s} is a member of the {o}.", "{s} works on the {o}.", "{s} is part of the {o}.",
        "The {o} includes {s}.", "{s} sits on the {o}.", "Among the engineers of the {o} is {s}.",
        "{s} is one of the people on the {o}.",
    ],
    "reports_to": [
        "{s} reports to {o}.", "{o} is the manager of {s}.", "{s} is managed by {o}.",
        "{o} manages {s}.", "{s} reports directly to {o}.", "{o} has {s} as a direct report.",
        "The line manager of {s} is {o}.",
    ],
    "team_division": [
        "The {s} is part of the {o}.", "The {s} sits in the {o}.", "The {o} includes the {s}.",
        "The {s} belongs to the {o}.", "Organisationally, the {s} falls under the {o}.",
        "The {s} is one of the teams of the {o}.",
    ],
    "team_office": [
        "The {s} is based in {o}.", "The {s} sits in the {o} office.", "The {s} works out of {o}.",
        "{o} is home to the {s}.", "Most of the {s} is located in {o}.",
        "The office of the {s} is in {o}.",
    ],
    "based_in": [
        "{s} is based in {o}.", "{s} works out of the {o} office.", "{s} sits in {o}.",
        "{s} is located in {o}.", "The {o} office is where {s} works.", "{s} works from {o}.",
    ],
    "project_lead": [
        "{s} leads {o}.", "{o} is led by {s}.", "{s} is the lead of {o}.", "{s} owns {o}.",
        "The lead for {o} is {s}.", "{s} is running {o}.", "{o} has {s} as its lead.",
    ],
    "project_member": [
        "{s} works on {o}.", "{s} is on {o}.", "{s} contributes to {o}.",
        "{o} counts {s} among its contributors.", "{s} is staffed on {o}.",
        "{s} is part of the {o} crew.",
    ],
    "maintains": [
        "The {s} maintains the {o}.", "The {o} is maintained by the {s}.", "The {s} owns the {o}.",
        "The {o} is owned by the {s}.", "The {s} is responsible for the {o}.",
        "On-call for the {o} is handled by the {s}.", "The {o} belongs to the {s}.",
    ],
    "uses": [
        "The {s} uses {o}.", "The {s} is built on {o}.", "The {s} runs on {o}.",
        "{o} powers the {s}.", "The {s} relies on {o} under the hood.",
        "The {s} stores its state in {o}.",
    ],
    "depends_on": [
        "The {s} depends on the {o}.", "The {s} calls the {o}.",
        "The {s} has a hard dependency on the {o}.", "When the {o} is down, the {s} fails too.",
        "The {o} is upstream of the {s}.", "The {s} relies on the {o}.",
    ],
    "project_depends": [
        "{s} depends on the {o}.", "{s} needs the {o}.", "{s} builds on the {o}.",
        "The {o} is a dependency of {s}.", "{s} cannot ship without the {o}.",
        "{s} relies on the {o}.",
    ],
    "project_uses": [
        "{s} uses {o}.", "{s} is built with {o}.", "{o} is part of the stack of {s}.",
        "{s} adopted {o}.", "{s} runs on {o}.", "The stack of {s} includes {o}.",
    ],
    "division_head": [
        "{s} heads the {o}.", "{s} runs the {o}.", "The {o} is led by {s}.",
        "{s} is the VP in charge of the {o}.", "The head of the {o} is {s}.",
        "{s} leads the {o}.",
    ],
    "vendor": [
        "{s} uses {o} for {cat}.", "Our {cat} vendor is {o}.", "{o} provides {cat} for {s}.",
        "{s} relies on {o} for {cat}.", "{cat} is handled by {o}.",
        "The {cat} contract of {s} is with {o}.",
    ],
    "works_at": [
        "{s} is the CEO of {o}.", "{o} is run by {s}.", "{s} runs {o} as chief executive.",
        "The chief executive of {o} is {s}.", "{s} founded and leads {o}.",
        "{o}'s CEO is {s}.",
    ],
}

CHAT: dict[str, list[str]] = {
    "team_lead": ["{s} is our lead now", "ask {s}, {s} runs the {o}", "{s} is the {o} EM btw",
                  "fyi {s} manages the {o}", "{o} lead = {s}", "ping {s}, they lead {o}"],
    "member_of": ["{s} is on the {o} fwiw", "{s} is in the {o} afaik", "{s} works on the {o}",
                  "{s} from the {o} can help", "{s} (the {o}) knows this",
                  "{s} is one of ours on the {o}"],
    "reports_to": ["{s} reports to {o} iirc", "{o} is {s}'s manager", "{s} rolls up to {o}",
                   "{o} manages {s}", "check with {o}, {s} reports to them",
                   "{s}'s boss is {o}"],
    "based_in": ["{s} is in {o}", "{s} sits in the {o} office", "{s} is based out of {o}",
                 "{s} works from {o}", "{s} is over in {o}", "{s} is {o}-based"],
    "project_lead": ["{s} is running {o}", "{o} is {s}'s baby", "{s} leads {o}",
                     "{s} owns {o} now", "{o} lead is {s}", "talk to {s} about {o}"],
    "maintains": ["the {s} owns the {o}", "{o} belongs to the {s}",
                  "the {s} is on call for the {o}", "{o} is maintained by the {s}",
                  "the {s} maintains {o}", "file it with the {s}, they own the {o}"],
    "depends_on": ["the {s} calls the {o}", "{s} depends on {o}", "if {o} is down {s} breaks",
                   "{s} has a hard dep on {o}", "{o} is upstream of {s}",
                   "{s} relies on {o}"],
    "uses": ["{s} runs on {o}", "{s} uses {o}", "{s} is on {o}", "{s} is built on {o}",
             "{o} backs the {s}", "{s} talks to {o}"],
}
# First person (the speaker is the subject).
FIRST_PERSON: dict[str, list[str]] = {
    "member_of": ["I'm on the {o}", "I work on the {o}", "I'm part of the {o} these days",
                  "as someone on the {o}, +1", "I joined the {o} a while back",
                  "speaking for the {o} (my team)"],
    "reports_to": ["I report to {o}", "my manager is {o}", "{o} is my manager, I'll check",
                   "I'll ask {o}, my manager", "I roll up to {o}", "{o} is my boss"],
    "based_in": ["I'm based in {o}", "I work out of the {o} office", "I sit in {o}",
                 "I'm in {o}, so mornings work", "greetings from {o}", "I'm {o}-based"],
    "project_lead": ["I'm leading {o}", "I run {o}, ping me", "I own {o}",
                     "as the lead of {o}, I'll decide", "I lead {o}", "I'm the {o} lead"],
}

# Change announcements: {old}, {new}, {subj} and {date}.
CHANGE: dict[str, list[str]] = {
    "lead_change": [
        "Effective {date}, {new} takes over the {subj} from {old}.",
        "As of {date}, {new} leads the {subj}; {old} led it until then.",
        "Starting {date}, the {subj} is led by {new}, who replaces {old}.",
        "{old} handed the {subj} over to {new} on {date}.",
        "From {date} on, {new} is the manager of the {subj}. Until then {old} led the team.",
        "On {date} {new} became the lead of the {subj}, succeeding {old}.",
    ],
    "transfer": [
        "Effective {date}, {subj} moves from the {old} to the {new}.",
        "{subj} left the {old} and joined the {new} on {date}.",
        "As of {date}, {subj} is part of the {new}; before that, {subj} was on the {old}.",
        "On {date} {subj} transferred to the {new} from the {old}.",
        "Starting {date}, {subj} works on the {new} (previously the {old}).",
        "Please welcome {subj} to the {new}! {subj} joins from the {old} as of {date}.",
    ],
    "reorg": [
        "Effective {date}, the {subj} moves from the {old} to the {new}.",
        "As part of the reorganisation on {date}, the {subj} joins the {new}; it was in the {old}.",
        "Starting {date}, the {subj} is part of the {new} instead of the {old}.",
        "On {date} the {subj} was moved out of the {old} into the {new}.",
        "From {date}, the {new} includes the {subj}, previously under the {old}.",
        "The {subj} left the {old} for the {new} on {date}.",
    ],
    "office_move": [
        "Effective {date}, the {subj} moves from {old} to {new}.",
        "On {date} the {subj} relocated from the {old} office to the {new} office.",
        "As of {date}, the {subj} is based in {new}; it used to sit in {old}.",
        "Starting {date}, the {subj} works out of {new} rather than {old}.",
        "The {subj} left {old} for {new} on {date}.",
        "From {date} the {subj} is located in {new} (previously {old}).",
    ],
    "project_lead_change": [
        "Effective {date}, {new} takes over {subj} from {old}.",
        "As of {date}, {subj} is led by {new}; {old} led it until then.",
        "{old} handed {subj} to {new} on {date}.",
        "Starting {date}, {new} is the lead of {subj}, replacing {old}.",
        "On {date} {new} became the lead of {subj}, succeeding {old}.",
        "From {date}, {subj} has a new lead: {new} (before: {old}).",
    ],
    "vendor_swap": [
        "Effective {date}, we switch {subj} from {old} to {new}.",
        "As of {date}, {new} replaces {old} for {subj}.",
        "On {date} we moved {subj} off {old} and onto {new}.",
        "Starting {date}, {subj} is provided by {new} instead of {old}.",
        "We ended the {old} contract for {subj} on {date}; {new} takes over.",
        "From {date}, our {subj} vendor is {new} (previously {old}).",
    ],
}

BANTER = [
    "anyone up for lunch?", "coffee machine on 3 is broken again", "lol", "nice work everyone",
    "happy friday!", "who took my charger", "brb", "that build was slow today",
    "can someone review my PR when they get a chance", "standup in 5", "thx!",
    "the wifi is flaky again", "ship it", "good morning all", "did anyone see the game last night",
    "+1", "ack, looking", "will do", "sounds good to me", "let's take it offline",
    "deploy is green now", "is there a ticket for this?", "I can take a look after standup",
    "retro notes are in the doc", "who's on call this week?", "merging now",
]
FILLER = [
    "We agreed to revisit the {topic} next sprint.", "The {topic} is still open and needs an owner.",
    "Most of the discussion was about the {topic}.", "There was a short debate about the {topic}.",
    "A draft of the {topic} is in the shared folder.", "The {topic} slipped by a week.",
    "Feedback on the {topic} was mostly positive.", "Error rates stayed within budget.",
    "Two tickets were closed and three were opened.", "The last deploy went out without rollbacks.",
    "Please comment on the page rather than in chat.", "Nothing else was raised.",
]
TOPICS = ["retry budget", "alerting thresholds", "on-call handover", "release checklist",
          "load test plan", "error budget", "schema migration", "API versioning policy",
          "cloud cost report", "capacity plan", "runbook review", "quarterly roadmap",
          "latency targets", "access review", "disaster recovery drill", "hiring plan"]
TYPOS = {"the": "teh", "because": "becuase", "really": "realy", "tomorrow": "tomorow",
         "definitely": "definately", "separate": "seperate", "review": "reveiw",
         "receive": "recieve", "thanks": "thx", "please": "pls", "about": "abt",
         "deploy": "deplyo", "meeting": "meeitng"}
# fmt: on
