"""Services: what the pages, the CLI and the notebook call to act on sessions and replays.

``replay`` (replay, save, reopen), ``rerun`` (re-run with edited templates), ``templates`` (the
workspace's templates and a Templates-page re-run), ``imports`` (import transcripts into the
store), ``presets`` (named configurations, ``resolve_config``), ``summarisers`` (the summariser
and templates a replay uses), ``compare`` and ``configuration`` (the Configuration page's replays
and A/B runs), ``context`` (build and measure a context.yaml), ``truth`` (whole-request figures
and the agent's recorded compactions), ``fidelity`` (what each compaction of a saved replay
lost), ``otlp`` (an OTLP JSON file or an OTLP receiver: where a replay's spans go), ``output`` (a
command's output file or standard output), ``sessions``
(the session list and one session's header, for the pages), and one service per page that reads
a saved replay or a session: ``messages``, ``step_through``, ``usage``, ``compaction``. Services use the engine and
the store and return records; views turn records into tables and figures and never import a
service.
"""
