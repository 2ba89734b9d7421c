"""``parse_pdf``, ``parse_docx``, ``parse_pptx``, ``parse_latex``: documents printed as text.

The output follows OpenHands' agentskills file readers (a ``[Reading ... file from <path>]``
line, then ``@@ Page N @@`` / ``@@ Slide N @@`` sections). The documents are read by the
runtime's own converters (pdf.js, mammoth, the OOXML parts; see
src/executor/editor/documents.ts), run in the same Node process ``file_editor`` uses, so
the kernel needs no PDF or Office library. LaTeX is converted with pylatexenc when the
kernel has it, as OpenHands does; otherwise with the small converter below.
"""

import re

from .file_editor import _run_editor


def _parse(file_path):
    result = _run_editor({'parse': str(file_path)})
    if 'error' in result:
        raise RuntimeError(result['error'])
    return result


def parse_pdf(file_path: str) -> None:
    """Print the text of each page of a PDF file."""
    print(f'[Reading PDF file from {file_path}]')
    pages = _parse(file_path)['pages']
    print(''.join(f'@@ Page {i + 1} @@\n{text}\n\n' for i, text in enumerate(pages)).strip())


def parse_docx(file_path: str) -> None:
    """Print each paragraph of a DOCX file (OpenHands numbers them as pages)."""
    print(f'[Reading DOCX file from {file_path}]')
    paragraphs = _parse(file_path)['paragraphs']
    print(''.join(f'@@ Page {i + 1} @@\n{text}\n\n' for i, text in enumerate(paragraphs)))


def parse_pptx(file_path: str) -> None:
    """Print the text of each shape of each slide of a PowerPoint file."""
    print(f'[Reading PowerPoint file from {file_path}]')
    try:
        lines = []
        for i, shapes in enumerate(_parse(file_path)['slides']):
            lines.append(f'@@ Slide {i + 1} @@')
            lines.extend(shapes)
        print('\n'.join(lines))
    except Exception as e:
        print(f'Error reading PowerPoint file: {e}')


def _latex_to_text(source):
    """A plain-text reading of LaTeX for kernels without pylatexenc: the document body,
    comments and markup dropped, sections as ``§ Title``, list items as ``  * ``."""
    text = re.sub(r'(?<!\\)%.*', '', source)
    body = re.search(r'\\begin\{document\}(.*?)\\end\{document\}', text, re.S)
    if body:
        text = body.group(1)
    text = re.sub(r'\\(?:sub)*section\*?\{([^{}]*)\}', r'\n§ \1\n', text)
    text = re.sub(r'\\item\s*', '  * ', text)
    text = re.sub(r'\\(?:begin|end)\{[^{}]*\}', '', text)
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r'\\[a-zA-Z]+\*?(?:\[[^\]]*\])?\{([^{}]*)\}', r'\1', text)
    text = re.sub(r'\\\\', '\n', text)
    text = re.sub(r'\\([%$&#_{}])', r'\1', text)
    text = re.sub(r'\\[a-zA-Z]+\*?', '', text).replace('~', ' ')
    text = re.sub(r'[ \t]+\n', '\n', text)
    return re.sub(r'\n{3,}', '\n\n', text)


def parse_latex(file_path: str) -> None:
    """Print the text of a LaTeX file."""
    print(f'[Reading LaTex file from {file_path}]')
    with open(file_path) as f:
        data = f.read()
    try:
        from pylatexenc.latex2text import LatexNodes2Text
    except ImportError:
        text = _latex_to_text(data)
    else:
        text = LatexNodes2Text().latex_to_text(data)
    print(text.strip())
