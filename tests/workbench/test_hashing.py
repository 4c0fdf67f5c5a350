"""The hash contract (iris.hashing): one canonical JSON form and one ``sha256:`` content hash for
record ids, request references, configuration and template snapshot ids, the summary cache and the
store's JSON columns (R-PREP-1). Changing the form is a migration: these values are pinned."""

from __future__ import annotations

import hashlib

from iris.compaction.summary_cache import request_key
from iris.config import config_hash, default_config
from iris.hashing import canonical_json, content_hash, hex_digest, text_hash
from iris.preparation.records import canonical_json as records_canonical_json
from iris.prompts import PromptSnapshot, default_template_source
from iris.prompts.ids import PROMPT_IDS
from iris.session import Message, TextBlock

from workbench.storage._sql import canonical

VALUE = {"b": 1, "a": "é", "c": [1, 2.5, None, True], "d": {"z": "", "y": "x"}}


def test_r_prep_1_canonical_form_is_pinned():
    """Sorted keys, no whitespace, non-ASCII kept: the exact text and its hash never change."""
    assert canonical_json(VALUE) == '{"a":"é","b":1,"c":[1,2.5,null,true],"d":{"y":"x","z":""}}'
    assert content_hash(VALUE) == (
        "sha256:fa81b60c680a80ba9c89abcb2248fdef96dac9a8288cff0a689cd5f3776fa1a8")
    assert text_hash("") == "sha256:" + hex_digest("") == (
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")


def test_models_hash_as_their_json_dump():
    """A pydantic model is hashed as ``model_dump(mode="json")``: the record and its dict agree."""
    message = Message(role="user", content=(TextBlock(text="hi"),))
    assert canonical_json(message) == canonical_json(message.model_dump(mode="json"))


def test_every_caller_uses_the_one_form():
    """The store's JSON text, the records module, the configuration id, the template snapshot id
    and the summary cache key are all taken over the same canonical text."""
    assert canonical(VALUE) == records_canonical_json(VALUE) == canonical_json(VALUE)
    assert config_hash(default_config()) == (
        "sha256:c8017f0a9e9b4a76eeb67db3e19607649b8448cfb5966756030f85369920eeb7")
    sources = {pid: default_template_source(pid) for pid in PROMPT_IDS}
    assert PromptSnapshot(sources).snapshot_id == content_hash(sources)
    body = {"model": "m", "messages": [{"role": "user", "content": "é"}]}
    expected = hashlib.sha256(
        '{"body":{"messages":[{"content":"é","role":"user"}],"model":"m"},"endpoint":"u"}'
        .encode()).hexdigest()
    assert request_key("u", body) == expected
