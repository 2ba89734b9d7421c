"""effect-sandbox's agent_skills: helpers an agent calls in the IPython kernel.

The runtime imports them into the kernel with ``from effect_sandbox_skills import *``
when the ``agent_skills`` and ``jupyter`` plugins are on, as OpenHands does with its
``agentskills`` module. Their texts follow OpenHands' agentskills (docs/tools/agent-skills.md).
"""

from .file_editor import file_editor
from .file_ops import find_file, goto_line, open_file, scroll_down, scroll_up, search_dir, search_file
from .file_readers import parse_docx, parse_latex, parse_pdf, parse_pptx

__all__ = [
    'open_file',
    'goto_line',
    'scroll_down',
    'scroll_up',
    'search_dir',
    'search_file',
    'find_file',
    'file_editor',
    'parse_pdf',
    'parse_docx',
    'parse_latex',
    'parse_pptx',
]
