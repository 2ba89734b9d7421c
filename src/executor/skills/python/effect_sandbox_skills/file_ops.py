"""Viewing and searching files, with the texts of OpenHands' agentskills file_ops.

One file is "open" at a time (module state below); ``open_file``, ``goto_line``,
``scroll_down`` and ``scroll_up`` print a window of at most ``WINDOW`` numbered lines
of it. Everything is printed (the functions return None), as the agent reads output.
"""

import os

WINDOW = 100

# The open file (absolute path) and the line the window is placed at.
_state = {'file': None, 'line': 1}


def _error(message):
    print(f'ERROR: {message}')


def _read_lines(path):
    """The file's lines, each ending in a newline (a missing last newline is added)."""
    with open(path, errors='replace') as handle:
        text = handle.read()
    if not text.endswith('\n'):
        text += '\n'
    return text.splitlines(keepends=True)


def _line_count(path):
    """Lines as iterating the file counts them, at least 1 (an empty file shows one empty line)."""
    with open(path, errors='replace') as handle:
        return max(1, sum(1 for _ in handle))


def _header(path, total):
    return f'[File: {os.path.abspath(path)} ({total} lines total)]\n'


def _window(path, line, size, from_line=False):
    """Numbered lines around ``line`` (or starting at it, with ``from_line``) framed by
    "more lines above/below" notes; moves the current line to ``line`` (clamped)."""
    lines = _read_lines(path)
    total = len(lines)
    line = min(max(line, 1), total)
    _state['line'] = line
    if from_line:
        first, last = line, min(total, line + size)
    else:
        half = max(1, size // 2)
        first, last = max(1, line - half), min(total, line + half)
    if first == 1:
        last = min(total, size)
    if last == total:
        first = max(1, last - size + 1)
    parts = [f'({first - 1} more lines above)' if first > 1 else '(this is the beginning of the file)']
    parts += [f'{n}|{lines[n - 1].rstrip(chr(10))}' for n in range(first, last + 1)]
    parts.append(f'({total - last} more lines below)' if last < total else '(this is the end of the file)')
    return '\n'.join(parts).rstrip()


def _open_path():
    """The open file, or None after printing why there is none."""
    path = _state['file']
    if path is None or not os.path.isfile(path):
        _error('No file open. Use the open_file function first.')
        return None
    return path


def open_file(path: str, line_number: int | None = 1, context_lines: int | None = WINDOW) -> None:
    """Open ``path`` and print up to ``context_lines`` (at most 100) lines around ``line_number``."""
    if not os.path.isfile(path):
        _error(f'File {path} not found.')
        return
    _state['file'] = os.path.abspath(path)
    total = _line_count(path)
    if not isinstance(line_number, int) or not 1 <= line_number <= total:
        _error(f'Line number must be between 1 and {total}')
        return
    size = WINDOW if context_lines is None or context_lines < 1 else min(context_lines, 100)
    output = _header(path, total) + _window(_state['file'], line_number, size)
    if output.endswith('more lines below)'):
        output += '\n[Use `scroll_down` to view the next 100 lines of the file!]'
    print(output)


def goto_line(line_number: int) -> None:
    """Move the window of the open file so that it is centred on ``line_number``."""
    path = _open_path()
    if path is None:
        return
    total = _line_count(path)
    if not isinstance(line_number, int) or not 1 <= line_number <= total:
        _error(f'Line number must be between 1 and {total}.')
        return
    print(_header(path, total) + _window(path, line_number, WINDOW))


def _scroll(step):
    path = _open_path()
    if path is None:
        return
    total = _line_count(path)
    print(_header(path, total) + _window(path, _state['line'] + step, WINDOW, from_line=True))


def scroll_down() -> None:
    """Move the window of the open file down by WINDOW lines."""
    _scroll(WINDOW)


def scroll_up() -> None:
    """Move the window of the open file up by WINDOW lines."""
    _scroll(-WINDOW)


def _walk_files(dir_path):
    for root, _dirs, names in os.walk(dir_path):
        for name in names:
            yield root, name


def search_dir(search_term: str, dir_path: str = './') -> None:
    """Print every line containing ``search_term`` in the (non-hidden) files under ``dir_path``."""
    if not os.path.isdir(dir_path):
        _error(f'Directory {dir_path} not found')
        return
    found = []
    for root, name in _walk_files(dir_path):
        if name.startswith('.'):
            continue
        path = os.path.join(root, name)
        try:
            with open(path, errors='ignore') as handle:
                found += [(path, n, line.strip()) for n, line in enumerate(handle, 1) if search_term in line]
        except OSError:
            continue
    if not found:
        print(f'No matches found for "{search_term}" in {dir_path}')
        return
    files = len({path for path, _n, _line in found})
    if files > 100:
        print(f'More than {files} files matched for "{search_term}" in {dir_path}. Please narrow your search.')
        return
    print(f'[Found {len(found)} matches for "{search_term}" in {dir_path}]')
    for path, n, line in found:
        print(f'{path} (Line {n}): {line}')
    print(f'[End of matches for "{search_term}" in {dir_path}]')


def search_file(search_term: str, file_path: str | None = None) -> None:
    """Print every line containing ``search_term`` in ``file_path`` (default: the open file)."""
    path = _state['file'] if file_path is None else file_path
    if path is None:
        _error('No file specified or open. Use the open_file function first.')
        return
    if not os.path.isfile(path):
        _error(f'File {path} not found.')
        return
    with open(path, errors='replace') as handle:
        found = [(n, line.strip()) for n, line in enumerate(handle, 1) if search_term in line]
    if not found:
        print(f'[No matches found for "{search_term}" in {path}]')
        return
    print(f'[Found {len(found)} matches for "{search_term}" in {path}]')
    for n, line in found:
        print(f'Line {n}: {line}')
    print(f'[End of matches for "{search_term}" in {path}]')


def find_file(file_name: str, dir_path: str = './') -> None:
    """Print the files under ``dir_path`` whose name contains ``file_name``."""
    if not os.path.isdir(dir_path):
        _error(f'Directory {dir_path} not found')
        return
    found = [os.path.join(root, name) for root, name in _walk_files(dir_path) if file_name in name]
    if not found:
        print(f'[No matches found for "{file_name}" in {dir_path}]')
        return
    print(f'[Found {len(found)} matches for "{file_name}" in {dir_path}]')
    for path in found:
        print(path)
    print(f'[End of matches for "{file_name}" in {dir_path}]')
