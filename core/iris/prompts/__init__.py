"""iris.prompts: the project's named prompt templates (R-PRM-1…4).

``PromptSource`` manages ``<workspace>/.iris/prompts``; ``PromptSnapshot`` freezes the sources,
renders them in a sandbox, and makes edited copies with ``with_template`` without touching disk.
"""

from .config import PromptConfig
from .configured import configured_snapshot, prompts_directory
from .ids import PROMPT_IDS, PROMPT_VARIABLES
from .snapshot import PromptSnapshot, default_template_source
from .source import PromptSource
from .templates import PromptTemplates

__all__ = [
    "PROMPT_IDS",
    "PROMPT_VARIABLES",
    "PromptConfig",
    "PromptSnapshot",
    "PromptSource",
    "PromptTemplates",
    "configured_snapshot",
    "default_template_source",
    "prompts_directory",
]
