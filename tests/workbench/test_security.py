"""Security: user-edited Jinja templates cannot reach Python internals, the file system or
the environment, nor exhaust memory or time (R-BUILD-4); state_files, artifact and archive paths
cannot escape their directories (R-CMP-12, R-POL-4, R-RED-8); uploaded file names are sanitised
(R-SES-1). The browser side (session content never rendered as HTML) is
``tests/browser/test_browser_xss.py``."""

from __future__ import annotations

import os
import time

import pytest
from iris.compaction import write_archive
from iris.compaction.model_driven import CheckpointArgsError, normalize_state_files
from iris.context.access import ContextAccessPort, ContextReadParams
from iris.errors import ContextAccessError, StorageError, TemplateError
from iris.prompts import PromptSnapshot
from iris.prompts.render import compile_template, render_template
from iris.reduction.artifacts import artifact_path, write_artifact
from iris.session import Message, TextBlock, ToolCallBlock, ToolResultBlock

from workbench.services.imports import safe_upload_name

SECRET_ENV = "WB_SECURITY_TEST_SECRET"

#: Known sandbox escapes (SSTI payloads) and what must never appear in the output.
ESCAPES = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ ''.__class__.__mro__ }}",
    "{{ cycler.__init__.__globals__.os.environ }}",
    "{{ joiner.__init__.__globals__.os.popen('id').read() }}",
    "{{ namespace.__init__.__globals__.os.environ }}",
    "{{ lipsum.__globals__['os'].environ }}",
    "{{ lipsum.__globals__.__builtins__.open('/etc/passwd').read() }}",
    "{{ lipsum | attr('__globals__') }}",
    "{{ self._TemplateReference__context }}",
    "{{ self.__init__.__globals__ }}",
    "{{ request.application.__globals__ }}",
    "{{ config.items() }}",
    "{{ '{0.__class__.__mro__}'.format('') }}",
    "{{ dict.mro() }}",
    "{{ range.__self__ }}",
    "{% set x = [].append %}{{ x(1) }}",
]

#: Expressions that would allocate gigabytes or run for ever without bounds.
EXHAUSTION = [
    "{{ range(10**9) | list | length }}",
    "{% for i in range(10**9) %}{% endfor %}",
    "{{ 'a' * 10**10 }}",
    "{{ [1] * 10**9 }}",
    "{{ 2 ** (2 ** 40) }}",
    "{{ '%0999999999d' % 1 }}",
    "{{ '%.99999999f' % 1 }}",
    "{{ '{:>9999999999}'.format(1) }}",
    "{{ 'x'.ljust(10**10) }}",
    "{{ 'x' | center(10**10) }}",
    "{{ 'x' | indent(10**10) }}",
    "{{ '%099999999d' | format(1) }}",
]


def _render(source: str) -> str:
    return render_template(compile_template(source, "user.j2"), {}, "user.j2")


@pytest.mark.parametrize("source", ESCAPES)
def test_r_build_4_sandbox_refuses_known_escapes(source, monkeypatch):
    """R-BUILD-4: every classic SSTI payload is refused with a TemplateError naming the template."""
    monkeypatch.setenv(SECRET_ENV, "s3cr3t-value")
    with pytest.raises(TemplateError) as err:
        out = _render(source)
        assert "s3cr3t" not in out and "root:" not in out  # never reached when refused
    assert err.value.template == "user.j2"


@pytest.mark.parametrize("source", ESCAPES[:8])
def test_r_build_4_prompt_snapshot_refuses_escapes_at_edit_or_render(source):
    """R-BUILD-4: an edited prompt template with an escape never renders Python internals."""
    with pytest.raises(TemplateError):
        snap = PromptSnapshot.defaults().with_template("todo_reminder", source)
        snap.render("todo_reminder", {"todos": [], "turns_since_update": 3})


@pytest.mark.parametrize("source", EXHAUSTION)
def test_r_build_4_resource_exhaustion_is_refused_quickly(source):
    """R-BUILD-4: huge ranges, repetitions, powers and widths are refused in well under a second."""
    start = time.process_time()  # CPU time: other processes' load does not count
    with pytest.raises(TemplateError, match="sandbox|Range too big"):
        _render(source)
    assert time.process_time() - start < 2


def test_r_build_4_ordinary_templates_still_work():
    """The bounds refuse only huge values: normal formatting, repetition and filters render."""
    src = ("{{ 'ab' * 3 }}|{{ 2 ** 10 }}|{{ '%s-%03d' % ('a', 7) }}|{{ '{:>4}'.format(5) }}|"
           "{{ 'x' | center(5) }}|{{ '%d%%' | format(50) }}|{% for i in range(3) %}{{ i }}{% endfor %}")
    assert _render(src) == "ababab|1024|a-007|   5|  x  |50%|012"
    big = "{{ '{:,}'.format(n) }}|{{ '%d' % n }}|{{ '%d' | format(n) }}|{{ n | string | length }}|{{ [n, 1] | max }}"
    assert render_template(compile_template(big, "t"), {"n": 2_500_000_000}, "t") == \
        "2,500,000,000|2500000000|2500000000|10|2500000000"


def test_r_build_4_environment_and_files_unreachable(monkeypatch):
    """R-BUILD-4: no global exposes the environment or open(); undefined names are errors."""
    monkeypatch.setenv(SECRET_ENV, "s3cr3t-value")
    for name in ("os", "environ", "open", "__builtins__", "import", "getattr", "eval", "exec"):
        with pytest.raises(TemplateError, match="undefined"):
            _render("{{ " + name + " }}")


# ----------------------------------------------------------------------------- state_files

@pytest.mark.parametrize("raw", ["../outside.md", "../../etc/passwd", "/etc/passwd", "notes/../../x.md",
                                 "~/../../etc/shadow"])
def test_r_cmp_12_state_files_cannot_escape_the_project(raw, tmp_path):
    """R-CMP-12: `..`, absolute and home-relative paths outside the project root are refused."""
    root = tmp_path / "project"
    root.mkdir()
    with pytest.raises(CheckpointArgsError, match="outside"):
        normalize_state_files([raw], root)


def test_r_cmp_12_state_file_symlink_out_of_the_project_refused(tmp_path):
    """R-CMP-12: a symlink inside the root that points outside it is refused (inside ones pass)."""
    root, outside = tmp_path / "project", tmp_path / "secret.txt"
    root.mkdir()
    outside.write_text("secret")
    (root / "link.md").symlink_to(outside)
    (root / "real.md").write_text("ok")
    (root / "inner.md").symlink_to(root / "real.md")
    with pytest.raises(CheckpointArgsError, match="symlink"):
        normalize_state_files(["link.md"], root)
    assert normalize_state_files(["inner.md", "./real.md"], root) == ("inner.md", "real.md")


# ----------------------------------------------------------------------------- artifacts

@pytest.mark.parametrize("tool", ["../../etc/cron.d/x", "/abs/path", "..", ".hidden", "a\\..\\b", "név/∂"])
def test_r_red_8_artifact_names_stay_in_the_session_dir(tool, tmp_path):
    """R-RED-8: whatever the tool name, artifacts land directly in <session_dir>/tool-outputs."""
    path = write_artifact(tmp_path, "tool-outputs", tool, "body")
    assert path.parent == (tmp_path / "tool-outputs").resolve()
    assert not path.name.startswith(".") and "/" not in path.name and path.read_text() == "body"
    assert artifact_path(tmp_path, "tool-outputs", tool, "body") == path


def _result_session(artifact: str) -> list[Message]:
    return [Message(role="assistant", content=(ToolCallBlock(id="c1", name="Read", arguments={}),)),
            Message(role="tool", content=(ToolResultBlock(call_id="c1", text="preview", artifact_path=artifact),))]


def test_r_pol_4_raw_read_cannot_escape_through_dotdot_absolute_or_symlink(tmp_path):
    """R-POL-4: a recorded artifact path (untrusted: it comes from the transcript) that leads out
    of the session's directories is refused, whether by `..`, an absolute path or a symlink."""
    work_dir = tmp_path / "session"
    (work_dir / "tool-outputs").mkdir(parents=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    (work_dir / "tool-outputs" / "link.txt").symlink_to(secret)
    (work_dir / "tool-outputs" / "ok.txt").write_text("fine")
    for bad in ("../secret.txt", str(secret), "tool-outputs/link.txt", "tool-outputs/../../secret.txt"):
        port = ContextAccessPort({"s": _result_session(bad)}, artifact_root=work_dir)
        with pytest.raises(ContextAccessError, match="outside"):
            port.read("s", ContextReadParams(ref="result:1:0", representation="raw"))
    port = ContextAccessPort({"s": _result_session("tool-outputs/ok.txt")}, artifact_root=work_dir)
    assert port.read("s", ContextReadParams(ref="result:1:0", representation="raw")).content == "fine"


def test_r_pol_4_raw_read_without_any_root_reads_nothing(tmp_path):
    """R-POL-4: with no artifact root and no workspace, an absolute recorded path is not read."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    port = ContextAccessPort({"s": _result_session(str(secret))})
    with pytest.raises(ContextAccessError) as err:
        port.read("s", ContextReadParams(ref="result:1:0", representation="raw"))
    assert "TOP SECRET" not in str(err.value)


# ----------------------------------------------------------------------------- archives

def test_r_cmp_7_archive_never_written_through_a_planted_symlink(tmp_path):
    """R-CMP-7: an archive is created exclusively; a symlink planted at its name is not followed."""
    target = tmp_path / "victim.txt"
    target.write_text("original")
    work_dir = tmp_path / "session"
    work_dir.mkdir()
    (work_dir / "history-1.md").symlink_to(target)
    msgs = [Message(role="user", content=(TextBlock(text="hello"),))]
    with pytest.raises(StorageError, match="symbolic link"):
        write_archive(work_dir, msgs, number=1)
    assert target.read_text() == "original"
    path = write_archive(work_dir, msgs, number=2)
    assert path.parent == work_dir and path.name == "history-2.md" and not path.is_symlink()


# ----------------------------------------------------------------------------- uploads

@pytest.mark.parametrize(("name", "expected"), [
    ("../../etc/passwd", "passwd"),
    ("..\\..\\windows\\system32\\evil.jsonl", "evil.jsonl"),
    ("/abs/path/session.jsonl", "session.jsonl"),
    (".bashrc", "bashrc"),
    ("..", "upload.jsonl"),
    ("", "upload.jsonl"),
    ("a b;rm -rf $HOME.jsonl", "a_b_rm_-rf_HOME.jsonl"),
    ("nul\x00byte.jsonl", "nul_byte.jsonl"),
])
def test_r_ses_1_uploaded_file_names_are_sanitised(name, expected):
    """R-SES-1: a browser-supplied name becomes one harmless path component."""
    got = safe_upload_name(name)
    assert got == expected
    assert os.sep not in got and not got.startswith(".") and len(got) <= 120


def test_r_ses_1_upload_name_length_bounded():
    assert len(safe_upload_name("x" * 5000 + ".jsonl")) <= 120
