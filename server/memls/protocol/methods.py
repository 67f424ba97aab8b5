"""The method table: every memory/* request, the engine method behind it, its wire types."""

from __future__ import annotations

from typing import Any

import msgspec

from memls.protocol.agents import ContextParams, ContextResult, PromoteParams, PromoteResult
from memls.protocol.citations import (
    CheckParams,
    CheckResult,
    CitationsParams,
    CitationsResult,
    ReconfirmParams,
    ReconfirmResult,
)
from memls.protocol.conflicts import (
    CheckPairParams,
    ConflictsNotification,
    ConflictsParams,
    ConflictsResult,
    ResolveParams,
    ResolveResult,
    Verdict,
)
from memls.protocol.imports import ImportFromParams, ImportFromResult
from memls.protocol.records import Memory
from memls.protocol.requests import (
    AuditParams,
    AuditResult,
    ChangedNotification,
    DeadLettersResult,
    DoctorParams,
    DoctorResult,
    FeedbackParams,
    FeedbackResult,
    ForgetParams,
    ForgetResult,
    ForgottenParams,
    ForgottenResult,
    GetParams,
    HealthParams,
    HealthResult,
    IngestParams,
    IngestResult,
    ListParams,
    ListResult,
    MaintainParams,
    MaintainResult,
    ProgressNotification,
    QueryParams,
    QueryResult,
    ReindexParams,
    ReindexResult,
    ReviewParams,
    ReviewResult,
    StatsParams,
    StatsResult,
    StoreParams,
    StoreResult,
    SupersedeParams,
    SupersedeResult,
    SyncNoteParams,
    SyncNoteResult,
)
from memls.protocol.watching import (
    UnwatchParams,
    UnwatchResult,
    WatchedParams,
    WatchedResult,
    WatchParams,
    WatchResult,
)


class Method(msgspec.Struct, frozen=True):
    """One memory/* request: the engine method behind it and its wire types."""

    engine: str
    params: type[Any]
    result: type[Any]


METHODS: dict[str, Method] = {
    "memory/store": Method("store", StoreParams, StoreResult),
    "memory/query": Method("query", QueryParams, QueryResult),
    "memory/get": Method("get", GetParams, Memory),
    "memory/list": Method("list", ListParams, ListResult),
    "memory/feedback": Method("feedback", FeedbackParams, FeedbackResult),
    "memory/forget": Method("forget", ForgetParams, ForgetResult),
    "memory/supersede": Method("supersede", SupersedeParams, SupersedeResult),
    "memory/review": Method("review", ReviewParams, ReviewResult),
    "memory/forgotten": Method("forgotten", ForgottenParams, ForgottenResult),
    "memory/conflicts": Method("conflicts", ConflictsParams, ConflictsResult),
    "memory/resolve": Method("resolve", ResolveParams, ResolveResult),
    "memory/checkPair": Method("check_pair", CheckPairParams, Verdict),
    "memory/stats": Method("stats", StatsParams, StatsResult),
    "memory/audit": Method("audit", AuditParams, AuditResult),
    "memory/maintain": Method("maintain", MaintainParams, MaintainResult),
    "memory/deadLetters": Method("dead_letters", MaintainParams, DeadLettersResult),
    "memory/reindex": Method("reindex", ReindexParams, ReindexResult),
    "memory/doctor": Method("doctor", DoctorParams, DoctorResult),
    "memory/syncNote": Method("sync_note", SyncNoteParams, SyncNoteResult),
    "memory/health": Method("health", HealthParams, HealthResult),
    "memory/ingest": Method("ingest", IngestParams, IngestResult),
    "memory/importFrom": Method("import_from", ImportFromParams, ImportFromResult),
    "memory/check": Method("check_citations", CheckParams, CheckResult),
    "memory/citations": Method("citations", CitationsParams, CitationsResult),
    "memory/reconfirm": Method("reconfirm", ReconfirmParams, ReconfirmResult),
    "memory/context": Method("context", ContextParams, ContextResult),
    "memory/promote": Method("promote", PromoteParams, PromoteResult),
    "memory/watch": Method("watch", WatchParams, WatchResult),
    "memory/unwatch": Method("unwatch", UnwatchParams, UnwatchResult),
    "memory/watched": Method("watched", WatchedParams, WatchedResult),
}
"""Every engine operation reachable over the wire (LSP requests and the owner's socket)."""

NOTIFICATIONS: dict[str, type] = {
    "memory/conflicts": ConflictsNotification,
    "memory/changed": ChangedNotification,
    "memory/progress": ProgressNotification,
}
"""Server-to-client notifications."""
