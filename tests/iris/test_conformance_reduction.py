"""Seed 002 (Chord) reduction rules where a summary must keep the evidence it exists to keep
(R-RED-3/4/6/7, R-TOK-3).

Seed 002 "剪裁规则" table: JSON/structured output (NDJSON included) is its own category; read-like
results (reads, web fetches) keep their path or URL; diff summaries name each file's change; old
errors keep "失败位置与首个错误" in a marker or summary; shell successes keep their signal lines; a
skill body is recognised by its envelope. Marker wording: ../shared/reference/chord-behaviour.md §1.4.
"""

from __future__ import annotations

import json

from iris.reduction import ToolKindMap
from iris.reduction import summaries as S
from iris.reduction.classify import describe
from iris.reduction.facts import extract_facts
from iris.session import Usage
from reduction_builders import Conv, decision, lines, padding, sent_text

NDJSON = "\n".join(json.dumps({"ts": i, "level": "info", "msg": f"event {i}", "ok": True})
                   for i in range(120))


def _aged(name, args, text, age, *, conv=None, is_error=False, **kw):
    c = conv or Conv()
    cid = c.call(name, args, text, is_error=is_error)
    c.turns(age - 1)
    return c.reduce(**kw), cid


# ---------------------------------------------------------------- categories (R-RED-3/4)

def test_r_red_4_ndjson_is_structured_not_a_log():
    """R-RED-3/4: NDJSON output is summarised in the JSON/structured category (records and keys),
    not as a log."""
    res, cid = _aged("Bash", {"command": "kubectl logs -o json app"}, NDJSON, 2)
    d = decision(res, cid)
    assert (d.action, d.category) == ("reduced", "json")
    text = sent_text(res, cid)
    assert text.startswith("[Older bash NDJSON summarized") and "records=120" in text
    assert '"level"' in text and "shell log" not in text


def test_r_red_4_web_fetch_json_is_read_like_and_keeps_its_url():
    """R-RED-4: read-like results are decided before JSON: a fetched JSON document keeps its URL."""
    doc = json.dumps({f"key_{i}": f"value {i} " * 5 for i in range(80)})
    url = "https://api.example.com/v1/items?page=2"
    res, cid = _aged("WebFetch", {"url": url}, doc, 3)
    d = decision(res, cid)
    assert (d.action, d.category) == ("reduced", "web_fetch")
    assert f"path={url}" in sent_text(res, cid)


# ---------------------------------------------------------------- diffs (§1.4 wording)

GIT_DIFF = """diff --git a/assets/logo.png b/assets/logo.png
index 3b18e51..a9c4f2d 100644
Binary files a/assets/logo.png and b/assets/logo.png differ
diff --git a/scripts/run.sh b/scripts/run.sh
old mode 100644
new mode 100755
diff --git a/src/old_name.py b/src/new_name.py
similarity index 100%
rename from src/old_name.py
rename to src/new_name.py
diff --git a/src/app.py b/src/app.py
--- a/src/app.py
+++ b/src/app.py
@@ -1,3 +1,3 @@
-x = 1
+x = 2
"""


def test_r_red_4_diff_summary_names_the_kind_of_each_change():
    """R-RED-4: binary, mode-only and rename patches say so; none reads "hunks=0 changes=+0/-0;
    kind=modified"; git diffs use the "[Older git diff summarized" marker."""
    out = S.diff_summary("Bash", GIT_DIFF)
    rows = dict(line[2:].split(": ", 1) for line in out.splitlines()[1:])
    assert out.startswith("[Older git diff summarized for this request; bytes=")
    assert rows["assets/logo.png"] == "kind=binary"
    assert rows["scripts/run.sh"] == "kind=mode 100644→100755"
    assert rows["src/new_name.py"] == "kind=rename from src/old_name.py"
    assert rows["src/app.py"].startswith("hunks=1 changes=+1/-1; kind=modified; shown: -x = 1")
    assert "hunks=0 changes=+0/-0; kind=modified" not in out


# ---------------------------------------------------------------- errors and shell success

COMPILER_ERROR = "\n".join(["$ make build", *(f"cc -c src/file{i}.c" for i in range(30)),
                            "src/parser.c:42:13: error: use of undeclared identifier 'tokn'",
                            "    tok = tokn + 1;",
                            "src/lexer.c:7:1: error: expected ';' after top level declarator",
                            "2 errors generated.", "make: *** [Makefile:12: parser.o] Error 1"])


def test_r_red_4_old_error_keeps_failing_locations_and_first_error_lines():
    """R-RED-4 (seed 002 "marker 或摘要"): an old error keeps file:line:col and the error lines,
    not only the command's first line."""
    res, cid = _aged("Bash", {"command": "make build"}, COMPILER_ERROR, 3, is_error=True)
    d = decision(res, cid)
    assert (d.action, d.category) == ("reduced", "error")
    text = sent_text(res, cid)
    assert text.startswith("[Older bash error summarized") and "locations=2" in text
    assert "src/parser.c:42:13: error: use of undeclared identifier 'tokn'" in text
    assert "src/lexer.c:7:1: error: expected ';'" in text
    assert "cc -c src/file5.c" not in text


def test_r_red_4_shell_success_keeps_signal_lines_and_counts_tail_only_as_fallback():
    """R-RED-4, §1.4: shell successes keep signal lines and counts (go test: packages ok, cached,
    coverage reports); the last lines appear only when no line carries a signal."""
    go = "\n".join([f"ok  \texample.com/pkg{i}\t0.{i}s\tcoverage: {50 + i}.0% of statements"
                    for i in range(6)] + ["ok  \texample.com/cached\t(cached)",
                                          "?   \texample.com/cmd\t[no test files]"]
                   + [f"go: downloading module{i} v1.{i}.0" for i in range(120)])
    out = S.shell_success_summary(go)
    assert "packages_ok=7 cached=1 no_test_files=1 coverage_reports=6" in out.splitlines()[0]
    assert "example.com/pkg0" in out and "lines omitted" not in out
    assert "module119" not in out  # no tail while signal lines exist
    quiet = "\n".join(f"step {i}: compiling unit {i}" for i in range(200))
    fallback = S.shell_success_summary(quiet)
    assert "- ... (197 lines omitted) ..." in fallback and fallback.endswith("compiling unit 199")


# ---------------------------------------------------------------- search budget

def test_r_red_4_search_listing_stays_within_its_budget_with_the_omission_line():
    """R-RED-4: the path:line list, omission line included, stays within its byte budget."""
    for width in (10, 37, 61, 90):
        hits = "\n".join(f"src/{'d' * width}/module_{i}.py:{i}:    value = needle({i})"
                         for i in range(300))
        out = S.search_summary("Grep", hits, {"pattern": "needle"})
        listing = out.splitlines()[1:]
        assert listing[-1].startswith("- ... (+") and "matches omitted" in listing[-1]
        assert sum(len(ln.encode()) + 1 for ln in listing) <= S.SEARCH_BUDGET_BYTES, width


# ---------------------------------------------------------------- repeats share the archive (R-RED-7)

def test_r_red_7_every_copy_of_a_repeated_output_names_the_shared_archive(tmp_path):
    """R-RED-7: repeated copies of one output carry the address of one shared archive file."""
    c = Conv()
    body = lines(300, "row {i}: the same listing every time")
    first = c.call("Bash", {"command": "ls -la /data"}, body)
    second = c.call("Bash", {"command": "ls -la /data"}, body)
    c.call("Bash", {"command": "ls -la /data"}, body)
    c.turns(3)
    res = c.reduce(work_dir=tmp_path)
    paths = {decision(res, cid).artifact_path for cid in (first, second)}
    assert decision(res, first).action == "repeat" and len(paths) == 1 and None not in paths
    (path,) = paths
    assert all(f"Full output saved to {path}" in sent_text(res, cid) for cid in (first, second))
    assert len(list((tmp_path / "reduced-artifacts").iterdir())) == 1


# ---------------------------------------------------------------- skills

SKILL = ("<name>deploy</name>\n<path>/skills/deploy/SKILL.md</path>\n<root>/skills/deploy</root>\n"
         "# Deploy\n## Prepare\nCheck the tree.\n```sh\n# not a heading: a shell comment\n"
         "## also not a heading\nmake release\n```\n## Release\n" + "Run the steps. " * 300)


def _info(name, args, text, is_error=False):
    facts = extract_facts(ToolKindMap().kind_of_call(name, args), args, text, is_error)
    return describe("c", name, args, facts, text)


def test_r_red_4_skill_is_recognised_by_its_envelope_not_its_tool_name():
    """R-RED-4: a skill result is recognised by its envelope; "skill not found" is not a skill."""
    assert _info("Skill", {"skill": "deploy"}, SKILL).shape == "skill"
    assert _info("Skill", {"skill": "nope"}, "Error: skill not found: nope", True).shape == "error"
    assert _info("Skill", {"skill": "x"}, "Launching skill: x").shape != "skill"


def test_r_red_4_skill_outline_skips_fenced_code_and_empty_envelopes_are_kept():
    """R-RED-4: headings inside fenced code are not headings; an envelope with no body to outline
    is kept, not "reduced"."""
    out = S.skill_summary(SKILL)
    assert out is not None
    assert "- # Deploy" in out and "- ## Prepare" in out and "- ## Release" in out
    assert "not a heading" not in out and "<root>/skills/deploy</root>" in out
    empty = "<name>x</name>\n<path>/skills/x/SKILL.md</path>\n<root>/skills/x</root>\n" + " " * 2000
    res, cid = _aged("Skill", {"skill": "x"}, empty, 4, conv=padding(6))
    assert decision(res, cid).action == "kept"


# ---------------------------------------------------------------- usage relay (R-TOK-3)

def test_r_tok_3_cache_included_relay_with_input_below_cache_read_counts_both():
    """R-TOK-3: input < cache read while flagged "cache included" is a miscounting relay: the
    prompt is input + cache read, and the usage says so."""
    relay = Usage(input_tokens=1200, cache_read_tokens=50000, cache_read_in_input=True)
    assert relay.relay_miscount and relay.prompt_tokens == 51200
    assert relay.usage_note is not None and "counted input + cache read = 51,200" in relay.usage_note
    honest = Usage(input_tokens=60000, cache_read_tokens=50000, cache_read_in_input=True)
    assert not honest.relay_miscount and honest.prompt_tokens == 60000 and honest.usage_note is None


def test_r_tok_3_replay_record_says_the_relay_was_corrected():
    """R-TOK-3: the preparation record of such a response names the correction."""
    from iris.replay import replay
    from iris.session import Message, Session, SessionHeader, TextBlock

    relay = Usage(input_tokens=300, cache_read_tokens=9000, cache_read_in_input=True)
    messages = (Message(role="user", content=(TextBlock(text="hello"),)),
                Message(role="assistant", content=(TextBlock(text="hi"),), usage=relay))
    session = Session(header=SessionHeader(session_id="relay", source_format="native"),
                      messages=messages)
    p = replay(session).preparations[0]
    assert p.provider_prompt_tokens == 9300 and "cache read" in (p.provider_usage_note or "")


# ---------------------------------------------------------------- read validity (R-RED-6)

def test_r_red_6_edit_located_in_a_read_without_line_numbers():
    """R-RED-6: an old_string/new_string edit is located in a read whose body is not
    line-numbered (counted from the read's range); a read whose shown lines it changed is stale,
    a read of other lines stays current."""
    body = "\n".join(f"line {i} of the config" for i in range(101, 201))
    c = Conv()
    shown = c.call("Read", {"file_path": "/w/conf.ini", "offset": 101, "limit": 100}, body)
    other = c.call("Read", {"file_path": "/w/conf.ini", "offset": 301, "limit": 100},
                   "\n".join(f"line {i} of the config" for i in range(301, 401)))
    c.call("Edit", {"file_path": "/w/conf.ini", "old_string": "line 150 of the config",
                    "new_string": "line 150 changed"}, "The file /w/conf.ini has been updated.")
    c.turns(1)
    res = c.reduce()
    assert decision(res, shown).action == "stale"
    assert decision(res, other).action == "kept"


def test_r_red_3_a_stale_mid_size_web_fetch_json_falls_to_the_generic_gate_and_keeps_its_url():
    """R-RED-3/4: web fetches are not one of seed 002's sized categories (reads and file previews,
    grep/glob, shell): a fetched JSON document of 1.5–3 KB (over ``stale_output_bytes``, not over
    ``read_like_output_bytes``) at ``stale_age_turns`` with at least ``min_tool_results_prune``
    results meets the generic rule, which tries the shapes first: read-like before JSON, so the
    summary keeps the URL. Younger, or with fewer results, it stays whole."""
    doc = json.dumps({f"key_{i}": f"value {i} " * 3 for i in range(40)})
    assert 1500 < len(doc.encode()) <= 3000
    url = "https://api.example.com/v1/items?page=3"

    def fetched(age: int, others: int):
        conv = Conv()
        for i in range(others):
            conv.call("Bash", {"command": f"echo {i}"}, f"line {i}")
        return _aged("WebFetch", {"url": url}, doc, age, conv=conv)

    res, cid = fetched(3, 5)
    d = decision(res, cid)
    assert (d.action, d.category, d.rule) == ("reduced", "web_fetch", "stale_age_turns")
    assert f"path={url}" in sent_text(res, cid)
    res, cid = fetched(2, 5)
    assert decision(res, cid).action == "kept"
    res, cid = fetched(3, 4)
    assert (decision(res, cid).action, decision(res, cid).rule) == ("kept", "min_tool_results_prune")
