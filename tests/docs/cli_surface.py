#!/usr/bin/env python3
"""The `tgw` command line as its --help pages show it, held against what it promises.

    cli_surface.py env  TGW_BINARY   every option of every subcommand reads a TGW_*
                                     environment variable (README, OPERATIONS)
    cli_surface.py docs TGW_BINARY SOURCE_DIR
                                     every flag a --help page names is in the docs,
                                     and every `tgw ... --flag` the docs write exists

Exit status 0 when the promise holds; otherwise each breach on a line of its own and 1.
"""
import os
import re
import subprocess
import sys

OPTION = re.compile(r"^  (-\S*)")
SUBCOMMAND = re.compile(r"^  ([a-z][\w-]*)\s{2,}")


def help_page(binary, path):
    out = subprocess.run([binary, *path, "--help"], capture_output=True, text=True, timeout=30)
    return out.stdout


def walk(binary, path=()):
    """Yields (path, option line) for every option of every (sub)command."""
    page = help_page(binary, path)
    section = None
    subs = []
    for line in page.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            section = line[:-1]
            continue
        if section == "Options":
            m = OPTION.match(line)
            if m:
                # "-n,--count UINT ...", "--reconnect,--no-reconnect{false}": every name.
                names = re.findall(r"--[A-Za-z][\w-]*", m.group(1).split("{")[0])
                for name in names:
                    yield path, name, line
        elif section == "Subcommands":
            m = SUBCOMMAND.match(line)
            if m:
                subs.append(m.group(1))
    for sub in subs:
        yield from walk(binary, path + (sub,))


def check_env(binary):
    breaches = []
    for path, flag, line in walk(binary):
        if flag in ("--help", "--version"):
            continue
        if "(Env:TGW_" not in line:
            breaches.append(f"tgw {' '.join(path)} {flag}: reads no TGW_* variable")
    return breaches


# Flags of other programs that the docs show next to tgw's, each with its owner.
FOREIGN = {
    "--proxy-header": "gcloud's TCP proxy",
    "--enable-all": "a TLS library's configure script",
}


# Flags of the project's own scripts (the entry points in scripts/ and their Python
# package below it) and benchmark binaries.
def script_files(source):
    for folder in (os.path.join(source, "scripts"), os.path.join(source, "tests", "bench")):
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if os.path.isfile(path) and (os.access(path, os.X_OK) or name.endswith((".cpp", ".py"))):
                yield path
    for folder, dirs, names in os.walk(os.path.join(source, "scripts")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if folder != os.path.join(source, "scripts"):
            yield from (os.path.join(folder, n) for n in names if n.endswith(".py"))


def script_flags(source):
    flags = set(FOREIGN)
    for path in script_files(source):
        with open(path, errors="replace") as f:
            flags.update(re.findall(r"(--[a-z][\w-]*)", f.read()))
    return flags


def doc_files(source):
    yield os.path.join(source, "README.md")
    docs = os.path.join(source, "docs")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".md"):
            yield os.path.join(docs, name)


def check_docs(binary, source):
    by_command = {}
    for path, flag, _ in walk(binary):
        by_command.setdefault(path, set()).add(flag)
    every = set().union(*by_command.values())
    text = {f: open(f).read() for f in doc_files(source)}
    all_text = "\n".join(text.values())
    breaches = []
    for path, flags in sorted(by_command.items()):
        for flag in sorted(flags - {"--help", "--version"}):
            if not re.search(re.escape(flag) + r"(?![\w-])", all_text):
                breaches.append(f"tgw {' '.join(path)} {flag}: in --help, in no doc")
    others = script_flags(source)
    # `tgw sub [sub] ... --flag` written in a doc: the flag must exist on that command
    # line's subcommand.
    commands = {" ".join(p): f for p, f in by_command.items()}
    for name, body in text.items():
        for m in re.finditer(r"\btgw ((?:[a-z][\w-]* ?){1,3})([^`\n|]*)", body):
            words = m.group(1).split()
            # The deepest subcommand the words name: `tgw api token add`, `tgw command
            # send`, `tgw serve`.
            path = next((" ".join(words[:n]) for n in (3, 2) if " ".join(words[:n]) in commands),
                        words[0])
            if path not in commands:
                continue
            for flag in re.findall(r"(?<![\w-])(--[a-zA-Z][\w-]*)", m.group(2)):
                # Top-level options (--config) are taken after a subcommand too.
                if flag not in commands[path] | commands[""] and flag != "--help":
                    line = body.count("\n", 0, m.start()) + 1
                    breaches.append(f"{os.path.relpath(name, source)}:{line}: tgw {path} {flag}: "
                                    f"no such flag")
        for flag in set(re.findall(r"`(--[a-zA-Z][\w-]*\w)(?![\w*-])", body)):
            if flag not in every and flag not in others:
                breaches.append(f"{os.path.relpath(name, source)}: `{flag}`: not a flag of tgw "
                                f"or of a script in scripts/")
    return breaches


def main(argv):
    if len(argv) >= 3 and argv[1] == "env":
        breaches = check_env(argv[2])
    elif len(argv) >= 4 and argv[1] == "docs":
        breaches = check_docs(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for b in breaches:
        print(b)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
