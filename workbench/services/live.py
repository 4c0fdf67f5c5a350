"""Following transcripts while their agent writes them (``workbench watch``, R-LIVE-1).

A :class:`Watcher` looks at a Claude Code project folder, a Codex sessions folder or one file. When
a transcript grows, the complete lines written so far are imported (a last line without its newline
is waited for: the agent is still writing it), the session's ``default`` replay is made on the grown
session, and then the stored session of that file is updated in place, under the same id
(:mod:`workbench.storage.live`), and the replay saved right after it, so the two change in the store
moments apart. A file that no longer extends its stored session (cut short, replaced by another
transcript, renamed over with another beginning) never rewrites it (R-LIVE-2): its content is
stored as a new session, as an import of it would store it (the session id, suffixed with the
content hash when that id is taken), the update names the session left as it was
(:attr:`LiveUpdate.replaced`), and from then on the file is followed as that new session. The replay engine's steps depend only on what was recorded before
them, so the replayed steps of the shorter session stay as they were and new responses add steps
at the end; replaying again in a long-running process reuses the token counts it already made
(about 1.2 s for 217 steps of a real Claude Code session).

File changes wake the watcher through ``watchdog``: the operating system's file-system events, and
watchdog's ``PollingObserver`` (every ``interval`` seconds it compares each file's size and
modification time) for anything an event missed, as on a network file system. A wake looks at
every followed file and imports those whose size or modification time changed.

While a watcher runs it touches a heartbeat file per followed session under
``$WORKBENCH_HOME/live`` (written like every other file, never through a symbolic link); the app treats a session as live while its heartbeat is recent
(:func:`is_live`) and then reruns its pages when the session changes (:func:`live_version`).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from iris.compaction.thresholds import thresholds

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver
from iris.errors import IrisError, SessionFormatError
from iris.frozen import FrozenModel
from iris.replay import largest_prompt
from iris.safe_files import write_file

from ..importers import ImportResult, load_session
from ..importers._source import is_gzip, read_bytes
from ..importers.files import session_files
from ..storage.live import session_of_source, update_session
from ..storage.store import Store, workbench_home
from .presets import load_preset
from .replay import DEFAULT_REPLAY_NAME, replay_session

__all__ = [
    "AGENT_PROFILES",
    "LIVE_SECONDS",
    "AgentLine",
    "LiveUpdate",
    "LiveVersion",
    "Watcher",
    "agent_line",
    "complete_lines",
    "is_live",
    "live_version",
]

#: The agent profile (a preset, docs/profiles.md) whose compaction line a session's format follows.
AGENT_PROFILES = {"claude_code": ("claude-code", "Claude Code"), "codex": ("codex", "Codex")}
#: How long after the last heartbeat of ``workbench watch`` a session still counts as live.
LIVE_SECONDS = 10.0


class LiveUpdate(FrozenModel):
    """What one look at a grown transcript did."""

    path: str
    session_id: str
    created: bool
    """True when the file was stored for the first time."""
    replaced: str | None = None
    """The stored session the file no longer extends (left as it was, with its replays): the file's
    content is ``session_id`` instead, a new session (or one already holding that content)."""
    messages: int
    responses: int
    written: int
    """Message rows written (new ones, and the last one when the agent completed it)."""
    waiting_bytes: int = 0
    """Bytes of a last line still being written (not imported yet)."""
    replay_steps: int | None = None
    """Steps of the ``default`` replay made again (None: no replay made)."""
    seconds: float = 0.0


class AgentLine(FrozenModel):
    """How close a session is to its agent's own compaction line."""

    agent: str
    """The agent's name, e.g. ``Claude Code``."""
    line: int
    """The whole request at which the agent compacts (its profile's threshold line)."""
    tokens: int | None
    """The agent's own count of its last request: the last response's prompt plus output."""
    responses: int


def complete_lines(path: Path) -> tuple[bytes, int]:
    """The file's content up to its last newline, and how many bytes come after it (a line being
    written). A gzip file is read whole: it is not being appended to."""
    if is_gzip(path):
        return read_bytes(path), 0
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    return data[:end], len(data) - end


class _Follower:
    """Imports grown transcripts into the store, each from a private copy of its complete lines."""

    def __init__(self, store: Store, *, replay: bool) -> None:
        self.store, self.replay = store, replay
        self.folder = Path(tempfile.mkdtemp(prefix="workbench-watch-"))
        self._followed: dict[str, str] = {}  # resolved path → the session it is followed as

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def follow(self, path: Path) -> LiveUpdate | None:
        """Import what ``path`` holds now; None while it holds no complete line."""
        started = time.perf_counter()
        data, waiting = complete_lines(path)
        if not data.strip():
            return None
        source = str(path.resolve())
        copy = self.folder / hashlib.sha256(source.encode()).hexdigest()[:16] / path.name
        copy.parent.mkdir(exist_ok=True)
        copy.write_bytes(data)
        try:
            result = load_session(copy)
        except SessionFormatError as exc:  # named by the watched file, not the private copy
            raise SessionFormatError(exc.problem, path=path, line=exc.line, field=exc.field) from None
        session_id = self._followed.get(source)
        if session_id is None or not self.store.content_hash(session_id):  # deleted meanwhile
            session_id = session_of_source(self.store, source)
        stale = session_id is None or self.store.content_hash(session_id) != result.content_hash
        if session_id is not None and self.store.replays.find(session_id, DEFAULT_REPLAY_NAME) is None:
            stale = True
        # The replay is made before anything is stored, so the session and its replay change in
        # the store moments apart: the app never draws a grown session with its old replay for long.
        bundle = replay_session(result.session)[1] if self.replay and stale else None
        session_id, created, replaced, written = self._store(session_id, result, source)
        self._followed[source] = session_id
        steps = None
        if bundle is not None:
            steps = self.store.replays.save(bundle, session_id=session_id,
                                            name=DEFAULT_REPLAY_NAME).step_count
            self.store.session_tokens(session_id, result.session.messages)
        return LiveUpdate(path=str(path), session_id=session_id, created=created, replaced=replaced,
                          messages=len(result.session.messages),
                          responses=len(result.session.index.batches), written=written,
                          waiting_bytes=waiting, replay_steps=steps,
                          seconds=time.perf_counter() - started)

    def _store(self, session_id: str | None, result: ImportResult,
               source: str) -> tuple[str, bool, str | None, int]:
        """Store ``result``: in place of ``session_id`` when it is that session grown, else as a
        new session. Returns the session's id, whether it is new, the session left as it was
        (None unless the file no longer extends ``session_id``) and the message rows written."""
        if session_id is not None:
            written = update_session(self.store, session_id, result.session, format=result.format,
                                     content_hash=result.content_hash, source_path=source,
                                     unplaced=result.unplaced)
            if written is not None:
                return session_id, False, None, written
        stored, created = self.store.save_session(
            result.session, format=result.format, content_hash=result.content_hash,
            source_path=source, unplaced=result.unplaced)
        return stored, created, session_id, len(result.session.messages) if created else 0


class Watcher:
    """Follows ``paths`` (files, or folders searched recursively for transcripts)."""

    def __init__(self, store: Store, paths: Iterable[str | Path], *, replay: bool = True,
                 interval: float = 1.0) -> None:
        self.paths = [Path(p).expanduser() for p in paths]
        missing = [str(p) for p in self.paths if not p.exists()]
        if missing:
            raise IrisError(f"{missing[0]}: no such file or folder to watch")
        self.store, self.interval = store, interval
        self._follower = _Follower(store, replay=replay)
        self._seen: dict[Path, tuple[int, int]] = {}
        self._sessions: dict[Path, str] = {}
        self.wake = threading.Event()

    def files(self) -> list[Path]:
        """The transcripts followed now (a folder's new files included)."""
        return [f for p in self.paths for f in (session_files(p) if p.is_dir() else [p])]

    def poll(self, on_error: Callable[[Path, Exception], None] | None = None) -> list[LiveUpdate]:
        """Import every followed file that changed since the last look."""
        _beat(self._sessions.items())  # alive while it imports and replays, not only after
        updates: list[LiveUpdate] = []
        for path in self.files():
            try:
                stat = path.stat()
            except OSError:
                continue
            signature = (stat.st_size, stat.st_mtime_ns)
            if self._seen.get(path) == signature:
                continue
            self._seen[path] = signature
            try:
                update = self._follower.follow(path)
            except Exception as exc:  # noqa: BLE001 - one bad file must not stop the others
                if on_error is not None:
                    on_error(path, exc)
                continue
            if update is not None:
                self._sessions[path] = update.session_id
                updates.append(update)
        _beat(self._sessions.items())
        return updates

    def run(self, on_update: Callable[[LiveUpdate], None], *, stop: threading.Event | None = None,
            on_error: Callable[[Path, Exception], None] | None = None,
            until: float | None = None) -> None:
        """Follow until ``stop`` is set (or ``until`` seconds have passed)."""
        stop = stop or threading.Event()
        deadline = None if until is None else time.monotonic() + until
        observers = self._observe()
        try:
            self.wake.set()  # what the files hold when the watch starts
            beat = time.monotonic()
            while not stop.is_set() and (deadline is None or time.monotonic() < deadline):
                # The timeout only bounds how late a stop or the deadline is noticed.
                if self.wake.wait(min(self.interval, _STOP_CHECK_SECONDS)):
                    self.wake.clear()
                    for update in self.poll(on_error):
                        on_update(update)
                    beat = time.monotonic()
                elif time.monotonic() - beat >= _BEAT_SECONDS:
                    # an agent that writes nothing for a while is still followed: without this
                    # beat the app stopped following the session after LIVE_SECONDS of quiet
                    _beat(self._sessions.items())
                    beat = time.monotonic()
        finally:
            for observer in observers:
                observer.stop()
            self._follower.close()

    def _observe(self) -> tuple[BaseObserver, ...]:
        """Started observers that set :attr:`wake` on any change under the followed paths: the
        operating system's events and a polling observer every ``interval`` seconds."""
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        wake = self.wake

        class _Wake(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                wake.set()

        observers = (Observer(), PollingObserver(timeout=self.interval))
        for observer in observers:
            for path in self.paths:
                folder = path if path.is_dir() else path.parent
                observer.schedule(_Wake(), str(folder), recursive=path.is_dir())
            observer.daemon = True
            observer.start()
        return observers


_STOP_CHECK_SECONDS = 0.5
#: How often a watcher with nothing to import still writes its heartbeats (well inside
#: :data:`LIVE_SECONDS`).
_BEAT_SECONDS = 2.0


# ------------------------------------------------------------------------------- the app's side


def _heartbeat(session_id: str) -> Path:
    return workbench_home() / "live" / hashlib.sha256(session_id.encode()).hexdigest()[:24]


def _beat(sessions: Iterable[tuple[Path, str]]) -> None:
    """Write each followed session's heartbeat: atomically, never through a symbolic link (a linked
    heartbeat or ``live`` folder is refused with a SymlinkRefusedError naming it)."""
    for path, session_id in sessions:
        write_file(_heartbeat(session_id), f"{session_id}\n{path}\n", root=workbench_home())


def is_live(session_id: str, within: float = LIVE_SECONDS) -> bool:
    """True while a ``workbench watch`` follows the session (its heartbeat is recent)."""
    try:
        return time.time() - _heartbeat(session_id).stat().st_mtime < within
    except OSError:
        return False


class LiveVersion(FrozenModel):
    """What changes when a live session grows or its ``default`` replay is made again."""

    content_hash: str
    replay_saved_at: str
    replay_steps: int
    responses: int

    @property
    def settled(self) -> bool:
        """True when the ``default`` replay covers every response of the stored session."""
        return self.replay_steps == self.responses


def live_version(store: Store, session_id: str) -> LiveVersion:
    """The stored session's content hash and response count, and its ``default`` replay's save
    time and step count."""
    replay = store.replays.find(session_id, DEFAULT_REPLAY_NAME)
    return LiveVersion(content_hash=store.content_hash(session_id),
                       replay_saved_at=replay.created_at if replay is not None else "",
                       replay_steps=replay.step_count if replay is not None else 0,
                       responses=store.row_of(session_id).response_count)


def agent_line(store: Store, session_id: str) -> AgentLine | None:
    """The session's last request against its agent's compaction line (the ``claude-code`` or
    ``codex`` profile's threshold line); None for a format without an agent profile."""
    row = store.row_of(session_id)
    profile = AGENT_PROFILES.get(row.format)
    if profile is None:
        return None
    session = store.session(session_id)
    header = session.header
    from iris.compaction.agent_rules import apply_agent_rule

    config, _ = apply_agent_rule(load_preset(profile[0]), header)  # the agent version's row
    t = thresholds(config, header.limits, header.model, recorded_prompt=largest_prompt(session))
    last = next((m.usage for m in reversed(session.messages)
                 if m.usage is not None and m.usage.is_trusted), None)
    tokens = None if last is None else last.prompt_tokens + last.output_tokens
    return AgentLine(agent=profile[1], line=t.threshold_line or t.pressure_line, tokens=tokens,
                     responses=row.response_count)
