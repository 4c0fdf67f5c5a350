"""The bundled sample sessions (native JSONL + context.yaml); installed as ``workbench.sample_sessions``."""
