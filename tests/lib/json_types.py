"""Checks that every key holding a scalar in the JSON documents given
(files of one document, or of one document per line) holds one type of
scalar in all of them: a number everywhere, a string everywhere, or a
boolean everywhere (null stands for any). Prints each key that does not,
with a file of each type, and exits 1; else prints the keys seen."""
import json
import sys


def kind(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return None


def docs(text):
    text = text.strip()
    if not text:
        return []
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def main(paths):
    types = {}

    def walk(v, src):
        if isinstance(v, dict):
            for k, x in v.items():
                t = kind(x)
                if t:
                    types.setdefault(k, {}).setdefault(t, src)
                walk(x, src)
        elif isinstance(v, list):
            for x in v:
                walk(x, src)

    for path in paths:
        with open(path) as f:
            for d in docs(f.read()):
                walk(d, path)
    bad = [k for k, t in types.items() if len(t) > 1]
    for k in sorted(bad):
        print("key %r: %s" % (k, ", ".join(
            "%s in %s" % (t, src) for t, src in sorted(types[k].items()))))
    print("%d scalar keys in %d files, %d with more than one type"
          % (len(types), len(paths), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
