"""Reading connections:registry and the reverse indexes of every key shard."""

from .. import redis_client
from .checks import owners, registry_mismatches


class RegistryReader:
    """Reads the registry through a client of the run's Redis; in a cluster, over the
    key shards whose count tgw wrote to tgw:telemetry-shards."""

    def __init__(self, clustered):
        self.clustered = clustered
        self._prefixes = None

    def prefixes(self, r):
        """The key shards' prefixes: [""] outside a cluster; None while unreadable."""
        if not self.clustered:
            return [""]
        if self._prefixes is None:
            count = redis_client.attempt(r.get, "tgw:telemetry-shards")
            if count is None:
                return None
            self._prefixes = redis_client.shard_prefixes(int(count))
        return self._prefixes

    def entries(self, r):
        """connections:registry (every shard's) as {imei: owner}; None when unreadable."""
        prefixes = self.prefixes(r)
        if prefixes is None:
            return None
        out = {}
        for prefix in prefixes:
            reg = redis_client.attempt(r.hgetall, prefix + "connections:registry")
            if reg is None:
                return None
            out.update(reg)
        return out

    def diff(self, r, truth, leave_out, live_ids):
        """The registry against truth (IMEI -> instance id of the connected devices):
        {"mismatches", "connected", "entries"}, or None when Redis could not be read.
        leave_out() and live_ids(), asked once the registry is read: the IMEIs not to
        compare, and the ids of the instances alive."""
        reg = self.entries(r)
        if reg is None:
            return None
        skip = leave_out()
        if skip:
            reg = {i: o for i, o in reg.items() if i not in skip}
        live = live_ids()
        members = {}
        for inst_id in sorted(live | set(owners(reg))):
            members[inst_id] = set()
            for prefix in self.prefixes(r):
                got = redis_client.attempt(r.smembers, f"{prefix}instance:devices:{inst_id}")
                if got is None:
                    return None
                members[inst_id] |= set(got)
        dead_keys = redis_client.attempt(r.keys, "*instance:devices:*") or []
        return {"mismatches": registry_mismatches(truth, reg, members, dead_keys, live),
                "connected": len(truth), "entries": len(reg)}
