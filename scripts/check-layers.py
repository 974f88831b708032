#!/usr/bin/env python3
"""Checks the dependency rules of docs/layers.ini against the code and the build.

  check-layers.py --src SRC_DIR --rules docs/layers.ini [--build BUILD_DIR]

Include edges: every `#include` of every file under SRC_DIR/<folder>/ must name a header of the
same folder or of a folder in its `uses` (`tests_use` too for test files), and nothing that
its `never` forbids. Link edges (with --build, from BUILD/link-graph.txt, which CMake writes at configure time):
every Paceline target defined under SRC_DIR/<folder>/ may link only targets of allowed folders,
and nothing named in `never` may be on its link line, directly or through the Paceline targets
it links (what third-party libraries link internally is theirs; a test target is held to its
direct links only). Prints one line per broken
rule with the file and line or the target path, and exits 1 if there is any.
"""
import argparse
import configparser
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
TEST_FILE = re.compile(r'(_test\.cc|_bench\.cc|_fuzz\.cc)$|(^|/)test_util|(^|/)testing/|_test_util|_testing')


def load_rules(path):
    cp = configparser.ConfigParser()
    cp.optionxform = str
    with open(path) as f:
        cp.read_file(f)
    folders, externals = {}, {}
    for name in cp.sections():
        sec = cp[name]
        if name.startswith('external:'):
            externals[name.split(':', 1)[1]] = {
                'includes': sec.get('includes', '').split(),
                'targets': sec.get('targets', '').split(),
            }
        else:
            folders[name] = {
                'uses': set(sec.get('uses', '').split()),
                'never': set(sec.get('never', '').split()),
                'tests_use': set(sec.get('tests_use', '').split()),
            }
    for name, f in folders.items():
        for dep in f['uses'] | f['never'] | f['tests_use']:
            if dep not in folders and dep not in externals:
                sys.exit(f'{path}: [{name}] names unknown folder or external {dep!r}')
    return folders, externals


def external_of_include(header, externals):
    for name, ext in externals.items():
        for prefix in ext['includes']:
            if header == prefix or (prefix.endswith('/') and header.startswith(prefix)):
                return name
    return None


def check_includes(src, folders, externals):
    errors = []
    for folder in sorted(os.listdir(src)):
        root = os.path.join(src, folder)
        if not os.path.isdir(root):
            continue
        if folder not in folders:
            errors.append(f'src/{folder}/: folder has no section in the rules')
            continue
        rule = folders[folder]
        for dirpath, _, files in os.walk(root):
            for fname in sorted(files):
                if not fname.endswith(('.h', '.cc')):
                    continue
                path = os.path.join(dirpath, fname)
                rel = os.path.relpath(path, src)
                allowed = rule['uses'] | {folder}
                if TEST_FILE.search(rel):
                    allowed = allowed | rule['tests_use']
                with open(path, errors='replace') as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        header = m.group(2)
                        ext = external_of_include(header, externals)
                        where = f'src/{rel}:{lineno}'
                        if ext is not None:
                            if ext in rule['never']:
                                errors.append(f'{where}: includes {header}: {folder} never uses {ext}')
                            elif ext in folders or ext == 'proto':
                                if ext not in allowed:
                                    errors.append(f'{where}: includes {header}: {folder} does not use {ext}')
                            continue
                        top = header.split('/', 1)[0]
                        if m.group(1) == '"' and '/' in header and top in folders and top not in allowed:
                            errors.append(f'{where}: includes {header}: {folder} may not use {top} '
                                          f'(allowed: {" ".join(sorted(allowed - {folder})) or "nothing"})')
    return errors


def targets_by_folder(src):
    """Paceline targets defined in src/<folder>/CMakeLists.txt (and below)."""
    owner = {}
    decl = re.compile(r'\b(add_library|add_executable|paceline_test|paceline_benchmark|paceline_fuzzer)\(\s*([A-Za-z0-9_\-]+)')
    for folder in os.listdir(src):
        for dirpath, _, files in os.walk(os.path.join(src, folder)):
            if 'CMakeLists.txt' in files:
                with open(os.path.join(dirpath, 'CMakeLists.txt')) as f:
                    for kind, name in decl.findall(f.read()):
                        owner[name] = (folder, kind in ('paceline_test', 'paceline_benchmark', 'paceline_fuzzer'))
    return owner


def link_graph(build):
    """Direct link edges from BUILD/link-graph.txt (written by CMake at configure time)."""
    edges = {}
    with open(os.path.join(build, 'link-graph.txt')) as f:
        for line in f:
            if ':' not in line:
                continue
            target, deps = line.split(':', 1)
            edges[target.strip()] = set(deps.split())
    return edges


def check_links(src, build, folders, externals):
    owner = targets_by_folder(src)
    edges = link_graph(build)
    ext_of_target = {t: name for name, e in externals.items() for t in e['targets']}
    errors = []
    for target, (folder, is_test) in sorted(owner.items()):
        if folder not in folders or target not in edges and target not in owner:
            continue
        rule = folders[folder]
        allowed = rule['uses'] | {folder} | (rule['tests_use'] if is_test else set())
        # Walk the Paceline targets this one links; stop at third-party targets.
        seen, stack, path = set(), [target], {target: target}
        while stack:
            t = stack.pop()
            for dep in sorted(edges.get(t, ())):
                if dep in seen:
                    continue
                seen.add(dep)
                path[dep] = f'{path[t]} -> {dep}'
                ext = ext_of_target.get(dep)
                if is_test and t != target:
                    continue  # a test's helpers (e.g. the store's memory backend) bring their own
                if ext in rule['never']:
                    errors.append(f'{target}: links {ext} ({path[dep]})')
                if dep in owner:
                    dep_folder = owner[dep][0]
                    if dep_folder in rule['never'] and dep_folder not in allowed:
                        errors.append(f'{target}: links {dep_folder} ({path[dep]})')
                    elif t == target and dep_folder not in allowed:
                        errors.append(f'{target}: links {dep} of {dep_folder}, which {folder} does not use')
                    stack.append(dep)
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--src', required=True)
    ap.add_argument('--rules', required=True)
    ap.add_argument('--build')
    args = ap.parse_args()
    folders, externals = load_rules(args.rules)
    errors = check_includes(args.src, folders, externals)
    if args.build:
        errors += check_links(args.src, args.build, folders, externals)
    for e in errors:
        print(e)
    if errors:
        print(f'{len(errors)} dependency rule(s) broken; the rules are in {args.rules} '
              '(docs/architecture.md explains them)')
        return 1
    print('dependency rules: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
