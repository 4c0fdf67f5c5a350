"""R-TWIN-6: the recorded session priced as billed (cache reads, 5-minute and 1-hour cache writes,
per model; costs the transcript records win over list prices), provider-prefixed model ids, the
price data's date, and the replay priced with a prompt-cache model."""

from __future__ import annotations

import gzip
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from iris.errors import SessionFormatError
from iris.replay import ReplayObservers, ReplayOptions, replay
from iris.session import Usage
from record_access import all_present

from workbench.analysis.replay_report import replay_report
from workbench.importers import load_session
from workbench.pricing import cost_lines, prefix_sink, price, replay_cost
from workbench.pricing.billing import billed, cache_writes, recorded_bill
from workbench.pricing.cache import CacheRequest, Prefix, cache_splits

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "importers"

# Published per-token list prices in USD per million tokens, from Anthropic's pricing page
# (https://platform.claude.com/docs/en/about-claude/pricing: base input, 5-minute cache write =
# 1.25 × input, 1-hour cache write = 2 × input, cache read = 0.1 × input, output). The same
# figures are in genai-prices 0.2.3's bundled data. Every prompt of the sessions below is under
# 200k tokens, so no long-context rate applies (checked in the test).
PUBLISHED = {
    "claude-opus-4-6": {"input": 5, "write_5m": 6.25, "write_1h": 10, "read": 0.5, "output": 25},
    "claude-haiku-4-5": {"input": 1, "write_5m": 1.25, "write_1h": 2, "read": 0.1, "output": 5},
}
CLAUDE_FILES = ["8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz",
                "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl.gz", "spotter_subagent_session.jsonl"]
MINI_SWE = "pvlib__pvlib-python-1707.deepseek_reasoner.traj.json"


def _hand_bill(path: Path) -> float:
    """The bill computed by hand from the file: the last usage of every distinct message.id
    (earlier lines of a response repeat placeholder counts) × the published prices above."""
    opener = gzip.open if path.suffix == ".gz" else open
    last: dict[str, tuple[str, dict]] = {}
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            message = row.get("message") or {}
            if row.get("type") == "assistant" and message.get("usage"):
                last[message["id"]] = (message["model"], message["usage"])
    total = 0.0
    for model, u in last.values():
        p = PUBLISHED["claude-haiku-4-5" if model.startswith("claude-haiku-4-5") else model]
        split = u.get("cache_creation") or {}
        prompt = u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        assert prompt < 200_000  # base rates only
        total += (u["input_tokens"] * p["input"] + u["output_tokens"] * p["output"]
                  + u["cache_read_input_tokens"] * p["read"]
                  + split.get("ephemeral_5m_input_tokens", 0) * p["write_5m"]
                  + split.get("ephemeral_1h_input_tokens", 0) * p["write_1h"]) / 1e6
    return total


@pytest.mark.parametrize("name", CLAUDE_FILES)
def test_r_twin_6_recorded_bill_matches_a_hand_computation(real_sessions, name):
    """R-TWIN-6: the bill of a real Claude Code session is within 2 % of the hand computation
    from its usage fields (1-hour writes at the 1-hour rate, Haiku responses at Haiku's)."""
    path = real_sessions / "claude_code" / name
    bill = recorded_bill(load_session(path).session)
    hand = _hand_bill(path)
    assert bill.usd == pytest.approx(hand, rel=0.02)
    assert bill.from_list_price == bill.responses and not bill.unpriced_models


def test_r_twin_6_summary_json_states_the_bill_as_billed(real_sessions):
    """R-TWIN-6: ``cost.recorded_billed_usd`` of ``--summary-json`` is the cache-aware bill, next
    to the replay's cache-aware cost and the savings breakdown."""
    path = real_sessions / "claude_code" / CLAUDE_FILES[0]
    session = load_session(path).session
    cost = replay_report(session, replay(session)).cost
    assert cost.recorded_billed_usd == pytest.approx(_hand_bill(path), rel=0.02)
    assert cost.recorded_bill is not None
    models = cost.recorded_bill.models["claude-opus-4-6"]
    assert models.cache_write_1h_tokens > 0 and models.cache_write_5m_tokens == 0
    words = cost_lines(cost)
    assert any(line.startswith("By model: claude-opus-4-6") and "at the 1-hour rate" in line
               for line in words)
    assert any(line.startswith(("Saved ", "Costs ")) and "cache misses cost" in line for line in words)
    parts, cache, bare = cost.savings, cost.replay_cache, cost.uncached
    assert parts is not None and cache is not None and bare is not None
    smaller, misses, summaries = all_present(
        (parts.smaller_requests_usd, parts.cache_misses_usd, parts.summaries_usd))
    assert cost.saved_usd == pytest.approx(smaller - misses - summaries, abs=1e-5)
    recorded, requests, summaries, billed_usd, bare_usd = all_present(
        (cost.recorded_usd, cost.requests_usd, cost.summaries_usd, cost.recorded_billed_usd,
         bare.recorded_usd))
    assert cost.saved_usd == pytest.approx(recorded - requests - summaries, abs=1e-5)
    # the cache made the real bill several times cheaper
    assert cache.read_tokens > 0 and bare_usd > 5 * billed_usd
    json.dumps(cost.model_dump())


def test_r_twin_6_the_recorded_cost_beats_the_list_price(real_sessions):
    """R-TWIN-6: the mini-swe-agent trajectory's per-response ``extra.cost`` is the bill (their
    sum is the trajectory's own ``instance_cost``), and the replay is priced at the rate those
    costs imply rather than DeepSeek's list price."""
    path = real_sessions / "openai_chat" / MINI_SWE
    doc = json.loads(path.read_text())
    session = load_session(path).session
    bill = recorded_bill(session)
    assert bill.usd == pytest.approx(doc["info"]["model_stats"]["instance_cost"], abs=1e-6)
    assert bill.from_recorded_cost == bill.responses == 16
    cost = replay_cost(session, replay(session))
    rate = cost.recorded_cost_rates["deepseek-reasoner"]
    assert 0 < rate < 1  # the list price is higher than what was paid
    assert cost.recorded_billed_usd == pytest.approx(bill.usd, abs=1e-6)
    assert "at the cost the transcript records" in " ".join(cost_lines(cost))


def test_r_twin_6_an_as_recorded_replay_costs_what_the_agent_was_billed(real_sessions):
    """R-TWIN-6: replaying exactly what the agent sent (the as-recorded baseline), the prompt-cache
    requests are the agent's own and are priced with their recorded cache reads and writes: the
    bill to the cent (R-TRUTH-1 checks every real transcript in test_pricing_truth.py)."""
    for name in CLAUDE_FILES[:2]:
        session = load_session(real_sessions / "claude_code" / name).session
        cost = replay_cost(session, replay(session, options=ReplayOptions(baseline="recorded")))
        assert cost.requests_usd == pytest.approx(cost.recorded_billed_usd, rel=1e-6)


def test_r_twin_6_one_hour_writes_are_priced_at_the_one_hour_rate():
    """R-TWIN-6: Claude Code's ``cache_creation`` split prices 1-hour writes at 2 × input
    ($10/MTok for Opus 4.6), 5-minute writes at 1.25 × ($6.25/MTok)."""
    raw = {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0,
           "cache_creation_input_tokens": 1_000_000,
           "cache_creation": {"ephemeral_5m_input_tokens": 400_000,
                              "ephemeral_1h_input_tokens": 600_000}}
    usage = Usage(cache_write_tokens=1_000_000, raw=raw, model="claude-opus-4-6")
    assert cache_writes(usage) == (400_000, 600_000)
    assert billed(usage, "claude-opus-4-6", None).usd == Decimal("8.5")  # 0.4 × 6.25 + 0.6 × 10
    unsplit = Usage(cache_write_tokens=1_000_000)
    assert cache_writes(unsplit) == (1_000_000, 0)  # no split recorded: the 5-minute default


def test_r_twin_6_provider_prefixed_model_ids_are_priced():
    """R-TWIN-6: litellm-style ids resolve to the model they name."""
    for prefixed, bare in [("mistral/mistral-small-latest", "mistral-small-latest"),
                           ("anthropic/claude-opus-4-6", "claude-opus-4-6"),
                           ("openai/gpt-5", "gpt-5"),
                           ("openrouter/anthropic/claude-opus-4-6", "claude-opus-4-6")]:
        listed = price(prefixed, input_tokens=1_000_000, output_tokens=1_000)
        assert listed is not None and listed == price(bare, input_tokens=1_000_000,
                                                      output_tokens=1_000)
    assert price("nobody/my-local-model", input_tokens=10) is None


def test_r_twin_6_every_price_line_names_the_data_and_its_date():
    """R-TWIN-6: the cost object and its words name the price data and how recent it is."""
    session = load_session(ROOT / "sample_sessions" / "bugfix.jsonl").session
    cost = replay_cost(session, replay(session))
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", cost.prices_as_of or "")
    assert cost.source.startswith("genai-prices ")
    assert cost_lines(cost)[-1].startswith(f"Prices: {cost.source}")
    assert f"newest price change {cost.prices_as_of}" in cost_lines(cost)[-1]
    unknown = replay_cost(session.model_copy(update={"header": session.header.model_copy(
        update={"model": "my-local-model"})}), replay(session))
    assert any("newest price change" in line for line in cost_lines(unknown))


def test_r_twin_6_cache_model_reads_the_unchanged_prefix():
    """R-TWIN-6: a request that only grew reads all of the previous one; a rewrite of an old
    tool output invalidates the cache from the breakpoint before it on (caches sit at the end of
    earlier requests); a compaction keeps only the system prefix; an expired cache (the recorded
    request read nothing) reads nothing; caches are per model."""
    grew, rewrote = Prefix(kept_all=True), Prefix(kept_all=False, tail=8_000)
    compacted = Prefix(kept_all=False, tail=9_000)  # everything after the 3k system prefix
    requests = [CacheRequest("m", 40_000, Prefix(kept_all=False, tail=40_000), recorded_read=3_000),
                CacheRequest("m", 50_000, grew, recorded_read=40_000),
                CacheRequest("m", 55_000, rewrote, recorded_read=50_000),
                CacheRequest("m", 12_000, compacted, recorded_read=55_000),
                CacheRequest("m", 14_000, grew, recorded_read=0),
                CacheRequest("other", 8_000, grew, recorded_read=2_000),
                CacheRequest("m", 15_000, grew, recorded_read=14_000)]
    splits = cache_splits(requests)
    # the rewrite at 47k reads up to the 40k breakpoint the first request left, not to 47k
    assert [s.read for s in splits] == [3_000, 40_000, 40_000, 3_000, 0, 2_000, 14_000]
    assert [s.read_if_kept for s in splits] == [3_000, 40_000, 50_000, 12_000, 0, 2_000, 14_000]
    assert all(s.read + s.written == r.whole for s, r in zip(splits, requests, strict=True))
    unknown = cache_splits([requests[0], CacheRequest("m", 20_000, None, compaction=True,
                                                      system_tokens=3_000, recorded_read=1)])
    assert unknown[1].read == 3_000  # body not kept: a compaction keeps the system prefix


def test_r_twin_6_a_replay_without_bodies_is_priced_alike(real_sessions):
    """R-TWIN-6: the batch runner's replay keeps no request bodies; the prefix sink gives its cost
    the same cache split as a replay that kept them."""
    session = load_session(real_sessions / "claude_code" / CLAUDE_FILES[0]).session
    full = replay_cost(session, replay(session))
    sink = prefix_sink(session)
    lean = replay(session, options=ReplayOptions(keep_bodies=False),
                  observers=ReplayObservers(sink=sink))
    assert not lean.requests
    cost = replay_cost(session, lean, prefixes=sink.prefixes)
    for key in ("requests_usd", "replay_usd", "saved_usd", "replay_cache", "savings"):
        assert getattr(cost, key) == getattr(full, key), key


def test_r_twin_6_importers_keep_the_recorded_cost(tmp_path):
    """R-TWIN-6: mini-swe-agent's ``extra.cost`` and an OpenTelemetry cost attribute are kept on
    the response's usage; a cost that is not a number names its field."""
    mini = load_session(FIX / "mini_swe.traj.json").session
    assert [m.usage.cost_usd for m in mini.messages if m.usage] and all(
        m.usage.cost_usd == 0.001 for m in mini.messages if m.usage)
    doc = json.loads((FIX / "mini_swe.traj.json").read_text())
    first = next(m for m in doc["messages"] if m["role"] == "assistant")
    first["extra"]["cost"] = "a lot"
    bad = tmp_path / "bad.traj.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(SessionFormatError, match="extra.cost"):
        load_session(bad)

    otel = json.loads((FIX / "otel_otlp.json").read_text())
    spans = otel["resourceSpans"][0]["scopeSpans"][0]["spans"]
    call = next(s for s in spans if any(a["key"] == "gen_ai.usage.input_tokens"
                                        for a in s["attributes"]))
    call["attributes"].append({"key": "gen_ai.usage.cost", "value": {"doubleValue": 0.0123}})
    path = tmp_path / "otel_cost.json"
    path.write_text(json.dumps(otel))
    usages = [m.usage for m in load_session(path).session.messages if m.usage]
    assert usages[0].cost_usd == 0.0123 and all(u.cost_usd is None for u in usages[1:])


def test_r_twin_6_batch_rows_state_the_same_cost_and_the_price_date(real_sessions):
    """R-TWIN-6: a batch row prices the session like ``--summary-json`` (same replay cost, same
    saving against the bill) and names the price data's date."""
    from workbench.corpus.tables import replay_one, to_arrow

    path = real_sessions / "claude_code" / CLAUDE_FILES[2]
    (row,) = replay_one(path)["sessions"]
    session = load_session(path).session
    cost = replay_cost(session, replay(session))
    assert row["error"] is None
    for key in ("replay_usd", "saved_usd", "recorded_billed_usd", "prices_as_of"):
        assert row[key] == getattr(cost, key), key
    assert to_arrow("sessions", [row]).num_rows == 1


def test_r_twin_6_a_saved_replay_is_priced_like_the_live_one(real_sessions):
    """R-TWIN-6: a replay saved in a real SQLite store finds the shared prefixes from its stored
    part ids and prices exactly like the live replay (cache split, bill, saving)."""
    from workbench.services.costs import stored_replay_cost
    from workbench.services.replay import open_saved, replay_and_save, replay_session
    from workbench.storage.store import open_store

    with open_store() as store:
        sid = store.import_file(real_sessions / "claude_code" / CLAUDE_FILES[2]).session_id
        info, _ = replay_and_save(store, sid)
        session = store.session(sid)
        stored = stored_replay_cost(session, open_saved(store, info.id))
    expected = replay_cost(session, replay_session(session)[0])  # request bodies kept
    assert stored.replay_cache is not None and stored.replay_cache.read_tokens > 0
    assert stored.savings is not None  # the default reduction rewrote old outputs:
    assert (stored.savings.cache_misses_usd or 0) > 0
    for key in ("requests_usd", "recorded_billed_usd", "saved_usd", "replay_cache", "savings"):
        assert getattr(stored, key) == getattr(expected, key), key


def test_r_twin_6_the_agents_compaction_call_is_part_of_the_bill():
    """R-TWIN-6: the agent's own compaction request (Claude Code ``agent-acompact-*`` beside the
    transcript) is billed with the responses: its usage priced like theirs."""
    session = load_session(FIX.parent / "claude_project" / "sess-proj.jsonl").session
    (call,) = [c.request_usage for c in session.compactions if c.request_usage is not None]
    bill = recorded_bill(session)
    request = billed(call, "claude-opus-4-6", None).usd
    alone = recorded_bill(session.model_copy(update={"compactions": ()}))
    assert bill.compaction_requests == 1 and alone.compaction_requests == 0
    assert request is not None and alone.usd is not None
    assert bill.usd == pytest.approx(alone.usd + float(request), abs=1e-6)


def test_r_twin_6_a_recorded_cost_of_zero_is_not_a_price():
    """R-TWIN-6: litellm records 0 for a model it cannot price; such a response falls back to the
    list price instead of billing nothing."""
    usage = Usage(input_tokens=1_000_000, output_tokens=0, cost_usd=0.0)
    assert billed(usage, "claude-opus-4-6", None).source == "list price"
    assert billed(usage.model_copy(update={"cost_usd": 0.25}), "claude-opus-4-6", None).usd == (
        Decimal("0.25"))


def test_r_twin_6_the_agents_own_summary_costs_what_the_agent_paid_for_it(real_sessions):
    """R-TWIN-6: the claude-code profile with the recorded summariser reuses the agent's summary
    at the agent's compaction; when the transcript records that summary call (as an
    ``agent-acompact`` request beside it does), the replay is charged what the agent paid for it,
    not an uncached estimate of the request; when it does not, neither the recorded bill nor the
    replay holds a price for that call (like with like)."""
    from iris.compaction.summarisers import RecordedSummariser

    from workbench.services.presets import resolve_config

    session = load_session(real_sessions / "claude_code" / CLAUDE_FILES[0]).session
    call = Usage(input_tokens=3, output_tokens=4_000, cache_read_tokens=166_758,
                 cache_write_tokens=500, model="claude-opus-4-6")  # the shape of a real one
    linked = session.model_copy(update={"compactions": tuple(
        c.model_copy(update={"request_usage": call}) for c in session.compactions)})
    profile = resolve_config("claude-code")
    with_call = replay_cost(linked, replay(linked, profile, summariser=RecordedSummariser(linked)))
    without = replay_cost(session, replay(session, profile,
                                          summariser=RecordedSummariser(session)))
    paid = billed(call, "claude-opus-4-6", None).usd
    assert paid is not None and with_call.summaries_estimated is False
    assert with_call.summaries_usd == pytest.approx(float(paid), abs=1e-6)
    assert without.summaries_estimated is False and without.summaries_usd == 0
    # The bill holds the agent's call exactly when the replay is charged it, and the saving
    # leaves that shared call out on both sides.
    billed_with, billed_without = all_present((with_call.recorded_billed_usd,
                                               without.recorded_billed_usd))
    assert billed_with - billed_without == pytest.approx(float(paid), abs=1e-5)
    assert with_call.saved_usd == pytest.approx(without.saved_usd, abs=1e-5)
    assert with_call.savings is not None and with_call.savings.summaries_usd == 0
