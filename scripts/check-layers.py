#!/usr/bin/env python3
"""Checks the dependency rules of docs/layers.ini against the code and the build.

  check-layers.py --src SRC_DIR --rules docs/layers.ini [--build BUILD_DIR]

Sections: a section names a folder of SRC_DIR (`[agent]`), one of its sub-folders
(`[agent/host]`), or, with `files = STEM ...`, a set of files directly in a folder
(`[wire/core]`: their .h and .cc, and their *_test.cc, *_bench.cc and *_fuzz.cc). A file is
held to the most specific section that covers it. A folder with a section for one sub-folder
must have one for each of its sub-folders. Seen from outside a folder, naming it in `uses` or
`never` names its sub-sections too; inside it, each part names the parts it uses.

Include edges: every `#include` of every file under SRC_DIR/<folder>/ must name a header of the
same section or of a section in its `uses` (`tests_use` too for test files), and nothing that
its `never` forbids. Link edges (with --build, from BUILD/link-graph.txt, which CMake writes at
configure time): every Paceline target defined under SRC_DIR/<folder>/ belongs to the most
specific section that covers all its source files (the folder's, when they are spread over
several), and may link only targets of allowed sections; nothing named in `never` may be on its
link line, directly or through the Paceline targets it links (what third-party libraries link
internally is theirs; a test target is held to its direct links only). Prints one line per
broken rule with the file and line or the target path, and exits 1 if there is any.
"""
import argparse
import configparser
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
TEST_FILE = re.compile(r'(_test\.cc|_bench\.cc|_fuzz\.cc)$|(^|/)test_util|(^|/)testing/|_test_util|_testing')
TEST_SUFFIX = re.compile(r'_(test|bench|fuzz)$')


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
                'files': set(sec.get('files', '').split()),
            }
    for name, f in folders.items():
        if '/' in name and name.split('/', 1)[0] not in folders:
            sys.exit(f'{path}: [{name}] is a part of a folder that has no section')
        for dep in f['uses'] | f['never'] | f['tests_use']:
            if dep not in folders and dep not in externals:
                sys.exit(f'{path}: [{name}] names unknown folder or external {dep!r}')
    return folders, externals


def section_of(rel, folders):
    """The most specific section covering the file SRC/rel ('agent/host/proc_stat.h'), or None."""
    parts = rel.split('/')
    best = parts[0] if parts[0] in folders else None
    if best is None:
        return None
    for i in range(2, len(parts)):  # sub-folders
        name = '/'.join(parts[:i])
        if name in folders and not folders[name]['files']:
            best = name
    parent = '/'.join(parts[:-1])
    stem = TEST_SUFFIX.sub('', parts[-1].rsplit('.', 1)[0])
    for name, rule in folders.items():  # files sections of the file's own folder
        if rule['files'] and name.rsplit('/', 1)[0] == parent and stem in rule['files']:
            best = name
    return best


def ancestors(name):
    parts = name.split('/')
    return ['/'.join(parts[:i]) for i in range(1, len(parts))]


def covers(names, section, seen_from):
    """Whether `names` (a uses or never list) names `section`: itself, or, seen from outside
    it, a folder above it."""
    if section in names:
        return True
    return any(a in names and not (seen_from == a or seen_from.startswith(a + '/'))
               for a in ancestors(section))


def check_sections(src, folders):
    """Every sub-folder of a folder with sub-sections has one; every files section's files exist."""
    errors = []
    for name, rule in sorted(folders.items()):
        if '/' not in name:
            continue
        parent = name.rsplit('/', 1)[0]
        if rule['files']:
            present = {TEST_SUFFIX.sub('', f.rsplit('.', 1)[0])
                       for f in os.listdir(os.path.join(src, parent))
                       if os.path.isfile(os.path.join(src, parent, f))}
            for stem in sorted(rule['files'] - present):
                errors.append(f'[{name}]: no file src/{parent}/{stem}.h or .cc')
            continue
        if not os.path.isdir(os.path.join(src, name)):
            errors.append(f'[{name}]: no folder src/{name}/')
            continue
        for sub in sorted(os.listdir(os.path.join(src, parent))):
            sub_name = f'{parent}/{sub}'
            if os.path.isdir(os.path.join(src, sub_name)) and sub_name not in folders:
                errors.append(f'src/{sub_name}/: sub-folder has no section in the rules '
                              f'(the other sub-folders of {parent} have one)')
    return sorted(set(errors))


def check_includes(src, folders, externals):
    errors = []
    for folder in sorted(os.listdir(src)):
        root = os.path.join(src, folder)
        if not os.path.isdir(root):
            continue
        if folder not in folders:
            errors.append(f'src/{folder}/: folder has no section in the rules')
            continue
        for dirpath, _, files in os.walk(root):
            for fname in sorted(files):
                if not fname.endswith(('.h', '.cc')):
                    continue
                path = os.path.join(dirpath, fname)
                rel = os.path.relpath(path, src)
                section = section_of(rel, folders)
                rule = folders[section]
                allowed = rule['uses'] | {section}
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
                                errors.append(f'{where}: includes {header}: {section} never uses {ext}')
                            elif ext in folders or ext == 'proto':
                                if ext not in allowed:
                                    errors.append(f'{where}: includes {header}: {section} does not use {ext}')
                            continue
                        if m.group(1) != '"' or '/' not in header:
                            continue
                        target = section_of(header, folders)
                        if target is None or covers(allowed, target, section):
                            continue
                        if covers(rule['never'], target, section):
                            errors.append(f'{where}: includes {header}: {section} never uses {target}')
                        else:
                            errors.append(f'{where}: includes {header}: {section} may not use {target} '
                                          f'(allowed: {" ".join(sorted(allowed - {section})) or "nothing"})')
    return errors


def external_of_include(header, externals):
    for name, ext in externals.items():
        for prefix in ext['includes']:
            if header == prefix or (prefix.endswith('/') and header.startswith(prefix)):
                return name
    return None


def common_section(sections, folder, folders):
    """The most specific section above or equal to all of `sections` (at least `folder`)."""
    best = folder
    names = [s.split('/') for s in sections if s]
    if names:
        prefix = os.path.commonprefix(names)
        for i in range(len(prefix), 1, -1):
            if '/'.join(prefix[:i]) in folders:
                return '/'.join(prefix[:i])
    return best


def targets_by_folder(src, folders):
    """Paceline targets defined in src/<folder>/CMakeLists.txt (and below): target -> (section,
    is_test), the section being the most specific one that covers all its source files."""
    owner = {}
    decl = re.compile(r'\b(add_library|add_executable|paceline_test|paceline_benchmark|paceline_fuzzer)'
                      r'\(\s*([A-Za-z0-9_\-]+)([^)]*)\)')
    for folder in os.listdir(src):
        for dirpath, _, files in os.walk(os.path.join(src, folder)):
            if 'CMakeLists.txt' in files:
                with open(os.path.join(dirpath, 'CMakeLists.txt')) as f:
                    for kind, name, args in decl.findall(f.read()):
                        sources = [os.path.relpath(os.path.join(dirpath, a), src)
                                   for a in args.split() if a.endswith('.cc') and '$' not in a]
                        section = common_section([section_of(s, folders) for s in sources], folder,
                                                 folders)
                        owner[name] = (section, kind in ('paceline_test', 'paceline_benchmark', 'paceline_fuzzer'))
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
    owner = targets_by_folder(src, folders)
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
                    if covers(rule['never'], dep_folder, folder) and not covers(allowed, dep_folder, folder):
                        errors.append(f'{target}: links {dep_folder} ({path[dep]})')
                    elif t == target and not covers(allowed, dep_folder, folder):
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
    errors = check_sections(args.src, folders)
    errors += check_includes(args.src, folders, externals)
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
