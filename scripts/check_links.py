#!/usr/bin/env python3
"""Checks every link and anchor of the project's Markdown files.

A link to a file of the repository must name a file that exists; a link with
an anchor (`file.md#heading`, `#heading`) must name a heading of that Markdown
file, spelled as GitHub spells anchors (lower case, punctuation dropped,
spaces as hyphens, `-1`, `-2` for repeated headings). DocC's `<doc:Name>`
must name an article of the same catalog. Links to other sites are not
fetched (CI has no business depending on them). Dated headings get renamed
and sections removed: this is what notices the links left behind.

Usage: python3 scripts/check_links.py [FILE.md ...]
Without arguments: README.md, docs/*.md and every *.docc/*.md of Sources.
Exits 1 with one line per broken link (file:line: what), else 0.
"""
import glob
import os
import re
import sys
import unicodedata
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target) and ![alt](target); target up to whitespace or ')', an optional "title".
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
DOC_LINK = re.compile(r"<doc:([^>#]+)(?:#([^>]+))?>")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def default_files():
    files = [os.path.join(REPO, "README.md")]
    files += sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(REPO, "Sources", "**", "*.docc", "**", "*.md"), recursive=True))
    return files


def lines_outside_code(text, blank_inline_code=True):
    """(line number, line) of every line not inside a fenced code block,
    inline code spans blanked out unless asked to keep them (headings)."""
    in_fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        fence = FENCE.match(line)
        if fence:
            if in_fence is None:
                in_fence = fence.group(1)
            elif fence.group(1) == in_fence:
                in_fence = None
            continue
        if in_fence is None:
            yield number, INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line) if blank_inline_code else line


def github_slug(heading):
    """GitHub's anchor of a heading: its text without markup, lower case,
    every character but letters, digits, spaces, '-' and '_' dropped,
    spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # links: their text
    text = re.sub(r"<[^>]+>", "", text)                          # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    kept = []
    for character in text:
        category = unicodedata.category(character)
        if character in " -_" or category[0] in "LN" or category == "Mn":
            kept.append(character)
    return "".join(kept).replace(" ", "-")


_anchor_cache = {}


def anchors_of(path):
    if path not in _anchor_cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        anchors, seen = set(), {}
        for _, line in lines_outside_code(text, blank_inline_code=False):
            heading = HEADING.match(line)
            if heading:
                slug = github_slug(heading.group(2))
                count = seen.get(slug, 0)
                seen[slug] = count + 1
                anchors.add(slug if count == 0 else f"{slug}-{count}")
            anchors.update(HTML_ANCHOR.findall(line))
        _anchor_cache[path] = anchors
    return _anchor_cache[path]


def check_target(source, target):
    """None when `target`, written in `source`, resolves; else why not."""
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):   # http:, https:, mailto:, doc: ...
        return None
    path_part, _, anchor = target.partition("#")
    path_part = urllib.parse.unquote(path_part)
    if path_part.startswith("/"):
        resolved = os.path.normpath(os.path.join(REPO, path_part.lstrip("/")))
    elif path_part:
        resolved = os.path.normpath(os.path.join(os.path.dirname(source), path_part))
    else:
        resolved = source
    if not os.path.exists(resolved):
        return f"{target}: no such file {os.path.relpath(resolved, REPO)}"
    if anchor and resolved.endswith(".md"):
        anchor = urllib.parse.unquote(anchor)
        if anchor not in anchors_of(resolved):
            return f"{target}: {os.path.relpath(resolved, REPO)} has no heading with the anchor #{anchor}"
    return None


def check_doc_link(source, name, anchor):
    """DocC: <doc:Article> names Article.md somewhere in the same catalog."""
    catalog = source
    while catalog != REPO and not catalog.endswith(".docc"):
        catalog = os.path.dirname(catalog)
    if not catalog.endswith(".docc"):
        return f"<doc:{name}> outside a DocC catalog"
    article = name.split("/")[-1]
    matches = glob.glob(os.path.join(catalog, "**", f"{article}.md"), recursive=True)
    if not matches:
        return f"<doc:{name}>: no article {article}.md in {os.path.relpath(catalog, REPO)}"
    if anchor and github_slug(anchor) not in anchors_of(matches[0]) and anchor not in anchors_of(matches[0]):
        return f"<doc:{name}#{anchor}>: {os.path.relpath(matches[0], REPO)} has no such heading"
    return None


def check_file(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    problems, count = [], 0
    for number, line in lines_outside_code(text):
        targets = [m.group(1) for m in LINK.finditer(line)]
        definition = REFERENCE_DEFINITION.match(line)
        if definition:
            targets.append(definition.group(1))
        for target in targets:
            count += 1
            problem = check_target(path, target)
            if problem:
                problems.append(f"{os.path.relpath(path, REPO)}:{number}: {problem}")
        for doc in DOC_LINK.finditer(line):
            count += 1
            problem = check_doc_link(path, doc.group(1), doc.group(2))
            if problem:
                problems.append(f"{os.path.relpath(path, REPO)}:{number}: {problem}")
    return problems, count


def main(arguments):
    files = [os.path.abspath(a) for a in arguments] or default_files()
    problems, links = [], 0
    for path in files:
        found, count = check_file(path)
        problems += found
        links += count
    for problem in problems:
        print(f"check_links: FAIL: {problem}")
    if problems:
        print(f"check_links: {len(problems)} broken of {links} links in {len(files)} files")
        return 1
    print(f"check_links: OK ({links} links in {len(files)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
