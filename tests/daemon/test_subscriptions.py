"""Notifications through the owner's socket: a subscribed client hears conflicts; a scoped
subscription hears only its projects."""

from __future__ import annotations

import threading

import pytest

from daemon_helpers import PNPM, YARN, Heard, make_data
from memls import protocol as p
from memls.daemon import open_engine
from memls.errors import InvalidInput


def test_subscribed_client_receives_conflict_notifications(tmp_path, procs):
    data = make_data(tmp_path)
    procs.owner(data)
    got: list[tuple[str, object]] = []
    arrived = threading.Event()

    def listener(method, payload):
        got.append((method, payload))
        if method == "memory/conflicts":
            arrived.set()

    with open_engine(data, front="lsp") as remote, open_engine(data, front="cli") as quiet:
        remote.listeners.append(listener)  # subscribes the connection
        old = quiet.store(p.StoreParams(text=YARN, project="alpha"))
        remote.store(p.StoreParams(text="The API listens on port 8080", project="alpha"))
        new = quiet.store(p.StoreParams(text=PNPM, project="alpha"))
        assert remote.flush()
        assert arrived.wait(30), "no memory/conflicts notification"
        [note] = [payload for method, payload in got if method == "memory/conflicts"]
        assert isinstance(note, p.ConflictsNotification)
        # every notification is decoded into its protocol Struct
        assert all(isinstance(payload, p.NOTIFICATIONS[method]) for method, payload in got)
        assert note.project == "alpha" and note.id == new.id
        assert [(c.newer.id, c.older.id) for c in note.conflicts] == [(new.id, old.id)]
        assert not quiet._subscribed  # nobody listens there: no subscription
        listed = remote.conflicts(p.ConflictsParams(project="alpha")).conflicts
        assert [(c.newer.id, c.older.id) for c in listed] == [(new.id, old.id)]


def test_a_scoped_subscription_receives_only_its_projects(tmp_path, procs):
    data = make_data(tmp_path)
    procs.owner(data)
    scoped, everything = Heard(), Heard()
    with (
        open_engine(data, front="lsp") as window,
        open_engine(data, front="agent") as agent,
        open_engine(data, front="cli") as writer,
    ):
        window.subscribed_projects = frozenset({" alpha"})  # keys are normalised by the owner
        window.listeners.append(scoped)
        agent.listeners.append(everything)
        with pytest.raises(InvalidInput) as caught:  # a bad scope is refused, changes nothing
            window._request("$/subscribe", {"projects": "alpha"})
        assert caught.value.field == "projects"
        a = writer.store(p.StoreParams(text="Alpha deploys on Tuesdays", project="alpha"))
        b = writer.store(p.StoreParams(text="Beta deploys on Fridays", project="beta"))
        assert writer.flush()
        assert everything.wait(lambda got: {n.project for n in got} == {"alpha", "beta"})
        # the window's notification went out before the agent's second (one owner thread)
        assert scoped.wait(lambda got: a.id in {i for n in got for i in n.ids})
        assert {n.project for n in scoped.payloads} == {"alpha"}  # beta's never sent here
        assert b.id not in str(scoped.payloads)
        window.subscribe(["alpha", "beta"])  # widening replaces the scope
        writer.store(p.StoreParams(text="Beta also deploys on Mondays", project="beta"))
        assert scoped.wait(lambda got: "beta" in {n.project for n in got})
