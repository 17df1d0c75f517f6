"""Test hosts in network namespaces, for partition tests: each host is an `ip netns` with
two links, made and removed by the test.

- a client link: a veth to a bridge in the root namespace that also carries an address, so
  processes on this machine (API servers on loopback, the test) reach the host;
- a peer link: a veth to a second bridge without a root-namespace address, which only the
  hosts share (etcd's peer traffic).

cut(i) takes host i's peer link down (it keeps its client link: the processes that use it
still reach it), heal(i) brings it back. Addresses come from two 10.199.x.0/24 subnets
nothing on the machine routes; nothing is routed off the machine (no default route in the
namespaces, no forwarding set up). remove() deletes every namespace, link and bridge it
made, also after a failure; processes started in a namespace must be stopped first.
"""

import os
import random
import subprocess

import real_node


def _ip(*args, check=True):
    return subprocess.run(["ip"] + list(args), capture_output=True, text=True, check=check)


class NetnsHosts:
    def __init__(self, count):
        self.count = count
        tag = "%05x" % random.randrange(1 << 20)
        self.tag = tag
        self.client_subnet, self.peer_subnet = real_node.free_subnets(2)
        self.client_bridge = "shc" + tag
        self.peer_bridge = "shp" + tag
        self.namespaces = ["shn%s-%d" % (tag, i) for i in range(count)]
        self._made = []  # what remove() undoes, in reverse

    def client_ip(self, i):
        return self.client_subnet.rsplit(".", 1)[0] + ".%d" % (i + 1)

    def peer_ip(self, i):
        return self.peer_subnet.rsplit(".", 1)[0] + ".%d" % (i + 1)

    def _peer_link(self, i):
        return "shq%s%d" % (self.tag, i)  # root side of host i's peer veth

    def exec_prefix(self, i):
        return ["ip", "netns", "exec", self.namespaces[i]]

    def create(self):
        try:
            gw = self.client_subnet.rsplit(".", 1)[0] + ".254/24"
            for bridge in (self.client_bridge, self.peer_bridge):
                _ip("link", "add", bridge, "type", "bridge")
                self._made.append(("link", bridge))
                _ip("link", "set", bridge, "up")
            _ip("addr", "add", gw, "dev", self.client_bridge)
            for i, ns in enumerate(self.namespaces):
                _ip("netns", "add", ns)
                self._made.append(("netns", ns))
                _ip("-n", ns, "link", "set", "lo", "up")
                for kind, bridge, addr, outside in (
                        ("c", self.client_bridge, self.client_ip(i), "shr%s%d" % (self.tag, i)),
                        ("p", self.peer_bridge, self.peer_ip(i), self._peer_link(i))):
                    inside = "eth" + kind
                    _ip("link", "add", outside, "type", "veth", "peer", "name", inside, "netns", ns)
                    self._made.append(("link", outside))
                    _ip("link", "set", outside, "master", bridge)
                    _ip("link", "set", outside, "up")
                    _ip("-n", ns, "addr", "add", addr + "/24", "dev", inside)
                    _ip("-n", ns, "link", "set", inside, "up")
        except BaseException:
            self.remove()
            raise
        return self

    def cut(self, i):
        _ip("link", "set", self._peer_link(i), "down")

    def heal(self, i):
        _ip("link", "set", self._peer_link(i), "up")

    def remove(self):
        for kind, name in reversed(self._made):
            if kind == "netns":
                _ip("netns", "del", name, check=False)
            else:
                _ip("link", "del", name, check=False)
        self._made = []

    def leftovers(self):
        """Names of this object's namespaces and links that still exist (for tests)."""
        left = [ns for ns in self.namespaces if os.path.exists("/run/netns/" + ns)]
        links = set(os.listdir("/sys/class/net"))
        left += [l for l in (self.client_bridge, self.peer_bridge) if l in links]
        return left
