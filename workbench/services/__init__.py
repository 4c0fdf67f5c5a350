"""Services: what the pages, the CLI and the notebook call to act on sessions and replays.

``replay`` (replay, save, reopen), ``rerun`` (re-run with edited templates), ``imports`` (import
transcripts into the store) and ``presets`` (named configurations, ``resolve_config``). Services
use the engine and the store and return records; views turn records into tables and figures and
never import a service.
"""
