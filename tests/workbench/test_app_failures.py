"""AppTest for the Failures page (R-UI-7): failed steps listed with stage, error and a step link."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from iris.errors import SummariserError
from streamlit.testing.v1 import AppTest

from workbench.records import ReplayInfo
from workbench.services.replay import budget_96k_config, replay_and_save
from workbench.storage.store import Store, open_store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
PAGE = "../pages/failures.py"


class BrokenSummariser:
    """A summariser that always fails, as an unreachable model would (no kind: saved as custom)."""

    kind = ""

    def summarise(self, request, *, timeout_seconds):
        raise SummariserError("model endpoint refused the connection")


@pytest.fixture(scope="module")
def broken_db(tmp_path_factory) -> tuple[Path, str, ReplayInfo]:
    """One store holding long_session replayed with a failing summariser (made once per module)."""
    path = tmp_path_factory.mktemp("broken") / "workbench.db"
    with Store(path) as store:
        session_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
        info, _ = replay_and_save(store, session_id, name="broken summariser",
                                  config=budget_96k_config(), summariser=BrokenSummariser())
    return path, session_id, info


@pytest.fixture
def broken(broken_db, workbench_home) -> tuple[str, ReplayInfo]:
    """This test's WORKBENCH_HOME with a copy of that store."""
    path, session_id, info = broken_db
    workbench_home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, workbench_home / "workbench.db")
    return session_id, info


def test_r_ui_7_all_ready_says_so():
    with open_store() as store:
        store.import_file(ROOT / "sample_sessions" / "bugfix.jsonl")
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page(PAGE).run()
    assert not at.exception and "is ready" in at.success[0].value


def test_r_ui_7_failed_steps_with_stage_error_and_link(broken):
    session_id, info = broken
    assert info.failed_count + info.cancelled_count >= 1
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.sidebar.selectbox(key="wb_replay").select(info.id).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert set(table["phase"]) <= {"failed", "cancelled"} and len(table) >= 1
    assert set(table["stage"]) == {"compaction"}
    assert table["error"].str.contains("refused").any()
    first = table.iloc[0]
    assert first["link"] == (f"step-through?session={session_id}&replay={info.id}"
                             f"&step={first['step']}")


def test_r_ui_7_the_link_opens_the_failed_step_with_its_error(broken):
    """R-UI-7: the link's query (?session=…&replay=…&step=…) opens that step, phase and error shown."""
    from urllib.parse import parse_qsl, urlsplit

    from workbench.views.failures import failures_table

    session_id, info = broken
    with open_store() as store:
        link = failures_table(store.replays.open(info.id).steps, session_id=session_id,
                              replay_id=info.id).iloc[0]["link"]
    query = dict(parse_qsl(urlsplit(link).query))
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update(query)
    at.run()
    at.switch_page("../pages/step_through.py").run()
    assert not at.exception, at.exception
    assert at.subheader[0].value.startswith(f"Step {query['step']} ")
    message = at.error[0].value
    assert message.startswith(("This preparation is **failed**", "This preparation is **cancelled**"))
    assert "in stage `compaction`" in message and "refused" in message
    assert "Traceback" not in message
