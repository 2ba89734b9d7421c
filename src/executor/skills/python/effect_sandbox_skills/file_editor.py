"""``file_editor``: openhands-aci's editor function, run by effect-sandbox's own editor.

The editing itself is the runtime's OHEditor (TypeScript), run in a Node process per
call: ``$EFFECT_SANDBOX_NODE $EFFECT_SANDBOX_EDITOR_ENTRY`` reads the request as JSON on
stdin and prints the result fields; its undo history lives in
``$EFFECT_SANDBOX_EDITOR_HISTORY``. This module only builds the request and the
``<oh_aci_output_<hex>>`` envelope openhands-aci prints around the JSON result.
"""

import json
import os
import subprocess
import uuid


class EditorOutput(str):
    """The envelope text; shown as is (not as a quoted repr) when a cell ends with a call."""

    __slots__ = ()

    def __repr__(self):
        return str(self)


def _run_editor(request):
    node = os.environ.get('EFFECT_SANDBOX_NODE')
    entry = os.environ.get('EFFECT_SANDBOX_EDITOR_ENTRY')
    if not node or not entry:
        raise RuntimeError(
            'file_editor needs EFFECT_SANDBOX_NODE and EFFECT_SANDBOX_EDITOR_ENTRY (set by the agent_skills plugin)'
        )
    done = subprocess.run([node, entry], input=json.dumps(request), capture_output=True, text=True, cwd=os.getcwd())
    if done.returncode != 0 or not done.stdout:
        raise RuntimeError(f'the file editor failed (exit code {done.returncode}): {done.stderr.strip()}')
    return json.loads(done.stdout)


def file_editor(
    command: str,
    path: str,
    file_text: str | None = None,
    old_str: str | None = None,
    new_str: str | None = None,
    insert_line: int | None = None,
    view_range: list[int] | None = None,
    enable_linting: bool = False,
) -> str:
    """Run an editor command (view, create, str_replace, insert, undo_edit) on ``path``.

    Returns ``<oh_aci_output_<hex>>\\n{json}\\n</oh_aci_output_<hex>>``, where the JSON holds
    ``output``, ``error`` (and, on success, ``path``, ``prev_exist``, ``old_content``,
    ``new_content``) and ``formatted_output_and_error``, the text the agent reads.
    ``enable_linting`` is accepted and ignored, as the OpenHands runtime never sets it.
    """
    result = _run_editor(
        {
            'command': command,
            'path': os.fspath(path),
            'file_text': file_text,
            'old_str': old_str,
            'new_str': new_str,
            'insert_line': insert_line,
            'view_range': None if view_range is None else list(view_range),
        }
    )
    formatted = result.pop('formatted_output_and_error')
    fields = ','.join(f'"{key}": {json.dumps(value)}' for key, value in result.items())
    body = '{' + fields + f', "formatted_output_and_error": {json.dumps(formatted)}' + '}'
    marker = uuid.uuid4().hex
    return EditorOutput(f'<oh_aci_output_{marker}>\n{body}\n</oh_aci_output_{marker}>')
