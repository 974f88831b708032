#!/usr/bin/env python3
"""Keeps files and classes small enough to read.

  check-sizes.py --src SRC_DIR [--max-lines 600] [--max-public 15] [--classes-in a,b,...]

Fails (exit 1), naming each offender, when a .h/.cc file under SRC_DIR has more than
--max-lines lines, or when a class or struct declared in a header of one of the --classes-in
folders has more than --max-public public member functions (constructors, destructors,
operators and deleted functions not counted; overloads count once each).
"""
import argparse
import os
import re
import sys

KEYWORDS = {'if', 'for', 'while', 'switch', 'return', 'sizeof', 'decltype', 'static_assert',
            'alignof', 'noexcept', 'requires'}


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def public_methods(text):
    """Yields (class name, [public member function names]) for each class in `text`."""
    text = strip_comments(text)
    for m in re.finditer(r'\b(class|struct)\s+(?:\w+\s+)*?(\w+)\s*(?:final\s*)?(?::[^{;]*)?\{', text):
        kind, name = m.group(1), m.group(2)
        access = 'private' if kind == 'class' else 'public'
        depth, i, stmt, methods = 1, m.end(), '', []
        while i < len(text) and depth > 0:
            c = text[i]
            if c == '{':
                if depth == 1:
                    methods += function_name(stmt, name, access)
                    stmt = ''
                depth += 1
            elif c == '}':
                depth -= 1
            elif depth == 1:
                if c == ';':
                    methods += function_name(stmt, name, access)
                    stmt = ''
                elif c == ':' and re.fullmatch(r'\s*(public|private|protected)\s*', stmt):
                    access = stmt.strip()
                    stmt = ''
                else:
                    stmt += c
            i += 1
        yield name, sorted(set(methods))


def function_name(stmt, cls, access):
    if access != 'public':
        return []
    s = ' '.join(stmt.split())
    if not s or s.startswith(('using ', 'friend ', 'typedef ', 'enum ', 'class ', 'struct ',
                              'template <typename', 'static_assert')) and '(' not in s:
        return []
    if s.startswith(('friend ', 'using ')) or '= delete' in s or 'operator' in s:
        return []
    s = re.sub(r'^template\s*<[^>]*>\s*', '', s)
    m = re.match(r'[^(=]*?(~?\w+)\s*\(', s)
    if not m:
        return []
    fname = m.group(1)
    if fname in KEYWORDS or fname.lstrip('~') == cls or fname.isupper():
        return []
    return [fname]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--src', required=True)
    ap.add_argument('--max-lines', type=int, default=600)
    ap.add_argument('--max-public', type=int, default=15)
    ap.add_argument('--classes-in', default='')
    args = ap.parse_args()
    class_dirs = [d for d in args.classes_in.split(',') if d]
    errors = []
    for dirpath, _, files in os.walk(args.src):
        for f in sorted(files):
            if not f.endswith(('.h', '.cc')):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, args.src)
            with open(path, errors='replace') as fh:
                text = fh.read()
            n = text.count('\n')
            if n > args.max_lines:
                errors.append(f'src/{rel}: {n} lines (at most {args.max_lines}); split it by responsibility')
            if f.endswith('.h') and rel.split(os.sep)[0] in class_dirs:
                for cls, methods in public_methods(text):
                    n = len(methods)
                    if n > args.max_public:
                        errors.append(f'src/{rel}: class {cls} has {n} public member functions '
                                      f'(at most {args.max_public}): {" ".join(methods)}')
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f'sizes: ok (files <= {args.max_lines} lines; classes in {", ".join(class_dirs) or "-"} '
          f'<= {args.max_public} public member functions)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
