"""Importers added by other distributions through the ``context_workbench.importers`` entry points
(R-SES-4): a real distribution (a ``.dist-info`` with ``entry_points.txt``) on the path of a fresh
interpreter, found by importlib.metadata, used by detection, ``load_session`` and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

PLUGIN = textwrap.dedent('''
    from iris.errors import SessionFormatError
    from iris.session import Message, Session, SessionHeader, TextBlock

    ROLES = {"human": "user", "bot": "assistant"}


    class TalkImporter:
        """{"talk": [{"speaker": "human"|"bot", "said": "..."}]}"""

        name = "talk"
        priority = 45

        def detect(self, record):
            return isinstance(record, dict) and isinstance(record.get("talk"), list)

        def load(self, path, *, lenient, skipped, warnings, content_hash):
            import json
            doc = json.loads(path.read_text())
            if doc.get("crash"):
                raise KeyError("crash")
            messages = []
            for i, turn in enumerate(doc["talk"]):
                if turn.get("speaker") not in ROLES:
                    raise SessionFormatError(f"unknown speaker {turn.get('speaker')!r}", path=path,
                                             field=f"talk[{i}].speaker")
                messages.append(Message(role=ROLES[turn["speaker"]],
                                        content=(TextBlock(text=turn["said"]),)))
            return Session(header=SessionHeader(session_id="talk-" + content_hash[7:19],
                                                title="talk", source_format="talk"),
                           messages=tuple(messages))
''')

BROKEN = "raise RuntimeError('this plugin cannot even be imported')\n"

CLASH = textwrap.dedent('''
    class Clash:
        """Claims a built-in's name (and every file): must not be registered."""
        name = "codex"
        priority = 1

        def detect(self, record):
            return True

        def load(self, path, **kwargs):
            raise RuntimeError("never called")
''')


def _install(site: Path, dist: str, module: str | None, source: str, entry: str) -> None:
    """A minimal installed distribution: the module and its .dist-info with entry points."""
    if module:
        (site / f"{module}.py").write_text(source)
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[context_workbench.importers]\n{entry}\n")


def _run(site: Path, code: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.slow  # starts a process
def test_r_ses_4_entry_point_plugin_detects_and_imports(tmp_path):
    """R-SES-4: a plugin distribution adds a format without editing the package: it is listed,
    detected, imported (also gzip-compressed, also from the CLI); a broken plugin is reported
    and does not stop the others."""
    site = tmp_path / "site"
    site.mkdir()
    _install(site, "talk_importer", "talk_importer", PLUGIN, "talk = talk_importer:TalkImporter")
    _install(site, "broken_importer", "broken_importer", BROKEN, "broken = broken_importer:Nope")
    _install(site, "clash_importer", "clash_importer", CLASH, "codex = clash_importer:Clash")
    # What an installed context-workbench declares (pyproject): its own built-ins, not duplicated.
    own = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    entries = own["project"]["entry-points"]["context_workbench.importers"]
    _install(site, "context_workbench_copy", None, "",
             "\n".join(f"{k} = {v}" for k, v in entries.items()))
    talk = tmp_path / "chat.json"
    talk.write_text(json.dumps({"talk": [{"speaker": "human", "said": "hi"},
                                         {"speaker": "bot", "said": "hello"}]}, indent=2))
    code = textwrap.dedent('''
        import json, sys
        from workbench.importers import formats, load_session, detect_format
        from workbench.importers.registry import plugin_problems
        r = load_session(sys.argv[1])
        print(json.dumps({"formats": formats(), "detected": detect_format(sys.argv[1]),
                          "format": r.format, "roles": [m.role for m in r.session.messages],
                          "problems": plugin_problems()}))
    ''')
    done = _run(site, code, str(talk))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["formats"] == ["native", "codex", "claude_code", "swe_agent", "talk", "otel",
                              "openai_chat"]  # by priority; the catch-all last; no duplicates
    assert out["detected"] == out["format"] == "talk" and out["roles"] == ["user", "assistant"]
    assert sorted(out["problems"]) == [
        ("broken (broken_importer:Nope): cannot be loaded (RuntimeError: this plugin cannot even be "
         "imported)"),
        "codex (clash_importer:Clash): the format name 'codex' is already registered"]

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"talk": [{"speaker": "robot", "said": "?"}]}, indent=2))
    cli = "import sys; from workbench.cli import main; sys.exit(main(sys.argv[1:]))"
    done = _run(site, cli, "import", str(talk), str(bad))
    assert done.returncode == 1
    assert "imported: " in done.stdout and "(talk, 2 messages" in done.stdout
    assert "[talk[0].speaker]: unknown speaker 'robot'" in done.stderr and "Traceback" not in done.stderr
    crash = tmp_path / "crash.json"
    crash.write_text(json.dumps({"talk": [], "crash": True}, indent=2))
    done = _run(site, cli, "import", str(crash))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "the 'talk' importer (a plugin) failed: KeyError" in done.stderr


@pytest.mark.slow  # starts a process
def test_r_ses_4_without_plugins_the_format_is_unknown(tmp_path):
    """The same file without the plugin installed: the documented unknown-format error."""
    talk = tmp_path / "chat.json"
    talk.write_text(json.dumps({"talk": [{"speaker": "human", "said": "hi"}]}, indent=2))
    code = ("import sys\nfrom workbench.importers import load_session\n"
            "try:\n    load_session(sys.argv[1])\nexcept Exception as e:\n    print(e)")
    done = _run(tmp_path, code, str(talk))
    assert "unknown session format" in done.stdout
