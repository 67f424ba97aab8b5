"""Word tables of the contradiction scorer. Immutable: frozensets, tuples and read-only maps.

Words are written in their surface form; the scorer stems them once at import
(see `memls.conflicts.text.stem`) so every inflection matches.
"""

from __future__ import annotations

from types import MappingProxyType

# Function words: never evidence of a subject.
STOPWORDS = frozenset(
    """
    a an the and or but nor of to in on at for from by with as into onto via per than then
    is are was were be been being am do does did done has have had having will would shall
    should can could may might must it its it's this that these those there here
    we our ours us you your they their them he she his her i my me one's
    which who whom whose what when where why how
    all any every each some both either other another such same
    only just also too very so quite really even still already currently
    about after before until up down out off over under above below across against between
    through throughout including everywhere else etc e.g i.e
    if because since though although while whereas unless whether
    let lets get gets got
    """.split()
)

# Clause negators. "without" only negates the clause when another negator is present
# ("nobody deploys ... without approval" is a double negation).
NEGATORS = frozenset(
    """
    not no never none nobody nothing neither nor cannot can't don't doesn't didn't isn't
    aren't wasn't weren't won't wouldn't shouldn't mustn't haven't hasn't hadn't
    couldn't needn't n't
    """.split()
)
WEAK_NEGATOR = "without"

# The NEW text says the world changed. Multi-word markers are matched as phrases.
UPDATE_MARKERS: tuple[str, ...] = (
    "from now on",
    "going forward",
    "no longer",
    "not anymore",
    "any more",
    "anymore",
    "used to",
    "instead of",
    "in favor of",
    "in favour of",
    "took over",
    "taken over",
    "takes over",
    "moved to",
    "moved from",
    "moved off",
    "switch to",
    "changed to",
    "changed from",
    "as of",
    "now",
    "switched",
    "switching",
    "migrated",
    "migrating",
    "replaced",
    "replacing",
    "renamed",
    "deprecated",
    "dropped",
    "stopped",
    "upgraded",
    "downgraded",
    "bumped",
    "superseded",
    "retired",
)

# A clause that talks about the past does not assert the present.
PAST_MARKERS: tuple[str, ...] = (
    "used to",
    "previously",
    "formerly",
    "originally",
    "before the",
    "back in",
    "in the past",
    "years ago",
    "ago",
    "initially",
    "at first",
    "first version",
    "early days",
    "at the time",
)

# The new text adds to the old one instead of replacing it.
ADDITIVE_MARKERS: tuple[str, ...] = ("also", "too", "as well", "additionally", "in addition")

# Verbs and value descriptors that say little about WHAT a statement is about.
# They count for lexical similarity but not when deciding whether two clauses share a subject.
GENERIC = frozenset(
    """
    use uses used using run runs ran running get set make makes go goes went gone
    keep keeps kept retain retains retained hold holds held live lives sit sits
    need needs needed require requires required take takes took put write writes written
    wrote happen happens done handle handles handled work works
    be is are become becomes stay stays reach reaches
    size number count amount limit limited limits max maximum min minimum total value
    version port long last lasts valid expire expires expired expiry
    default defaults
    """.split()
)

# Scope qualifiers: two statements whose qualifiers of one class are disjoint are about
# different scopes ("in staging" vs "in production").
QUALIFIER_CLASSES: tuple[frozenset[str], ...] = (
    frozenset({"production", "staging", "development", "qa", "sandbox", "preview"}),
    frozenset({"ios", "android", "web", "macos", "windows", "linux", "desktop"}),
    frozenset({"frontend", "backend"}),
)

# Abbreviations and spellings folded before stemming.
ABBREVIATIONS = MappingProxyType(
    {
        "prod": "production",
        "stg": "staging",
        "dev": "development",
        "devs": "developers",
        "db": "database",
        "dbs": "databases",
        "repo": "repository",
        "repos": "repositories",
        "e2e": "end-to-end",
        "k8s": "kubernetes",
        "env": "environment",
        "envs": "environments",
        "configuration": "config",
        "configs": "config",
        "infra": "infrastructure",
        "deps": "dependencies",
        "pr": "pull-request",
        "prs": "pull-requests",
        "synchronous": "sync",
        "synchronously": "sync",
        "asynchronous": "async",
        "asynchronously": "async",
        "automatically": "automatic",
        "manually": "manual",
        "frontend": "frontend",
        "front-end": "frontend",
        "back-end": "backend",
        "denied": "deny",
        "denies": "deny",
        "kept": "keep",
        "held": "hold",
        "ran": "run",
        "went": "go",
        "gone": "go",
        "took": "take",
        "built": "build",
        "wrote": "write",
        "written": "write",
        "allowlisted": "allowlist",
        "denylisted": "denylist",
    }
)

# Opposites, each pair read both ways. "on"/"off" only count as predicates
# ("is on", "turned off"); see `text.predicate_switch`.
ANTONYM_PAIRS: tuple[tuple[str, str], ...] = (
    ("enable", "disable"),
    ("allow", "deny"),
    ("allow", "forbid"),
    ("accept", "reject"),
    ("light", "dark"),
    ("sync", "async"),
    ("on", "off"),
    ("open", "closed"),
    ("public", "private"),
    ("read-only", "read-write"),
    ("soft", "hard"),
    ("stateless", "stateful"),
    ("push", "pull"),
    ("client-side", "server-side"),
    ("horizontal", "vertical"),
    ("ephemeral", "persistent"),
    ("mutable", "immutable"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("include", "exclude"),
    ("allowlist", "denylist"),
    ("whitelist", "blacklist"),
    ("lazy", "eager"),
    ("manual", "automatic"),
    ("encrypted", "unencrypted"),
    ("blocking", "non-blocking"),
    ("online", "offline"),
    ("strict", "loose"),
    ("inbound", "outbound"),
    ("ascending", "descending"),
    ("visible", "hidden"),
    ("increase", "decrease"),
    ("static", "dynamic"),
    ("opt-in", "opt-out"),
)

# Verbs after which "on"/"off" is a state ("is on", "turned off"), not a preposition.
SWITCH_VERBS = frozenset(
    "is are was were be been turn turned turns switch switched switches set stays stay "
    "kept keep left toggle toggled".split()
)
ARTICLES = frozenset("the a an our your its their every each this that".split())

# Numbers written as words.
WORD_NUMBERS = MappingProxyType(
    {
        "zero": 0,
        "one": 1,
        "two": 2,
        "three": 3,
        "four": 4,
        "five": 5,
        "six": 6,
        "seven": 7,
        "eight": 8,
        "nine": 9,
        "ten": 10,
        "eleven": 11,
        "twelve": 12,
        "fifteen": 15,
        "twenty": 20,
        "thirty": 30,
        "forty": 40,
        "fifty": 50,
        "sixty": 60,
        "ninety": 90,
        "hundred": 100,
        "a": 1,
        "an": 1,
        "single": 1,
    }
)

# Units -> (kind, factor to a base unit: bytes or seconds, or 1 for percent).
UNITS = MappingProxyType(
    {
        **{u: ("size", 1.0) for u in ("b", "byte", "bytes")},
        **{u: ("size", 1e3) for u in ("kb", "kilobyte", "kilobytes")},
        **{u: ("size", 1024.0) for u in ("kib",)},
        **{u: ("size", 1e6) for u in ("mb", "megabyte", "megabytes")},
        **{u: ("size", 1024.0**2) for u in ("mib",)},
        **{u: ("size", 1e9) for u in ("gb", "gigabyte", "gigabytes")},
        **{u: ("size", 1024.0**3) for u in ("gib",)},
        **{u: ("size", 1e12) for u in ("tb", "terabyte", "terabytes")},
        **{u: ("size", 1024.0**4) for u in ("tib",)},
        **{u: ("duration", 1e-3) for u in ("ms", "millisecond", "milliseconds")},
        **{u: ("duration", 1.0) for u in ("s", "sec", "secs", "second", "seconds")},
        **{u: ("duration", 60.0) for u in ("m", "min", "mins", "minute", "minutes")},
        **{u: ("duration", 3600.0) for u in ("h", "hr", "hrs", "hour", "hours")},
        **{u: ("duration", 86400.0) for u in ("d", "day", "days")},
        **{u: ("duration", 7 * 86400.0) for u in ("w", "wk", "week", "weeks")},
        **{u: ("duration", 30 * 86400.0) for u in ("month", "months")},
        **{u: ("duration", 365 * 86400.0) for u in ("y", "yr", "yrs", "year", "years")},
        "%": ("percent", 1.0),
        "percent": ("percent", 1.0),
        "am": ("clock", 0.0),
        "pm": ("clock", 12.0),
    }
)

# Words after a number that make it a version tag, not a count ("Node 20 LTS").
VERSION_SUFFIXES = frozenset({"lts", "beta", "alpha", "rc", "esr", "and", "or"})

# Words whose presence in a clause makes a bare 2-5 digit number a port.
PORT_CUES = frozenset(
    {
        "port",
        "ports",
        "listen",
        "listens",
        "listening",
        "expose",
        "exposes",
        "exposed",
        "serve",
        "serves",
        "served",
        "localhost",
        "bind",
        "binds",
    }
)

# Prepositions that introduce a year ("in 2021").
YEAR_PREPOSITIONS = frozenset(
    {"in", "since", "until", "by", "of", "from", "during", "early", "late", "mid"}
)

# After a duration, these make it an offset from another event, not a span.
OFFSET_WORDS = frozenset({"before", "after", "earlier", "later", "ahead", "prior", "early", "late"})

# Irregular participles: predicate words, not subject words ("built on every commit").
IRREGULAR_PARTICIPLES = frozenset(
    "built kept held written done made taken given shown known sent found paid spun".split()
)

# The member of an antonym pair that reads as a negation ("disabled" ~ "not enabled").
NEGATIVE_MEMBERS = frozenset(
    {
        "disable",
        "deny",
        "forbid",
        "reject",
        "off",
        "closed",
        "exclude",
        "denylist",
        "blacklist",
        "unencrypted",
        "hidden",
        "opt-out",
        "decrease",
    }
)

# When the statement was made ("last sprint", "yesterday"), not what it is about: never subject
# words. Frequencies ("every night", "nightly") are content and stay.
TIME_DEICTICS = ("last", "this", "next")
TIME_PERIODS = ("sprint", "week", "month", "quarter", "year", "release", "night", "time")
TIME_ADVERBS = ("yesterday", "today", "tomorrow", "tonight", "recently", "lately", "nowadays")

# How often something happens, said in words: a period in seconds ("weekly", "every night").
# A frequency is a periodic duration ("every 6 hours"), compared with the other periods of
# the same subject.
FREQUENCY_ADVERBS = MappingProxyType(
    {
        "hourly": 3600.0,
        "daily": 86400.0,
        "nightly": 86400.0,
        "weekly": 7 * 86400.0,
        "fortnightly": 14 * 86400.0,
        "biweekly": 14 * 86400.0,
        "monthly": 30 * 86400.0,
        "quarterly": 90 * 86400.0,
        "yearly": 365 * 86400.0,
        "annually": 365 * 86400.0,
    }
)
# Nouns of a period after "every" / "once a" / "each" ("every night", "once a week").
PERIOD_NOUNS = MappingProxyType(
    {
        "hour": 3600.0,
        "day": 86400.0,
        "night": 86400.0,
        "morning": 86400.0,
        "evening": 86400.0,
        "week": 7 * 86400.0,
        "month": 30 * 86400.0,
        "quarter": 90 * 86400.0,
        "year": 365 * 86400.0,
    }
)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# "every second week", "every other day": how many periods between two runs.
ORDINAL_STEPS = MappingProxyType({"other": 2, "second": 2, "third": 3, "fourth": 4})
# "twice a day": runs per period.
TIMES_PER = MappingProxyType({"once": 1, "twice": 2, "thrice": 3})
# Fractions of a unit ("half an hour", "a quarter of an hour").
FRACTIONS = MappingProxyType({"half": 0.5, "quarter": 0.25})
