"""The actors' unit tests link no adapter's third-party library: the link command of
the test binary (ninja -t commands) names none of hiredis, OpenSSL, libpq, libpcap or
civetweb. Usage: actor_unit_links_test.py NINJA BUILD_DIR TARGET"""
import re
import subprocess
import sys

FORBIDDEN = re.compile(r"hiredis|libssl|-lssl\b|libcrypto|-lcrypto\b|libpq\b|-lpq\b|pcap|civetweb")


def link_command(ninja, build, target):
    commands = subprocess.run([ninja, "-C", build, "-t", "commands", target], check=True,
                              capture_output=True, text=True).stdout.splitlines()
    links = [c for c in commands if re.search(r"\s-o\s+" + re.escape(target) + r"(\s|$)", c)]
    if not links:
        sys.exit(f"actor_unit_links: no link command for {target} in `ninja -t commands`")
    return links[-1]


def main():
    ninja, build, target = sys.argv[1:4]
    command = link_command(ninja, build, target)
    found = sorted(set(FORBIDDEN.findall(command)))
    if found:
        print(f"{target} links {', '.join(found)}: the actors reach adapters through "
              f"ports only (docs/ARCHITECTURE.md)\n{command}")
        return 1
    print(f"{target}: its link line names none of hiredis, OpenSSL, libpq, libpcap, civetweb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
