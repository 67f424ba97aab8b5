"""A latency corpus that looks like a project's memory, for `latency.py` (and its `parts`).

Each LoCoMo dev conversation is its own project, filled up to a size with DISTINCT distractor
memories from a seeded generator, so the head of a ranking holds real competitors instead of
near-copies of the answer ("(retold N)" in the old corpus):

- chat turns of invented people, dated like LoCoMo's turns and about the same kinds of life
  events (classes, trips, pets, jobs, families, books, concerts), never naming a speaker of the
  conversation they are added to;
- a project's decisions, conventions and facts about many invented services, people and dates
  (datastores, queues, owners, ports, limits, schedules, migrations, review rules).

Every distractor differs from every other (checked); the generator is a pure function of the
seed, the conversation and the size. Queries are the conversation's own dev questions, asked in
its project; recall is judged on the conversation's evidence turns exactly as in `locomo.py`.

    python benchmarks/corpus.py ../shared/data/locomo/locomo-dev.json --size 10000 --show 12

Run alone it prints the corpus's counts and a sample of distractors (stdout only); the other
harnesses import `project_items` and `questions`. tests/benchmarks/test_corpus.py checks it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import source, turns

SEED = 20261201


@dataclass(frozen=True)
class Item:
    """One memory to store: its text, validity start, source, and the LoCoMo dialog id it
    stands for (None for a distractor)."""

    text: str
    valid_from: str | None
    source_uri: str
    source_range: str
    dia_id: str | None

    def params(self, project: str):
        """The store request for this memory in `project` (a protocol.StoreParams)."""
        from memls import protocol

        return protocol.StoreParams(
            text=self.text,
            project=project,
            valid_from=self.valid_from,
            source_uri=self.source_uri,
            source_range=self.source_range,
        )


# --- vocabulary (invented; no LoCoMo speaker is in it: `_names` drops any that is) -------------

FIRST = (
    "Priya Tomas Ingrid Malik Rosa Dmitri Aiko Felix Nadia Osman Lena Jorge Keiko Samir Hanna "
    "Viktor Amara Theo Yusuf Clara Ravi Greta Mateo Leila Bruno Sofia Emeka Astrid Kofi Elena "
    "Hugo Mina Arjun Freya Tariq Noor Pavel Ines Kwame Lotte Diego Yara Anders Zainab Luca Maren "
    "Idris Beatriz Sven Chiara"
).split()
LAST = (
    "Okafor Lindqvist Haddad Moreau Tanaka Novak Castillo Brennan Ivanova Mensah Kowalski Rossi "
    "Nakamura Fischer Abara Duval Petrov Salazar Kim Varga"
).split()
ACTIVITIES = (
    "joined a pottery class at the community center",
    "ran my first half marathon along the river",
    "started volunteering at the animal shelter on weekends",
    "went camping by the lake with my cousins",
    "signed up for evening Spanish lessons",
    "adopted a grey kitten named Biscuit",
    "painted a mural for my niece's bedroom",
    "finished reading a novel about a lighthouse keeper",
    "took my kids to the science museum",
    "went to a jazz concert downtown",
    "started a vegetable garden in the backyard",
    "learned to bake sourdough bread",
    "visited my grandmother in the countryside",
    "got promoted to team lead at the clinic",
    "joined a chess club that meets on Thursdays",
    "went hiking in the mountains with friends from work",
    "started therapy to deal with stress",
    "hosted a board game night for the neighbours",
    "bought a second-hand piano",
    "went to a workshop on wildlife photography",
    "signed my daughter up for swimming lessons",
    "traveled to Lisbon for a friend's wedding",
    "started journaling every morning",
    "organised a charity bake sale at school",
    "built a bookshelf out of old pallets",
    "went to a support meeting for new parents",
    "took up rock climbing at the indoor gym",
    "planted tulips along the front path",
    "attended a poetry reading at the library",
    "moved into a small flat near the harbour",
    "went kayaking for the first time",
    "started learning the violin",
    "spent the weekend at a yoga retreat",
    "went to a pride parade with my partner",
    "fostered two puppies for a month",
    "gave a talk at a local career fair",
    "knitted a scarf for my brother",
    "went to a food festival with my sister",
    "repaired an old bicycle I found at a flea market",
    "joined a community choir",
)
FEELINGS = (
    "It was exhausting but so worth it.",
    "I felt really proud of myself.",
    "Honestly it calmed me down a lot.",
    "My family loved it.",
    "I can't wait to do it again.",
    "It reminded me of when I was a kid.",
    "It was harder than I expected.",
    "It made the whole week better.",
    "",
    "",
)
WHEN = (
    "last weekend",
    "yesterday",
    "last Friday",
    "two weeks ago",
    "this morning",
    "last month",
    "on Sunday",
    "a few days ago",
)
SERVICE_A = (
    "billing ledger search payments identity catalog shipping notification pricing inventory "
    "reporting onboarding checkout media scheduler audit gateway session analytics export"
).split()
SERVICE_B = "service api worker gateway pipeline store sync bridge indexer portal".split()
DATASTORES = "PostgreSQL MySQL Redis DynamoDB Cassandra MongoDB SQLite ClickHouse Elasticsearch"
QUEUES = "Kafka RabbitMQ SQS NATS Pulsar Redis Streams"
LANGUAGES = "Go Rust Python Kotlin TypeScript Java Elixir"
CI = "GitHub Actions, GitLab CI, Buildkite, Jenkins, CircleCI, Drone"
HOSTS = "EKS, GKE, Nomad, ECS, bare-metal hosts, Fly.io, Cloud Run"
FORMATS = "JSON, Protobuf, Avro, MessagePack, CSV"
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday".split()


def _names(exclude: set[str]) -> tuple[list[str], list[str]]:
    return [n for n in FIRST if n.lower() not in exclude], list(LAST)


def _chat(rng: random.Random, first: list[str], day: datetime) -> str:
    stamp = day.strftime("%-I:%M %p on %-d %B, %Y").replace("AM", "am").replace("PM", "pm")
    who = rng.choice(first)
    act = rng.choice(ACTIVITIES)
    feel = rng.choice(FEELINGS)
    when = rng.choice(WHEN)
    friend = rng.choice(first)
    shapes = (
        f"I {act} {when}! {feel}",
        f"Guess what, I {act} {when}. {feel}",
        f"{friend} and I {act.replace('my ', 'our ')} {when}. {feel}",
        f"So {when} I {act}, and {friend} came along. {feel}",
        f"Have I told you that I {act}? That was {when}. {feel}",
    )
    return f"[{stamp}] {who}: {rng.choice(shapes).strip()}"


def _fact(rng: random.Random, first: list[str], day: datetime) -> str:
    svc = f"{rng.choice(SERVICE_A)}-{rng.choice(SERVICE_B)}"
    person = f"{rng.choice(first)} {rng.choice(LAST)}"
    date = day.strftime("%Y-%m-%d")
    pick = rng.choice

    def one(names: str) -> str:
        return pick([n.strip() for n in (names.split(",") if "," in names else names.split())])

    a, b = one(DATASTORES), one(DATASTORES)
    shapes = (
        f"Decision ({date}): {svc} stores its records in {a}.",
        f"{svc} moved from {a} to {b} on {date}; {person} ran the migration.",
        f"Convention: every change to {svc} needs a review from {person}'s team before merge.",
        f"{svc} publishes its events to {one(QUEUES)} (decided {date}).",
        f"The {svc} listens on port {rng.randrange(3000, 9900)} in staging.",
        f"{person} owns {svc} since {date}.",
        f"{svc} is written in {one(LANGUAGES)}; new modules follow the same layout.",
        f"Rate limit for {svc}: {rng.choice((50, 100, 200, 500, 1000))} requests per minute "
        f"per client.",
        f"Backups of {svc} run every {pick(WEEKDAYS)} at {rng.randrange(0, 24):02d}:00 UTC.",
        f"CI for {svc} runs on {one(CI)}; {person} keeps the pipeline green.",
        f"{svc} is deployed to {one(HOSTS)} since {date}.",
        f"{svc} exchanges messages in {one(FORMATS)} with its clients.",
        f"Lesson ({date}): a missing index on {svc} slowed checkout for {rng.randrange(2, 60)} "
        f"minutes; {person} added it.",
        f"{person} prefers feature flags over long-lived branches for {svc}.",
        f"Logs of {svc} are kept for {rng.choice((7, 14, 30, 90, 365))} days.",
        f"On-call for {svc} rotates weekly; {person} starts on {pick(WEEKDAYS)}.",
    )
    return pick(shapes)


def distractors(
    sample: dict, count: int, seed: int = SEED, taken: set[str] | None = None
) -> Iterator[Item]:
    """`count` distinct distractors for one conversation's project, dated across its span."""
    conv = sample["conversation"]
    exclude = {conv["speaker_a"].lower(), conv["speaker_b"].lower()}
    first, _ = _names(exclude)
    dates = [d for _, _, w in turns(sample) if (d := w) is not None]
    start = datetime.fromisoformat(min(dates)) if dates else datetime(2023, 1, 1)
    span = (datetime.fromisoformat(max(dates)) - start).days + 30 if dates else 365
    rng = random.Random(f"{seed}:{sample['sample_id']}")
    seen = set(taken or ())
    made = 0
    tries = 0
    while made < count:
        tries += 1
        if tries > count * 50:
            raise RuntimeError(f"cannot make {count} distinct distractors (made {made})")
        day = start + timedelta(days=rng.randrange(span), minutes=rng.randrange(24 * 60))
        text = _chat(rng, first, day) if rng.random() < 0.55 else _fact(rng, first, day)
        if text in seen:
            continue
        seen.add(text)
        made += 1
        yield Item(
            text=text,
            valid_from=day.replace(second=0, microsecond=0).isoformat(),
            source_uri=f"distractor://{sample['sample_id']}/{made // 50}",
            source_range=f"{made % 50 + 1}-{made % 50 + 1}",
            dia_id=None,
        )


def project_items(sample: dict, size: int, seed: int = SEED) -> list[Item]:
    """The conversation's turns plus distractors up to `size`, interleaved in a seeded order
    (a project's memory accumulates both at once); turns keep their own order."""
    project = sample["sample_id"]
    real = []
    for dia_id, text, when in turns(sample):
        uri, lines = source(project, dia_id)
        real.append(Item(text, when, uri, lines, dia_id.strip()))
    fill = list(distractors(sample, max(0, size - len(real)), seed, {i.text for i in real}))
    rng = random.Random(f"{seed}:order:{project}")
    slots = sorted(rng.sample(range(len(real) + len(fill)), len(real)))
    out: list[Item] = []
    r = iter(real)
    d = iter(fill)
    slot = set(slots)
    for i in range(len(real) + len(fill)):
        out.append(next(r) if i in slot else next(d))
    return out


def questions(sample: dict, categories: tuple[int, ...] = (1, 2, 3, 4)) -> list[dict]:
    """The conversation's dev questions (with evidence dialog ids), asked in its project."""
    return [qa for qa in sample["qa"] if qa.get("category") in categories and qa.get("evidence")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--size", type=int, default=10000, help="memories per project")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--show", type=int, default=10, help="print this many distractors")
    args = parser.parse_args()
    samples = json.loads(Path(args.path).read_text())
    for sample in samples:
        items = project_items(sample, args.size, args.seed)
        texts = [i.text for i in items]
        assert len(set(texts)) == len(texts)
        n_real = sum(i.dia_id is not None for i in items)
        print(
            f"{sample['sample_id']}: {len(items)} memories ({n_real} turns, "
            f"{len(items) - n_real} distractors), {len(questions(sample))} questions"
        )
    for item in list(distractors(samples[0], args.show, args.seed)):
        print("  ", item.valid_from, item.text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
