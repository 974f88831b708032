#!/usr/bin/env python3
"""Keeps files and classes small enough to read.

  check-sizes.py --src SRC_DIR [--max-lines 600] [--max-public 15] [--max-class-lines 1200]
                 [--classes-in a,b,...]

Fails (exit 1), naming each offender, when
  - a .h/.cc file under SRC_DIR has more than --max-lines lines;
  - a class or struct declared in a header of one of the --classes-in folders has more than
    --max-public entry points: its public member functions plus the public member functions of
    every class it declares `friend` (a friend reaches its private state, so the friend's entry
    points are the class's too). Constructors, destructors, operators and deleted functions are
    not counted; overloads count once each;
  - such a class has more than --max-class-lines lines of member function definitions
    (`Class::Name(...) { ... }`, from the line that names it to the closing brace) over all the
    .cc files of SRC_DIR that define them (a .cc file counts when it is in the class's folder or
    includes its header): a class is as long as its definitions, wherever they are.
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
    """Yields (class name, [public member function names], [friend class names]) for each
    class in `text`."""
    text = strip_comments(text)
    for m in re.finditer(r'\b(class|struct)\s+(?:\w+\s+)*?(\w+)\s*(?:final\s*)?(?::[^{;]*)?\{', text):
        kind, name = m.group(1), m.group(2)
        access = 'private' if kind == 'class' else 'public'
        depth, i, stmt, methods, friends = 1, m.end(), '', [], []
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
                    friends += friend_class(stmt)
                    stmt = ''
                elif c == ':' and re.fullmatch(r'\s*(public|private|protected)\s*', stmt):
                    access = stmt.strip()
                    stmt = ''
                else:
                    stmt += c
            i += 1
        yield name, sorted(set(methods)), friends


def friend_class(stmt):
    m = re.fullmatch(r'\s*friend\s+(?:class|struct)\s+(?:\w+::)*(\w+)\s*', stmt)
    return [m.group(1)] if m else []


def definitions(text, cls):
    """The lines of each definition of a member function of `cls` in `text`: [(name, lines)]."""
    text = strip_comments(text)
    out = []
    for m in re.finditer(r'(?<![\w:])(?:\w+::)*' + re.escape(cls) +
                         r'::(~?\w+|operator\s*[^\s(]+)\s*\(', text):
        i = match_close(text, m.end() - 1, '(', ')')
        if i is None:
            continue
        body = body_start(text, i + 1)
        if body is None:
            continue
        end = match_close(text, body, '{', '}')
        if end is None:
            continue
        line_start = text.rfind('\n', 0, m.start()) + 1
        out.append((m.group(1), text.count('\n', line_start, end) + 1))
    return out


def match_close(text, i, open_c, close_c):
    """The index of the bracket that closes the one at `i`."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_c:
            depth += 1
        elif text[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    return None


def body_start(text, i):
    """After a parameter list ending before `i`: the index of the function body's `{`, or None
    when this is not a definition (a call, a declaration, a pointer to member)."""
    rest = text[i:]
    m = re.match(r'\s*(?:const\s*)?(?:&{1,2}\s*)?(?:noexcept\s*)?(?:override\s*)?(?:final\s*)?'
                 r'(?:->[^{;]*?)?(\{|:(?!:))', rest)
    if not m:
        return None
    j = i + m.end() - 1
    if text[j] == '{':
        return j
    # A constructor's initializer list: member(...) or member{...}, then the body.
    j += 1
    while j < len(text):
        c = text[j]
        if c == '(':
            j = match_close(text, j, '(', ')')
        elif c == '{':
            prev = text[:j].rstrip()
            if prev and (prev[-1].isalnum() or prev[-1] in '_>'):
                j = match_close(text, j, '{', '}')
            else:
                return j
        elif c == ';':
            return None
        if j is None:
            return None
        j += 1
    return None


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
    ap.add_argument('--max-class-lines', type=int, default=1200)
    ap.add_argument('--classes-in', default='')
    args = ap.parse_args()
    class_dirs = [d for d in args.classes_in.split(',') if d]
    errors = []
    texts = {}  # path relative to SRC_DIR -> text
    for dirpath, _, files in os.walk(args.src):
        for f in sorted(files):
            if not f.endswith(('.h', '.cc')):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, args.src)
            with open(path, errors='replace') as fh:
                texts[rel] = fh.read()
            n = texts[rel].count('\n')
            if n > args.max_lines:
                errors.append(f'src/{rel}: {n} lines (at most {args.max_lines}); split it by responsibility')
    # Every class declared in a header of src/ (a friend may live anywhere), and the capped ones.
    declared = {}  # class name -> public member functions (the first header that declares it)
    capped = []    # (header, class, public member functions, friend classes)
    for rel in sorted(texts):
        if not rel.endswith('.h'):
            continue
        for cls, methods, friends in public_methods(texts[rel]):
            declared.setdefault(cls, methods)
            if rel.split(os.sep)[0] in class_dirs:
                capped.append((rel, cls, methods, friends))
    for rel, cls, methods, friends in capped:
        n = len(methods)
        if n > args.max_public:
            errors.append(f'src/{rel}: class {cls} has {n} public member functions '
                          f'(at most {args.max_public}): {" ".join(methods)}')
        elif friends:
            entry = set(methods)
            for f in friends:
                entry |= {f'{f}::{m}' for m in declared.get(f, [])}
            if len(entry) > args.max_public:
                errors.append(f'src/{rel}: class {cls} has {len(entry)} entry points with its friends '
                              f'{", ".join(friends)} (at most {args.max_public}); give the friends '
                              f'their own state and a narrow interface instead: '
                              f'{" ".join(sorted(entry))}')
        folder = os.path.dirname(rel)
        include = f'#include "{rel.replace(os.sep, "/")}"'
        total, where = 0, []
        for cc in sorted(texts):
            if not cc.endswith('.cc') or cc.endswith(('_test.cc', '_bench.cc', '_fuzz.cc')):
                continue
            if os.path.dirname(cc) != folder and include not in texts[cc]:
                continue
            lines = sum(n for _, n in definitions(texts[cc], cls))
            if lines:
                total += lines
                where.append(f'src/{cc} {lines}')
        if total > args.max_class_lines:
            errors.append(f'src/{rel}: class {cls} has {total} lines of member function definitions '
                          f'(at most {args.max_class_lines}): {", ".join(where)}')
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f'sizes: ok (files <= {args.max_lines} lines; classes in {", ".join(class_dirs) or "-"} '
          f'<= {args.max_public} entry points, friends included, and <= {args.max_class_lines} '
          f'lines of definitions)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
