#!/usr/bin/python3
"""Checks deploy/prometheus/ against the metrics the master and the agent really export.

Fails (exit 1, one line per problem, FILE:LINE: ...) when
  - an alert or recording rule, or a query of the Grafana dashboard, names a paceline_* metric
    that the metrics writers (src/api/metrics.cc, src/agentd/agent_metrics.cc) do not export, or a paceline:* recording
    rule that the rules files do not define. The series of a summary (_sum, _count) and of a
    histogram (_bucket, _sum, _count) count as the metric they belong to;
  - an alert lacks a `for:` or a `summary` or `description` annotation;
  - an alert has no test case in the rules' unit tests where it fires, or none where it does
    not.

The exported names are the string literals of the metrics writers that start with `paceline_`,
up to the first character that cannot be in a metric's name: what its Header() calls and its
series lines print; a Header() call's type says which are summaries and histograms.

With --dashboard-rules-out FILE, it also writes the dashboards' queries as recording rules (their
variables replaced by values), so that `promtool check rules FILE` checks their syntax.

Usage: check-monitoring.py --metrics-source src/api/metrics.cc [--metrics-source ...]
         --rules R.yml [--rules ...]
         --rule-tests T.yml [--dashboard D.json ...]
Runs with Debian's python3 (/usr/bin/python3: python3-yaml).
"""

import argparse
import json
import re
import sys

import yaml

NAME = re.compile(r"(?<![A-Za-z0-9_:])paceline[_:][A-Za-z0-9_:]*")
LITERAL = re.compile(r'"(paceline_[a-z0-9_]+)')
TYPED = re.compile(r'Header\(\s*out,\s*"(paceline_[a-z0-9_]+)",\s*"(summary|histogram)"')
SUFFIXES = {"summary": ("_sum", "_count"), "histogram": ("_bucket", "_sum", "_count")}
# A dashboard's variables, as --dashboard-rules-out replaces them.
VARIABLES = {"$cluster": ".*", "$resource": "cpu", "${datasource}": "prometheus"}


def exported_names(sources):
    """The names the metrics writers print, and their summaries' and histograms' types."""
    names, types = set(), {}
    for source in sources:
        with open(source, encoding="utf-8") as f:
            text = f.read()
        names |= set(LITERAL.findall(text))
        types.update(TYPED.findall(text))
    return names, types


def line_of(text, needle, start=0):
    """1-based line of the first `needle` in `text` at or after line `start` (1 if absent)."""
    lines = text.splitlines()
    for i in range(max(start - 1, 0), len(lines)):
        if needle in lines[i]:
            return i + 1
    for i, line in enumerate(lines):
        if needle in line:
            return i + 1
    return 1


def known(name, exported, types, recorded):
    if ":" in name:
        return name in recorded
    if name in exported:
        return True
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and base in exported and suffix in SUFFIXES.get(types.get(base), ()):
            return True
    return False


def what_it_is(name, source):
    if ":" in name:
        return "a recording rule that the rules files do not define"
    return f"a metric that neither the master nor the agent exports (see {source})"


class Checker:
    def __init__(self, exported, types, source):
        self.exported = exported
        self.types = types
        self.source = source
        self.errors = []

    def error(self, path, line, message):
        self.errors.append(f"{path}:{line}: {message}")

    def names_in(self, path, text, where, expr, recorded, line_hint):
        for name in sorted(set(NAME.findall(expr))):
            if not known(name, self.exported, self.types, recorded):
                self.error(path, line_of(text, name, line_hint),
                           f"{where} names {name}, {what_it_is(name, self.source)}")


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return text, yaml.safe_load(text)


def rules_of(path, doc):
    if not isinstance(doc, dict) or not isinstance(doc.get("groups"), list):
        raise ValueError(f"{path}: expected a rules file with `groups:`")
    for group in doc["groups"]:
        for rule in group.get("rules", []):
            yield rule


def check_rules(checker, paths):
    """Checks the rules files; returns their alerts' names and the recording rules' names."""
    loaded = [(p, *load_yaml(p)) for p in paths]
    recorded = set()
    for path, _, doc in loaded:
        for rule in rules_of(path, doc):
            if "record" in rule:
                recorded.add(rule["record"])
    alerts = []
    for path, text, doc in loaded:
        for rule in rules_of(path, doc):
            label = rule.get("alert") or rule.get("record")
            kind = "alert" if "alert" in rule else "recording rule"
            line = line_of(text, f"{'alert' if 'alert' in rule else 'record'}: {label}")
            checker.names_in(path, text, f"{kind} {label}", str(rule.get("expr", "")), recorded,
                             line)
            if "alert" not in rule:
                continue
            alerts.append((path, line, label))
            if "for" not in rule:
                checker.error(path, line, f"alert {label} has no `for:`")
            annotations = rule.get("annotations") or {}
            for key in ("summary", "description"):
                if not annotations.get(key):
                    checker.error(path, line, f"alert {label} has no `{key}` annotation")
    return alerts, recorded


def check_rule_tests(checker, path, alerts):
    _, doc = load_yaml(path)
    fires, quiet = set(), set()
    for test in (doc or {}).get("tests", []) or []:
        for case in test.get("alert_rule_test", []) or []:
            (fires if case.get("exp_alerts") else quiet).add(case.get("alertname"))
    for rules_path, line, alert in alerts:
        if alert not in fires:
            checker.error(rules_path, line, f"alert {alert} has no test in {path} where it fires")
        if alert not in quiet:
            checker.error(rules_path, line,
                          f"alert {alert} has no test in {path} where it does not fire")


def queries(node, title=""):
    """Yields (panel title, query) for every query string of a Grafana dashboard."""
    if isinstance(node, dict):
        title = node.get("title", title) if "type" in node or "targets" in node else title
        for key, value in node.items():
            if key in ("expr", "query", "definition") and isinstance(value, str):
                yield title, value
            else:
                yield from queries(value, title)
    elif isinstance(node, list):
        for item in node:
            yield from queries(item, title)


def check_dashboard(checker, path, recorded):
    """Checks a dashboard's queries; returns the PromQL ones (of its panels' targets)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        checker.error(path, e.lineno, f"not JSON: {e.msg} (column {e.colno})")
        return []
    promql = []
    for title, query in queries(doc):
        checker.names_in(path, text, f"panel \"{title}\"", query, recorded,
                         line_of(text, json.dumps(query)[1:-1][:60]))
    for title, query in queries(doc.get("panels", [])):
        promql.append((title, query))
    if not promql:
        checker.error(path, 1, "the dashboard has no queries")
    return promql


def dashboard_rules(promql):
    """The dashboards' queries as a rules file, their variables replaced."""
    rules = []
    for i, (title, query) in enumerate(promql):
        for variable, value in VARIABLES.items():
            query = query.replace(variable, value)
        rules.append({"record": f"dashboard:query_{i}", "expr": query,
                      "labels": {"panel": title}})
    return {"groups": [{"name": "dashboard queries", "rules": rules}]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics-source", action="append", required=True)
    parser.add_argument("--rules", action="append", required=True)
    parser.add_argument("--rule-tests", required=True)
    parser.add_argument("--dashboard", action="append", default=[])
    parser.add_argument("--dashboard-rules-out")
    args = parser.parse_args()

    exported, types = exported_names(args.metrics_source)
    if not exported:
        print(f"{args.metrics_source[0]}:1: no paceline_* metric names found", file=sys.stderr)
        return 1
    checker = Checker(exported, types, " and ".join(args.metrics_source))
    try:
        alerts, recorded = check_rules(checker, args.rules)
        check_rule_tests(checker, args.rule_tests, alerts)
    except (ValueError, yaml.YAMLError, OSError) as e:
        print(e, file=sys.stderr)
        return 1
    promql = []
    for dashboard in args.dashboard:
        promql += check_dashboard(checker, dashboard, recorded)
    if args.dashboard_rules_out:
        with open(args.dashboard_rules_out, "w", encoding="utf-8") as f:
            yaml.safe_dump(dashboard_rules(promql), f, sort_keys=False)
    for e in checker.errors:
        print(e, file=sys.stderr)
    if checker.errors:
        return 1
    print(f"monitoring: {len(alerts)} alerts, {len(recorded)} recording rules, "
          f"{len(args.dashboard)} dashboards name only the {len(exported)} exported metrics")
    return 0


if __name__ == "__main__":
    sys.exit(main())
