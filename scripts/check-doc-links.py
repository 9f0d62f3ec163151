#!/usr/bin/env python3
"""Checks that every relative link and image of the Markdown docs resolves: the file exists and,
for a link with #anchor, a heading of the target file has that GitHub anchor.
    python3 check-doc-links.py [ROOT]      (default: the current directory)"""
import os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else '.'
files = [os.path.join(root, f) for f in ('README.md', 'CONTRIBUTING.md')]
files += sorted(os.path.join(root, 'docs', f) for f in os.listdir(os.path.join(root, 'docs'))
                if f.endswith('.md'))

def strip_code(text):
    text = re.sub(r'^```.*?^```', '', text, flags=re.S | re.M)
    return re.sub(r'`[^`\n]*`', '', text)

def anchors(path):
    seen, out = {}, set()
    text = re.sub(r'^```.*?^```', '', open(path, encoding='utf-8').read(), flags=re.S | re.M)
    for m in re.finditer(r'^#{1,6}\s+(.*?)\s*#*\s*$', text, flags=re.M):
        title = re.sub(r'[`*]', '', m.group(1))
        title = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', title)
        slug = ''.join(c for c in title.lower() if c.isalnum() or c in ' -_').replace(' ', '-')
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f'{slug}-{n}')
    return out

bad = 0
checked = 0
for f in files:
    text = strip_code(open(f, encoding='utf-8').read())
    for m in re.finditer(r'!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)', text):
        target = m.group(1)
        if re.match(r'[a-z]+:', target):
            continue
        checked += 1
        path, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(dest):
            print(f'{f}: {target}: no such file {dest}')
            bad += 1
        elif anchor and dest.endswith('.md') and anchor not in anchors(dest):
            print(f'{f}: {target}: no heading with anchor #{anchor} in {dest}')
            bad += 1
print(f'{checked} links and images checked in {len(files)} files, {bad} broken')
sys.exit(1 if bad else 0)
