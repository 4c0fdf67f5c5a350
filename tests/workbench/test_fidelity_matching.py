"""Loss records that mean what they say (R-FID-4) and say whether a loss hurt (R-FID-5): facts
matched as a person reads them, facts from tool results the agent used, and the recovery of each
lost fact, on transcripts built here and on the real sessions in ../shared."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from iris.fidelity import Fact, command_parts, extract_facts, recorded_loss_records
from iris.fidelity.matching import Matcher
from iris.session import Message, RecordedCompaction, Session, SessionHeader, TextBlock
from test_fidelity import ROOT, _call, _result, _user


def _kept(kind: str, key: str, text: str) -> bool:
    fact = Fact(kind=kind, text=key, key=key, message=0)  # type: ignore[arg-type]
    flat = " ".join(text.split())
    return Matcher().found(fact, flat, flat.lower())


def test_r_fid_4_a_directory_with_a_trailing_slash_is_kept():
    """R-FID-4: ``priv/static/assets/`` names the directory ``priv/static/assets``; a longer
    path under it does not."""
    assert _kept("paths", "priv/static/assets", "Assets live in `priv/static/assets/`.")
    assert _kept("paths", "priv/static/assets", "see priv/static/assets/ for the bundles")
    assert not _kept("paths", "priv/static/assets", "edited priv/static/assets/app.css")
    assert not _kept("paths", "src/a", "src/a.py")
    assert not _kept("paths", "src/a.py", "src/a.pyc")


def test_r_fid_4_a_file_named_by_a_shorter_path_or_next_to_its_folder_is_kept():
    """R-FID-4: a suffix of two components or more names the file, as does its name within a
    few words of its folder; another folder's file of the same name does not."""
    key = "cmd/entire/cli/session/state.go"
    assert _kept("paths", key, "Changed `session/state.go` to keep the phase.")
    assert _kept("paths", key, "/ws/proj/cmd/entire/cli/session/state.go was read")
    assert _kept("paths", key, "In `cmd/entire/cli/session/`: state.go and hooks.go were edited.")
    assert _kept("paths", key, "state.go (under cli/session) holds the phase")
    assert not _kept("paths", key, "Changed `other/state.go`.")
    assert not _kept("paths", key, "Changed `web/session/state.go`.")
    assert not _kept("paths", key, "state.go was edited")  # a bare name, no folder near it


def test_r_fid_4_commands_match_whole_words_and_fragments_are_not_commands():
    """R-FID-4: ``bd show X`` is not stated by ``bd show X.4``; the first line of a quoted
    here-document (``git commit -m "$(cat``) is not a command."""
    assert not _kept("commands", "bd show X", "ran bd show X.4 next")
    assert _kept("commands", "bd show X", "ran `bd show X` then bd show X.4.")
    assert _kept("commands", "mix test", "Then mix test.")
    assert not _kept("commands", "mix test", "mix test_helper")
    heredoc = 'git add -A && git commit -m "$(cat <<\'EOF\'\nFix the parser\nEOF\n)"'
    assert command_parts(heredoc) == ["git add -A"]
    assert command_parts('git commit -m "fix: one line"') == ['git commit -m "fix: one line"']


def test_r_fid_4_defined_names_follow_the_identifier_rule():
    """R-FID-4: a function or class an edit defines is an identifier only when it reads as one
    (underscore or mixed case): ``def change`` or ``function with`` add no identifier."""
    text = ("def change(x):\n    pass\nclass Broadcast:\n    pass\ndef parse_token():\n    pass\n"
            "function with() {}\nclass TokenCache:\n    pass\n")
    facts = extract_facts([(1, _call("e", "Write", file_path=f"{ROOT}/a.py", content=text))],
                          workspace_root=ROOT)
    assert sorted(f.key for f in facts if f.kind == "identifiers") == ["TokenCache", "parse_token"]


def _spec_session() -> Session:
    """A task spec shown by a tool lists two files; after the compaction the agent reads one of
    them (re-read), runs the test again (re-run) after a git status that lists the other."""
    messages = [
        _user("Work on task bd-7."),
        _call("c1", "Bash", command="bd show bd-7"),
        _result("c1", "bd-7: fix parsing\nFiles: lib/app/parser.ex, lib/app/lexer.ex\n"),
        _call("c2", "Bash", command="mix test test/parser_test.exs"),
        _result("c2", "1 failure"),
        Message(role="user", content=(TextBlock(text="Summary: task bd-7 is about parsing."),),
                is_compaction_summary=True, synthetic=True),
        _call("c3", "Bash", command="git status"),
        _result("c3", "modified: lib/app/lexer.ex"),
        _call("c4", "Read", file_path=f"{ROOT}/lib/app/parser.ex"),
        _result("c4", "defmodule App.Parser do\n" + "  # line\n" * 40 + "end\n"),
        _call("c5", "Edit", file_path=f"{ROOT}/lib/app/lexer.ex", old_string="a", new_string="b"),
        _result("c5", "ok"),
        _call("c6", "Bash", command="mix test test/parser_test.exs"),
        _result("c6", "3 tests, 0 failures"),
        _call("c7", "Bash", command="mix format"),
        _result("c7", "ok"),
    ]
    return Session(header=SessionHeader(session_id="spec", workspace_root=ROOT),
                   messages=tuple(messages),
                   compactions=(RecordedCompaction(at_message=5, summary=messages[5].text),))


def test_r_fid_4_paths_a_tool_result_stated_and_a_later_call_used_are_facts():
    """R-FID-4: the files a task spec listed, edited or read after the compaction, are facts of
    the span (stated by the tool result)."""
    (record,) = recorded_loss_records(_spec_session())
    fates = {f.fact.key: f for f in record.fates if f.fact.kind == "paths"}
    assert fates["lib/app/parser.ex"].fact.from_result and fates["lib/app/parser.ex"].needed_later
    assert fates["lib/app/lexer.ex"].fact.message == 2


def test_r_fid_5_each_lost_fact_says_how_and_when_it_came_back_and_what_it_cost():
    """R-FID-5: the lexer path came back in git status's output (tool result), the parser file by
    re-reading it, the test command by running it again; costs are the tokens of those texts."""
    (record,) = recorded_loss_records(_spec_session())
    lost = {f.fact.key: f for f in record.lost()}
    lexer, parser = lost["lib/app/lexer.ex"], lost["lib/app/parser.ex"]
    test = lost["mix test test/parser_test.exs"]
    assert lexer.recovery is not None and lexer.recovery.how == "tool result"
    assert lexer.needed_step == 4
    assert lexer.recovery.message == 7 and lexer.recovered_at_step == 3  # before it was needed
    assert parser.recovery is not None and parser.recovery.how == "re-read"
    assert parser.recovery.message == 9 and parser.recovery.tokens > 40
    assert test.recovery is not None and test.recovery.how == "re-run"
    assert test.recovered_at_step is not None and test.needed_step is not None
    assert test.recovered_at_step > test.needed_step  # its result is in the next request
    assert record.never_recovered == sum(f.recovery is None for f in record.lost())
    assert record.recovery_tokens == sum(f.recovery.tokens for f in record.lost() if f.recovery)
    first = record.lost(never_recovered_first=True)
    assert [f.recovery is None for f in first] == sorted((f.recovery is None for f in first),
                                                         reverse=True)


def _real(real_sessions: Path) -> list[Path]:
    files = sorted((real_sessions / "claude_code").glob("*.jsonl.gz"))
    corpus = real_sessions.parent / "corpus" / "claude_code"
    files += sorted(corpus.glob("*.jsonl.gz"))[:4] if corpus.is_dir() else []
    if not files:
        pytest.skip("no real sessions in ../shared")
    return files


def test_r_fid_4_real_sessions_lose_no_fact_their_summary_names(real_sessions: Path):
    """R-FID-4 on the real sessions' recorded compactions: no lost path whose directory form
    (``dir/``) or two-component tail the agent's summary writes as a word, no command fragment
    with an open quote, no plain word as an identifier; tool results contribute needed facts."""
    from workbench.importers import load_session

    from_results = 0
    for path in _real(real_sessions):
        session = load_session(path).session
        summaries = [c.summary or "" for c in session.compactions]
        for record, summary in zip(recorded_loss_records(session), summaries, strict=False):
            words = set(re.findall(r"[\w.@+~/-]+", summary))
            for fate in record.lost():
                key = fate.fact.key
                if fate.fact.kind == "paths":
                    tail = "/".join(key.split("/")[-2:])
                    assert f"{key}/" not in words and (tail == key or tail not in words), key
            for fate in record.fates:
                if fate.fact.kind == "commands" and len(fate.fact.key) < 200:
                    assert fate.fact.key.count('"') % 2 == 0, fate.fact.key
                    assert fate.fact.key.count("$(") <= fate.fact.key.count(")"), fate.fact.key
                if fate.fact.kind == "identifiers":
                    assert not re.fullmatch(r"[a-z]+", fate.fact.key), fate.fact.key
            from_results += sum(f.fact.from_result and f.needed_later for f in record.fates)
    assert from_results > 0


def test_r_fid_5_real_sessions_every_lost_fact_carries_its_recovery(real_sessions: Path):
    """R-FID-5 on the real sessions: a recovery is never before the compaction nor after the
    need's next request, costs tokens, and some lost facts were recovered and some never."""
    from workbench.importers import load_session

    recovered = never = tokens = 0
    for path in _real(real_sessions):
        session = load_session(path).session
        for record in recorded_loss_records(session):
            for fate in record.lost():
                if fate.recovery is None:
                    never += 1
                    continue
                recovered += 1
                assert fate.needed_step is not None
                assert record.step <= fate.recovery.step <= fate.needed_step + 1
                assert fate.recovery.tokens >= 0  # a command that prints nothing costs nothing
                tokens += fate.recovery.tokens
    assert recovered > 0 and never > 0 and tokens > 0


@pytest.mark.slow
def test_r_fid_5_notebook_lost_and_fidelity_carry_the_recovery(real_sessions: Path):
    """R-FID-5: ``replay.lost()`` has ``recovered_at_step`` (empty for never), the never-recovered
    rows first per compaction; ``replay.fidelity()`` has ``never_recovered`` and
    ``recovery_tokens`` per compaction, equal to the lost rows'."""
    from workbench.notebook import replay

    path = _real(real_sessions)[0]
    result = replay(path, "claude-code")
    lost, table = result.lost(), result.fidelity()
    assert {"recovered_at_step", "recovered_by", "recovery_tokens"} <= set(lost.columns)
    assert str(lost["recovered_at_step"].dtype) == "Int64"
    rows = lost.astype(object).where(lost.notna(), None).to_dict("records")
    assert any(r["recovered_at_step"] is not None for r in rows)
    whole = {(r["source"], r["n"]): r for r in table.to_dict("records") if r["kind"] == "all"}
    for (source, n), row in whole.items():
        mine = [r for r in rows if (r["source"], r["n"]) == (source, n)]
        never = [r["recovered_at_step"] is None for r in mine]
        assert never == sorted(never, reverse=True)  # never-recovered first
        assert row["never_recovered"] == sum(never)
        assert row["recovery_tokens"] <= sum(r["recovery_tokens"] or 0 for r in mine)
        assert [r["recovered_by"] is None for r in mine] == never


def test_r_fid_4_real_session_a_task_id_is_not_needed_by_its_subtask(real_sessions: Path):
    """R-FID-4 on 8463c716: ``bd show spotter-fum`` is needed where the agent runs that command
    again, not where it runs ``bd show spotter-fum.4``."""
    from iris.fidelity.facts import message_mentions

    from workbench.importers import load_session

    path = real_sessions / "claude_code" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"
    if not path.is_file():
        pytest.skip("the real session is absent")
    session = load_session(path).session
    (record,) = recorded_loss_records(session)
    fate = next(f for f in record.fates if f.fact.key == "bd show spotter-fum")
    assert fate.needed_message is not None
    first_sub = next(i for i in range(fate.needed_message)
                     if i > record.span_messages
                     and "bd show spotter-fum.4" in message_mentions(session.messages[i]))
    assert first_sub < fate.needed_message
    assert re.search(r"bd show spotter-fum(?![\w.-])",
                     message_mentions(session.messages[fate.needed_message]))
