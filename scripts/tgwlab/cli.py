"""Command lines of the scripts: argparse with each script's own help text, printed as
written, and errors in the scripts' form ("scripts/NAME: what is wrong", exit 2)."""

import argparse
import sys


class Parser(argparse.ArgumentParser):
    """-h/--help prints `text`; an unknown argument prints "PROG: unknown argument" and
    the text to stderr, a wrong value "PROG: --flag what it takes"; both exit 2."""

    def __init__(self, prog, text, free_values=(), **kw):
        super().__init__(prog=prog, usage=argparse.SUPPRESS, add_help=False,
                         allow_abbrev=False, **kw)
        self.text = text
        # Options whose value may itself start with "--" (--a-flags "--ack-replicas 1").
        self.free_values = set(free_values)
        self.add_argument("-h", "--help", action="store_true")

    def parse_args(self, args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        joined, i = [], 0
        while i < len(args):
            if args[i] in self.free_values and i + 1 < len(args):
                joined.append(f"{args[i]}={args[i + 1]}")
                i += 2
            else:
                joined.append(args[i])
                i += 1
        parsed, extra = self.parse_known_args(joined, namespace)
        if parsed.help:
            print(self.text, end="" if self.text.endswith("\n") else "\n")
            sys.exit(0)
        if extra:
            print(f"{self.prog}: unknown argument '{extra[0]}'", file=sys.stderr)
            print(self.text, file=sys.stderr, end="" if self.text.endswith("\n") else "\n")
            sys.exit(2)
        return parsed

    def error(self, message):
        # argparse says "argument --devices: takes a whole number"; the scripts say
        # "--devices takes a whole number".
        if message.startswith("argument "):
            message = message[len("argument "):].replace(": ", " ", 1)
        fail(self.prog, message)


def whole(text):
    """A whole number (0 included), as the scripts' --devices, --seconds... take."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError("takes a whole number")
    return int(text)


def positive(text):
    """A whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError("takes a whole number of at least 1")
    return int(text)


def fail(prog, message, code=2):
    """PROG: message on stderr, and exit `code`."""
    print(f"{prog}: {message}", file=sys.stderr)
    sys.exit(code)
