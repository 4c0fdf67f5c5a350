"""R-UI-5/R-UI-6: the app's tables draw every whole number with thousands separators (a bare
``st.dataframe`` showed the tokens sent over a real session as 15189688)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from workbench.ui.tables import grouped_numbers

if TYPE_CHECKING:
    from streamlit.elements.lib.column_types import ColumnConfig


def test_r_ui_6_integer_columns_get_a_grouped_number_format():
    frame = pd.DataFrame({"configuration": ["default"], "tokens_sent": [15_189_688],
                          "failed": pd.array([None], dtype="Int64"), "ratio": [1.39],
                          "applied": [True]})
    link: ColumnConfig = {"label": "open"}
    config = grouped_numbers(frame, {"configuration": link})
    assert config["configuration"] is link
    assert {k for k, v in config.items() if isinstance(v, dict)
            and (v.get("type_config") or {}).get("format") == "localized"} == {"tokens_sent",
                                                                             "failed"}
